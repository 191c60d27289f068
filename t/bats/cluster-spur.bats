#!/usr/bin/env bats
# End to end "as spur would": spur's sbatch (t/spur/bin) over the real test
# cluster, each node's launch through spur's SPANK host (t/spur/spank-host)
# with mad.so, job scripts using mad-env and mad-mark; as the test user.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	[[ -r ${MAD_CLUSTER_DIR:-/tmp/mad-cluster}/env.sh ]] || return 0
	load ../lib.sh
	use_cluster
	plugstack_save
	: >"$MAD_CLUSTER_PLUGSTACK" # SLURM itself runs no plugin: spur's host does
	host=${MAD_BUILD:-${MAD_BUILDDIR:-}}/t/spur/spank-host
	[[ -x $host ]] || { echo "no spank-host at $host (make check builds it)"; return 1; }
	cp "$host" "$MAD_CLUSTER_SHARED/spank-host"
	chmod 0755 "$MAD_CLUSTER_SHARED/spank-host"
	echo "optional ${MAD_PREFIX:-/tmp/mad-spank/prefix}/lib/slurm/mad.so" >"$MAD_CLUSTER_SHARED/spur-plugstack.conf"
	chmod 0644 "$MAD_CLUSTER_SHARED/spur-plugstack.conf"
	run_dir=$MAD_CLUSTER_SHARED/run-spur
	fresh_run_dir "$run_dir"
	cat >"$MAD_CLUSTER_SHARED/spur-job.sh" <<-'JOB'
		#!/bin/bash
		trap 'mad-mark $?' EXIT
		eval "$(mad-env)"
		./tcp-exchange
	JOB
	chmod 0755 "$MAD_CLUSTER_SHARED/spur-job.sh"
	export run_dir
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	spur=("$AS_USER" env PATH="$BATS_TEST_DIRNAME/../spur/bin:$PATH"
		SPUR_EMU_HOST="$MAD_CLUSTER_SHARED/spank-host"
		SPUR_PLUGSTACK="$MAD_CLUSTER_SHARED/spur-plugstack.conf"
		MAD_MODEL=m MAD_RUN_DIR="$run_dir")
}

# spur's sbatch has no --wait: poll the real queue until the job is gone.
wait_gone() {
	for _ in $(seq 240); do
		[[ -z $("$AS_USER" squeue -h -j "$1" -t PD,R,CG,S 2>/dev/null) ]] && return 0
		sleep 0.5
	done
	echo "job $1 still in the queue"
	return 1
}

submit() {
	run "${spur[@]}" "$@"
	assert_success
	assert_output --regexp '^Submitted batch job [0-9]+$'
	jobid=${output##* }
}

@test "spur's sbatch rejects --mad-* on the command line and in #SBATCH lines; nothing queued" {
	before=$("$AS_USER" squeue -h | wc -l)
	run "${spur[@]}" sbatch --mad-model=m --wrap true
	assert_failure 2
	assert_output --partial "unexpected argument '--mad-model=m' found"
	printf '#!/bin/bash\n#SBATCH --mad-model=m\ntrue\n' >"$MAD_CLUSTER_SHARED/sbatch-line.sh"
	run "${spur[@]}" sbatch "$MAD_CLUSTER_SHARED/sbatch-line.sh"
	assert_failure 2
	run "${spur[@]}" sbatch --wait --wrap true
	assert_failure 2
	[[ $("$AS_USER" squeue -h | wc -l) == "$before" ]]
}

@test "(a) native 4-node spur job: every node runs the script, ranks from SPANK + mad-env, TCP exchange" {
	submit sbatch --nodes=4 --output='spur-%j.out' spur-job.sh
	wait_gone "$jobid"
	out=$MAD_CLUSTER_SHARED/spur-$jobid.out
	cat "$out"
	grep -qx 'exchange ok: ranks 1..3' "$out"
	[[ $(grep -c '^contract .* fanout=nodes scheduler=spur from=mad-env$' "$out") -eq 4 ]]
	# spur's own MASTER_ADDR (a host name) was replaced by rank 0's address
	run ! grep -q '^contract .* addr=n1 ' "$out"
	for r in 0 1 2 3; do
		[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
	done
}

@test "(b) spur array fan-out: pending in spurd, mad-env completes the rendezvous, TCP exchange" {
	submit env MAD_FANOUT=array MAD_NNODES=4 sbatch --array=0-3 --exclusive --nodes=1 \
		--output='spur-arr-%A_%a.out' spur-job.sh
	wait_gone "$jobid"
	cat "$MAD_CLUSTER_SHARED"/spur-arr-"$jobid"_*.out
	grep -qx 'exchange ok: ranks 1..3' "$MAD_CLUSTER_SHARED/spur-arr-${jobid}_0.out"
	for r in 0 1 2 3; do
		grep -q "^contract .* rank=$r .* fanout=array scheduler=spur " "$MAD_CLUSTER_SHARED/spur-arr-${jobid}_$r.out"
		[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
	done
}

@test "(c) spur, rank 0 late past the timeout: peers fail clearly, markers say so, no empty MASTER_ADDR" {
	submit env MAD_FANOUT=array MAD_NNODES=4 MAD_TIMEOUT=8 sbatch --hold --array=0-3 \
		--exclusive --nodes=1 --output='spur-late-%A_%a.out' spur-job.sh
	"$AS_USER" scontrol release "${jobid}_[1-3]"
	for _ in $(seq 80); do
		[[ $(find "$run_dir/$jobid" -maxdepth 1 -name 'done_rank*' 2>/dev/null | wc -l) -eq 3 ]] && break
		sleep 0.5
	done
	"$AS_USER" scancel "$jobid"
	for r in 1 2 3; do
		f=$MAD_CLUSTER_SHARED/spur-late-${jobid}_$r.out
		cat "$f"
		grep -q "mad-env: rank $r waited [0-9]* s (--mad-timeout=8) for rank 0 to publish its address" "$f"
		run ! grep -q '^contract' "$f" # the program never ran
		[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 1 ]]
	done
}

@test "(d) MAD_SCHEDULER=slurm given on a spur-looking job wins over detection" {
	submit env MAD_SCHEDULER=slurm sbatch --nodes=2 --output='spur-%j.out' spur-job.sh
	wait_gone "$jobid"
	out=$MAD_CLUSTER_SHARED/spur-$jobid.out
	cat "$out"
	[[ $(grep -c '^contract .* scheduler=slurm from=mad-env$' "$out") -eq 2 ]]
	grep -qx 'exchange ok: ranks 1..1' "$out"
}

@test "spur's squeue: custom delimiters ignored, a new job hidden for the startup window, unknown flags rejected" {
	submit sbatch --nodes=1 --job-name='a b' --wrap 'sleep 30'
	# inside the window the job is not listed at all
	run "${spur[@]}" SPUR_EMU_SQUEUE_HIDE=8 squeue -h -j "$jobid" -o '%i|%T'
	assert_success
	assert_output ''
	sleep 9
	run "${spur[@]}" SPUR_EMU_SQUEUE_HIDE=8 squeue -h -j "$jobid" -o '%i|%T|%j'
	assert_success
	assert_output --regexp "^$jobid (PENDING|RUNNING) a b\$"
	run "${spur[@]}" squeue -j "$jobid" -o '%i;%t'
	assert_line --index 0 'JOBID ST'
	assert_line --index 1 --regexp "^$jobid (PD|R)\$"
	run "${spur[@]}" squeue --bogus
	assert_failure 2
	"$AS_USER" scancel "$jobid"
}

@test "spur's sacct -j does not filter by job id, and has no -P or -X" {
	submit sbatch --nodes=1 --wrap 'sleep 30'
	first=$jobid
	submit sbatch --nodes=1 --wrap 'sleep 30'
	run "${spur[@]}" sacct -n -j "$first" -o jobid,state
	assert_success
	assert_line --regexp "^ *$first "
	assert_line --regexp "^ *$jobid "
	run "${spur[@]}" sacct -P -j "$first"
	assert_failure 2
	run "${spur[@]}" sacct -X -j "$first"
	assert_failure 2
	"$AS_USER" scancel "$first" "$jobid"
}

@test "spur's scontrol has no 'show hostnames'; other show commands pass" {
	run "${spur[@]}" scontrol show hostnames 'n[1-2]'
	assert_failure 1
	assert_output --partial "unknown entity type 'hostnames'"
	run "${spur[@]}" scontrol show partition
	assert_success
	assert_output --partial PartitionName=
}
