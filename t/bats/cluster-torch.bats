#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Real PyTorch (Debian's python3-torch, gloo, no GPU) across the test cluster, jobs as the
# test user with mad.so on the plugstack: init_process_group("gloo", init_method="env://") and
# an all_reduce of ones in every launch shape of design.md §3 (one task per process, one torchrun
# per node; nodes and array fan-out), and the all-reduce sum equals WORLD_SIZE in every task.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin torch-run
	copy_torch_helpers
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	require_torch
	# a rank that cannot join gives up well inside the job's time limit
	export TORCH_ALLREDUCE_TIMEOUT=40
}

teardown() {
	# the hosts view a test changed (node n1 resolving its own name to 127.0.1.1)
	if [[ -r ${BATS_TEST_TMPDIR:-}/hosts.n1 ]]; then
		cat "$BATS_TEST_TMPDIR/hosts.n1" >"$MAD_CLUSTER_DIR/etc/hosts.n1"
	fi
}

# every job of this file (submit, t/lib.sh)
submit_within=150 submit_time=2

# An array of four tasks, one node each: every task's output in $outs.
submit_array() {
	submit --array=0-3 --exclusive --nodes=1 --mad-fanout=array --output="torch-$BATS_TEST_NUMBER-%a.out" "$@"
	outs=("$MAD_CLUSTER_SHARED/torch-$BATS_TEST_NUMBER"-*.out)
}

# Every rank's field NAME has VALUE (and there is at least one rank).
assert_every() { # name value files...
	local name=$1 value=$2 lines
	shift 2
	lines=$(allreduce_lines "$@") || { echo "no rank printed its line"; return 1; }
	! grep -v " $name=$value\( \|\$\)" <<<"$lines"
}

# Nodes fan-out, one task per process: RANK is SLURM_PROCID (the ecosystem's convention).
assert_rank_is_procid() {
	allreduce_lines "$@" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		v["rank"] != v["procid"] { print; bad = 1 } END { exit bad }'
}

# torchrun on every node, driven only by the contract's node-level variables.
torchrun_line='./torchrun-compat --nnodes="$NNODES" --node_rank="$NODE_RANK" --nproc_per_node="$MAD_NPROC_PER_NODE" --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" ./torch-allreduce'

@test "torch: srun per process, 4 nodes x 2 tasks, nodes fan-out: RANK=SLURM_PROCID, WORLD_SIZE=8" {
	submit --nodes=4 --ntasks-per-node=2 --mad-model=x --wrap 'srun -K ./torch-allreduce'
	assert_success
	assert_allreduce 8 "$out"
	assert_rank_is_procid "$out"
	assert_every local_world 2 "$out"
}

@test "torch: torchrun per node, --nproc_per_node from the contract, nodes fan-out: WORLD_SIZE=8" {
	submit --nodes=4 --ntasks-per-node=1 --mad-model=x --mad-nproc-per-node=2 \
		--wrap "srun -K bash -c 'exec $torchrun_line'"
	assert_success
	assert_allreduce 8 "$out"
	# the agents' node ranks are the contract's, and rank 0 is on rank 0's node
	assert_every node_rank '[0-3]' "$out"
	allreduce_lines "$out" | grep -q ' rank=0 .* node_rank=0 .* host=n1 '
}

@test "torch: srun per process in array fan-out, 4 array tasks x 2: RANK=NODE_RANK*2+LOCAL_RANK" {
	submit_array --ntasks-per-node=2 --mad-model=x --wrap 'srun -K ./torch-allreduce'
	assert_success
	assert_allreduce 8 "${outs[@]}"
	allreduce_lines "${outs[@]}" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		v["rank"] != v["node_rank"] * 2 + v["local"] { print; bad = 1 } END { exit bad }'
}

@test "torch: torchrun per node in array fan-out, --nproc_per_node from the contract: WORLD_SIZE=8" {
	submit_array --ntasks-per-node=1 --mad-model=x --mad-nproc-per-node=2 --wrap "$torchrun_line"
	assert_success
	assert_allreduce 8 "${outs[@]}"
}

@test "torch: uneven tasks per node (srun -n5 over 4 nodes), nodes fan-out: WORLD_SIZE=5" {
	submit --nodes=4 --ntasks=5 --mad-model=x --wrap 'srun -K -n5 ./torch-allreduce'
	assert_success
	assert_allreduce 5 "$out"
	assert_rank_is_procid "$out"
	# SLURM's block layout: 2 tasks on the first node, 1 on each other
	[[ $(allreduce_lines "$out" | grep -c ' local_world=2 ') == 2 ]]
}

@test "torch: uneven tasks per node in array fan-out are refused with a clear message" {
	# rank 0 cannot know its peers were refused: its own ranks give up sooner
	TORCH_ALLREDUCE_TIMEOUT=10 submit_array --ntasks-per-node=2 --mad-model=x \
		--wrap 'srun -K -n$((SLURM_ARRAY_TASK_ID == 0 ? 2 : 1)) ./torch-allreduce'
	assert_failure
	[[ -z $(allreduce_lines "${outs[@]}") ]]
	# every other array task is refused, naming the fan-out, both task counts and the way out
	for r in 1 2 3; do
		grep -E "mad: --mad-fanout=array: this array task \(rank $r\) has 1 tasks on its node and rank 0 has 2: .*--mad-fanout=nodes" \
			"$MAD_CLUSTER_SHARED/torch-$BATS_TEST_NUMBER-$r.out"
	done
}

@test "torch: a user's MASTER_PORT=23456 reaches every task" {
	MASTER_PORT=23456 submit --nodes=2 --ntasks-per-node=2 --mad-model=x \
		--wrap 'echo "batch MASTER_PORT=$MASTER_PORT"; srun -K ./torch-allreduce'
	grep -qx 'batch MASTER_PORT=23456' "$out"
	assert_success
	assert_every port 23456 "$out"
	assert_allreduce 4 "$out"
}

# Also the one-task-per-node case of srun per process: RANK = NODE_RANK, LOCAL_RANK = 0.
@test "torch: a node whose own name resolves to 127.0.1.1 never yields a loopback MASTER_ADDR" {
	if [[ $MAD_CLUSTER_MODE != netns ]]; then
		[[ ${CI:-} != true ]] || { echo "CI=true needs the netns cluster (root) for node addresses"; false; }
		skip "a loopback cluster has no node addresses"
	fi
	hosts=$MAD_CLUSTER_DIR/etc/hosts.n1
	cp "$hosts" "$BATS_TEST_TMPDIR/hosts.n1"
	# Debian's line, first on n1's own view (in place: the file is bind-mounted on n1)
	{ echo "127.0.1.1 n1"; cat "$BATS_TEST_TMPDIR/hosts.n1"; } >"$hosts"
	# gloo advertises the address of its own interface, not of n1's name
	GLOO_SOCKET_IFNAME=eth0 submit --nodes=4 --ntasks-per-node=1 --mad-model=x \
		--wrap 'getent hosts n1; srun -K ./torch-allreduce'
	grep -q '^127\.0\.1\.1 .*n1' "$out" # the job really saw the loopback line
	assert_every addr "$MAD_CLUSTER_SUBNET\.11" "$out"
	assert_success
	assert_allreduce 4 "$out"
	assert_rank_is_procid "$out"
}
