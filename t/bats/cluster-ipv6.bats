#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# An IPv6-only node (design.md §5, rank 0's address: "IPv6 where a node has no IPv4, printed
# without brackets"). This file starts a cluster of its own next to the main test cluster:
# 2 nodes, n1 with only an IPv6 address (MAD_CLUSTER_IPV6_ONLY=1), n2 dual stack, SLURM
# talking IPv6, mad.so on its plugstack. n1 is rank 0, so every MASTER_ADDR must be n1's
# IPv6 address, and real PyTorch (gloo, env://) must join all ranks through it. Jobs are
# submitted as the ordinary test user.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

# This file's own cluster: its folder, subnet, bridge, namespaces and ports are used by
# nothing else (not the main test cluster's 10.213.47/madbr47/16817/16821).
ipv6_cluster() {
	export MAD_CLUSTER_DIR=/tmp/mad-cluster-ipv6 MAD_CLUSTER_NODES=2 MAD_CLUSTER_NETNS=1 \
		MAD_CLUSTER_IPV6_ONLY=1 MAD_CLUSTER_SUBNET=10.213.53 MAD_CLUSTER_BRIDGE=madbr53 \
		MAD_CLUSTER_NS_PREFIX=madns53- MAD_CLUSTER_CTLD_PORT=17417 MAD_CLUSTER_SLURMD_PORT=17431
	cluster_bin=$(cd "$BATS_TEST_DIRNAME/../cluster" && pwd)
}

# Missing prerequisites: fail under CI, skip elsewhere (as require does for a command).
need() {
	if [[ ${CI:-} == true ]]; then
		echo "$1 and CI=true: failing, not skipping" >&2
		return 1
	fi
	skip "$1"
}

setup_file() {
	load ../lib.sh
	ipv6_cluster
	[[ $(id -u) == 0 ]] || need "an IPv6-only node needs network namespaces, so root"
	/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
		need "no PyTorch with gloo in /usr/bin/python3 (Debian package python3-torch)"
	touch "$BATS_FILE_TMPDIR/started" # teardown_file stops whatever part came up
	# start prints the end of every daemon log itself when it fails.
	"$cluster_bin/start" >"$BATS_FILE_TMPDIR/start.out" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/start.out"
		echo "the IPv6 test cluster did not start (daemon logs above)"
		return 1
	}
	use_cluster
	use_plugin ipv6-run
	cp "$BATS_TEST_DIRNAME/../helpers/torch-allreduce" "$MAD_CLUSTER_SHARED/torch-allreduce"
	chmod 0755 "$MAD_CLUSTER_SHARED/torch-allreduce"
}

teardown_file() {
	ipv6_cluster
	if [[ -e ${BATS_FILE_TMPDIR:-}/started ]]; then "$cluster_bin/stop" >/dev/null; fi
}

setup() {
	load ../lib.sh
	ipv6_cluster
	cluster_test
	n1_addr=${MAD_CLUSTER_NODE_ADDRS%% *}
	export TORCH_ALLREDUCE_TIMEOUT=40 # a rank that cannot join gives up inside the time limit
}

# every job of this file (submit, t/lib.sh)
submit_within=150 submit_time=2

@test "the harness: n1 has only an IPv6 address, n2 both, and SLURM reaches both over IPv6" {
	[[ $n1_addr == fd00:6d61:64:53::11 ]]
	grep -qx 'CommunicationParameters=EnableIPv6' "$MAD_CLUSTER_DIR/etc/slurm.conf"
	grep -q "^NodeName=n1 NodeAddr=$n1_addr " "$MAD_CLUSTER_DIR/etc/slurm.conf"
	run ip -n "${MAD_CLUSTER_NS_PREFIX}n1" -4 -o addr show dev eth0
	assert_output ''
	run ip -n "${MAD_CLUSTER_NS_PREFIX}n1" -6 -o addr show dev eth0 scope global
	assert_output --partial " $n1_addr/64 "
	run ip -n "${MAD_CLUSTER_NS_PREFIX}n2" -o addr show dev eth0
	assert_output --partial ' 10.213.53.12/24 '
	assert_output --partial ' fd00:6d61:64:53::12/64 '
	# every hosts view names every node by its IPv6 address
	run grep -h ' # mad-cluster ' "$MAD_CLUSTER_DIR/etc/hosts.n1" "$MAD_CLUSTER_DIR/etc/hosts.n2"
	[[ $(grep -c "^fd00:6d61:64:53::1[12] n[12] " <<<"$output") == 4 ]]
	run "$AS_USER" timeout 60 srun -N2 hostname
	assert_success
	[[ $(sort <<<"$output" | tr '\n' ' ') == 'n1 n2 ' ]]
}

@test "nodes fan-out: MASTER_ADDR is the IPv6-only rank 0's IPv6 address, without brackets, in every task" {
	submit -N2 --mad-model=x --wrap '
		echo "batch host=$(hostname) MASTER_ADDR=$MASTER_ADDR"
		srun -N2 -K bash -c "echo step host=\$(hostname) NODE_RANK=\$NODE_RANK MASTER_ADDR=\$MASTER_ADDR"'
	assert_success
	grep -qx "batch host=n1 MASTER_ADDR=$n1_addr" "$out"
	grep -qx "step host=n1 NODE_RANK=0 MASTER_ADDR=$n1_addr" "$out"
	grep -qx "step host=n2 NODE_RANK=1 MASTER_ADDR=$n1_addr" "$out"
	run ! grep -F '[' "$out"
	# an srun step started from the submit host sees the same
	run "$AS_USER" timeout 60 srun -N2 --mad-model=x printenv MASTER_ADDR
	assert_success
	[[ $output == "$n1_addr"$'\n'"$n1_addr" ]]
}

@test "nodes fan-out: PyTorch gloo all_reduce over IPv6, 2 nodes x 2 tasks, sum == WORLD_SIZE" {
	submit -N2 --ntasks-per-node=2 --mad-model=x --wrap 'srun -K ./torch-allreduce'
	assert_success
	run grep -c "^allreduce .* world=4 .* addr=$n1_addr port=[0-9]* sum=4\$" "$out"
	assert_output 4
	for r in 0 1 2 3; do
		grep -q "^allreduce rank=$r world=4 local=$((r % 2)) local_world=2 node_rank=$((r / 2)) procid=$r host=n$((r / 2 + 1)) " "$out"
	done
}

@test "array fan-out: rank 0 on the IPv6-only node publishes its IPv6 address, PyTorch joins through it" {
	arr_dir=$run_dir/array
	fresh_run_dir "$arr_dir"
	rm -f "$MAD_CLUSTER_SHARED"/ipv6-arr-*.out
	run "$AS_USER" timeout 150 sbatch --wait --parsable --time=2 --array=0-1 -N1 --exclusive \
		--mad-model=x --mad-fanout=array --mad-run-dir="$arr_dir" --output='ipv6-arr-%A_%a.out' \
		--wrap './torch-allreduce'
	jobid=${output%%;*}
	cat "$MAD_CLUSTER_SHARED"/ipv6-arr-"$jobid"_*.out
	assert_success
	cat "$arr_dir/$jobid/rendezvous"
	# SLURM places array task 0 on the first idle node: n1, the IPv6-only one
	grep -qx 'host=n1' "$arr_dir/$jobid/rendezvous"
	grep -qx "addr=$n1_addr" "$arr_dir/$jobid/rendezvous"
	for r in 0 1; do
		grep -q "^allreduce rank=$r world=2 .* node_rank=$r .* host=n$((r + 1)) addr=$n1_addr port=[0-9]* sum=2\$" \
			"$MAD_CLUSTER_SHARED/ipv6-arr-${jobid}_$r.out"
		[[ $(head -1 "$arr_dir/$jobid/done_rank$r") == 0 ]]
	done
}
