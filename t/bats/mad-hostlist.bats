#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-hostlist as a user runs it: commands, input sources, errors, limits.

bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	load_helpers
	unset SLURM_JOB_NODELIST SLURM_NODELIST
}

@test "expand keeps order and duplicates" {
	run mad-hostlist expand 'n[3,1-2],n1,gpu[08-10]-ib'
	assert_success
	assert_output $'n3\nn1\nn2\nn1\ngpu08-ib\ngpu09-ib\ngpu10-ib'
}

@test "expand --sep joins names and ends the line" {
	run mad-hostlist --sep=' ' expand 'n[1-3]'
	assert_success
	assert_output 'n1 n2 n3'
	run bash -c "mad-hostlist --sep='\\0' expand 'n[1-3]' | xargs -0 echo"
	assert_output 'n1 n2 n3'
}

@test "compress, count and nth" {
	run mad-hostlist compress 'n3 n1 n2 n1'
	assert_output 'n[3,1-2,1]'
	run mad-hostlist --sort --uniq compress 'n3 n1 n2 n1 gpu2 gpu1'
	assert_output 'gpu[1-2],n[1-3]'
	run mad-hostlist count 'n[1-1000000000000]'
	assert_output '1000000000000'
	run mad-hostlist nth 0 'rack[1-2]-n[01-04]'
	assert_output 'rack1-n01'
	run mad-hostlist nth 7 'rack[1-2]-n[01-04]'
	assert_output 'rack2-n04'
	run mad-hostlist --uniq count 'n1,n1,n2'
	assert_output '2'
	run mad-hostlist --sort nth 0 'n9,n10,n1'
	assert_output 'n1'
}

@test "several arguments are one list" {
	run mad-hostlist expand 'n[1-2]' m1
	assert_output $'n1\nn2\nm1'
}

@test "input from SLURM_JOB_NODELIST, then SLURM_NODELIST" {
	SLURM_JOB_NODELIST='a[1-2]' SLURM_NODELIST='b1' run mad-hostlist count
	assert_output '2'
	SLURM_NODELIST='b[1-3]' run mad-hostlist count
	assert_output '3'
}

@test "input from standard input: '-' always, and when no env is set" {
	run bash -c "printf 'n1\nn2\n\nn3\n' | SLURM_JOB_NODELIST=x mad-hostlist compress -"
	assert_output 'n[1-3]'
	run bash -c "printf 'n1 n2' | mad-hostlist count"
	assert_output '2'
}

@test "an empty list is an error, not an empty answer" {
	run bash -c "mad-hostlist count < /dev/null"
	assert_failure 1
	assert_output --partial "the host list is empty"
}

@test "large standard input is read whole (no 1 MiB cap)" {
	run bash -c "seq -f 'node%06g' 1 200000 | mad-hostlist --sort --uniq compress -"
	assert_success
	assert_output 'node[000001-200000]'
}

@test "a bad list: exit 1, a message naming the input and the bad part, no output" {
	run --separate-stderr mad-hostlist expand 'ok[1-2],node[5-3]'
	assert_failure 1
	assert_output ''
	[[ $stderr == "mad-hostlist: bad host list in the argument: 'node[5-3]' (byte 13): range '5-3' goes down"* ]]

	SLURM_JOB_NODELIST='n[1-' run --separate-stderr mad-hostlist nth 0
	assert_failure 1
	assert_output ''
	[[ $stderr == *"in SLURM_JOB_NODELIST: 'n[1-' (byte 4): '[' is never closed"* ]]
}

@test "the bad lists scontrol accepts silently or with exit 0 fail here" {
	# shellcheck disable=SC2016 # '$(id)' is the literal bad input
	for bad in 'n[5-3]' 'n[1-3]]' 'n[1,,2]' 'n[-1]' 'n[1-10/3]' 'n[ 1-2]' \
		'n$(id)' 'feature{gpu}' 'n[1-]' 'x]y' 'n[1a-3]'; do
		run mad-hostlist expand "$bad"
		assert_failure 1
		assert_output --partial 'mad-hostlist: bad host list'
	done
}

@test "control bytes in a bad list are shown escaped" {
	run mad-hostlist expand $'n\x1b[31m'
	assert_failure 1
	assert_output --partial "'\\x1b' is not allowed"
}

@test "--max-hosts counts before expanding" {
	run mad-hostlist --max-hosts=1000 expand 'n[1-1000000000000000]'
	assert_failure 1
	assert_output --partial 'has 1000000000000000 hosts, more than --max-hosts=1000'
	run mad-hostlist --max-hosts=3 count 'n[1-3]'
	assert_success
}

@test "usage errors exit 64" {
	run mad-hostlist
	assert_failure 64
	run mad-hostlist frobnicate n1
	assert_failure 64
	assert_output --partial "unknown command 'frobnicate'"
	run mad-hostlist nth x n1
	assert_failure 64
	assert_output --partial "nth: 'x' is not a host index"
	run mad-hostlist nth
	assert_failure 64
	run mad-hostlist --max-hosts=0 count n1
	assert_failure 64
	run mad-hostlist --max-hosts=-5 count n1
	assert_failure 64
	run mad-hostlist --sep='\q' expand n1
	assert_failure 64
	run mad-hostlist --bogus count n1
	assert_failure 64
}

@test "nth out of range is an error, not an empty line" {
	run --separate-stderr mad-hostlist nth 4 'n[1-4]'
	assert_failure 1
	assert_output ''
	[[ $stderr == *"index 4 is out of range: the list has 4 hosts"* ]]
}

@test "a write error is reported (exit 74)" {
	run bash -c "mad-hostlist expand 'n[1-100000]' > /dev/full"
	assert_failure 74
	assert_output --partial 'write error'
}

@test "--help and --version" {
	run mad-hostlist --help
	assert_success
	assert_output --partial 'Usage: mad-hostlist'
	run mad-hostlist --version
	assert_output --regexp '^mad-hostlist \(mad-spank\) [0-9.]+'
}

@test "expand --format=deepspeed and mpi: one 'host slots=N' line per node, in rank order" {
	run mad-hostlist expand --format=deepspeed --slots=8 'gpu[09-11]-ib'
	assert_success
	assert_output $'gpu09-ib slots=8\ngpu10-ib slots=8\ngpu11-ib slots=8'
	# SLURM's order, not a sorted one: line K is node rank K
	run mad-hostlist expand --format=mpi --slots=2 'n[3,1-2]'
	assert_output $'n3 slots=2\nn1 slots=2\nn2 slots=2'
	SLURM_JOB_NODELIST='a[1-2]' run mad-hostlist expand --format=mpi --slots=1
	assert_output $'a1 slots=1\na2 slots=1'
}

@test "expand --format=json: an array of {host, slots}, one node a line, that python3 reads back" {
	run mad-hostlist expand --format=json --slots=4 'n[1-3]'
	assert_success
	assert_line --index 1 '  {"host": "n1", "slots": 4},'
	[[ ${#lines[@]} == 5 ]]
	run bash -c "mad-hostlist expand --format=json --slots=4 'n[1-3]' |
		python3 -c 'import json,sys; print(json.load(sys.stdin))'"
	assert_output "[{'host': 'n1', 'slots': 4}, {'host': 'n2', 'slots': 4}, {'host': 'n3', 'slots': 4}]"
}

@test "hostfile slots: --slots, else MAD_GPUS_PER_NODE (0 counts as 1), else 1" {
	MAD_GPUS_PER_NODE=8 run mad-hostlist expand --format=deepspeed n1
	assert_output 'n1 slots=8'
	MAD_GPUS_PER_NODE=8 run mad-hostlist expand --format=deepspeed --slots=2 n1
	assert_output 'n1 slots=2'
	MAD_GPUS_PER_NODE='' run mad-hostlist expand --format=deepspeed n1
	assert_output 'n1 slots=1'
	# a node without GPUs (a CPU-only job on spur 0.12) still runs one process
	MAD_GPUS_PER_NODE=0 run mad-hostlist expand --format=mpi n1
	assert_output 'n1 slots=1'
	unset MAD_GPUS_PER_NODE
	run mad-hostlist expand --format=json n1
	assert_line --index 1 '  {"host": "n1", "slots": 1}'
}

@test "bad --format, --slots or MAD_GPUS_PER_NODE: exit 64, the value named, nothing on stdout" {
	local args
	for args in "--format=hosts expand n1" "--format= expand n1" "--format=mpi --slots=0 expand n1" \
		"--format=mpi --slots=-1 expand n1" "--format=mpi --slots=2x expand n1" \
		"--format=mpi --slots=1000001 expand n1" "--slots=2 expand n1" "--format=mpi count n1" \
		"--format=json nth 0 n1" "--format=mpi --sep=, expand n1"; do
		# shellcheck disable=SC2086 # the words of one case
		run --separate-stderr mad-hostlist $args
		assert_failure 64
		[[ -z $output ]] || { echo "stdout for '$args': $output"; false; }
	done
	run --separate-stderr mad-hostlist --format=hosts expand n1
	[[ $stderr == *"--format: 'hosts' is not a hostfile format (deepspeed, mpi or json)"* ]]
	run --separate-stderr mad-hostlist --format=mpi --slots=2x expand n1
	[[ $stderr == *"--slots: '2x' is not a number of slots"* ]]
	MAD_GPUS_PER_NODE=eight run --separate-stderr mad-hostlist --format=mpi expand n1
	assert_failure 64
	[[ -z $output && $stderr == *"MAD_GPUS_PER_NODE='eight' is not a number of slots"* ]]
}

@test "a hostfile names each node once: a repeated host fails naming it, --uniq keeps the first" {
	run --separate-stderr mad-hostlist --format=deepspeed expand 'n[1-3],n2'
	assert_failure 1
	[[ -z $output && $stderr == *"host 'n2' is in the list twice"* ]]
	run mad-hostlist --uniq --format=deepspeed --slots=1 expand 'n[1-3],n2'
	assert_output $'n1 slots=1\nn2 slots=1\nn3 slots=1'
	run --separate-stderr mad-hostlist --format=mpi expand 'n[1-'
	assert_failure 1
	[[ -z $output ]]
}
