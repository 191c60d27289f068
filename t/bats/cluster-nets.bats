#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Two networks per node, the default route on the wrong one (design.md §5, "The interface each
# process dials by: MAD_IFNAME"). This file starts a cluster of its own next to the main test
# cluster: 2 nodes, each with eth0 on the fabric and eth1 on a management network
# (MAD_CLUSTER_NETS=2, t/cluster/config.sh): the default route is on eth1, the node names
# resolve there (their fabric names are nK-fab), and no node reaches another's eth1, as a
# firewall between management ports has it. Real PyTorch (gloo, env://) across both nodes:
# without GLOO_SOCKET_IFNAME, gloo's device is the address its own host name resolves to
# (torch/csrc/distributed/c10d/init.cpp, ProcessGroupGloo's constructor: the interfaces of
# GLOO_SOCKET_IFNAME, else ProcessGroupGloo.cpp createDefaultDevice, the host name's address
# if it can be bound), here eth1's, which the peer cannot reach; with
# --mad-socket-ifname=auto mad sets GLOO_SOCKET_IFNAME to MAD_IFNAME, the interface that routes
# to rank 0 (eth0), and gloo comes up over it. Jobs as the test user. Runs on every release.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

# This file's own cluster: its folder, subnets, bridges, namespaces and ports are used by
# nothing else (not the main test clusters', nor cluster-ipv6.bats's 10.213.53). t/suite runs
# this file on every release, in two lanes at once: its slot follows the main cluster it runs
# beside (10.213.47: 54, 10.213.48: 55), and its SLURM is that cluster's (its env.sh), so the
# release's mad.so in MAD_PREFIX meets the release it was built for.
nets_cluster() {
	if [[ -z ${nets_slot:-} ]]; then
		local main=${MAD_CLUSTER_DIR:-/tmp/mad-cluster}/env.sh subnet='' slurm=''
		if [[ -r $main ]]; then
			# shellcheck disable=SC1090 # the main cluster's settings, read in a subshell
			subnet=$(. "$main" && echo "${MAD_CLUSTER_SUBNET:-}")
			# shellcheck disable=SC1090
			slurm=$(. "$main" && echo "${MAD_SLURM_PREFIX:-}")
		fi
		nets_slot=54
		[[ $subnet != 10.213.48 ]] || nets_slot=55
		export nets_slot nets_slurm=$slurm
	fi
	local port=$((17517 + (nets_slot - 54) * 100))
	export MAD_CLUSTER_DIR=/tmp/mad-cluster-nets$nets_slot MAD_CLUSTER_NODES=2 MAD_CLUSTER_NETNS=1 \
		MAD_CLUSTER_NETS=2 MAD_CLUSTER_SUBNET=10.213.$nets_slot MAD_CLUSTER_SUBNET2=10.213.$((nets_slot + 100)) \
		MAD_CLUSTER_BRIDGE=madbr$nets_slot MAD_CLUSTER_NS_PREFIX=madns$nets_slot- MAD_CLUSTER_CTLD_PORT=$port \
		MAD_CLUSTER_SLURMD_PORT=$((port + 14)) MAD_CLUSTER_GPUS=0 MAD_SLURM_PREFIX=${nets_slurm:-${MAD_SLURM_PREFIX:-}}
	cluster_bin=$(cd "$BATS_TEST_DIRNAME/../cluster" && pwd)
}

setup_file() {
	load ../lib.sh
	nets_cluster
	require_root "two networks per node need network namespaces"
	require_torch
	touch "$BATS_FILE_TMPDIR/started" # teardown_file stops whatever part came up
	"$cluster_bin/start" >"$BATS_FILE_TMPDIR/start.out" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/start.out"
		echo "the two-network test cluster did not start (daemon logs above)"
		return 1
	}
	use_cluster
	use_plugin nets-run
	copy_torch_helpers
}

teardown_file() {
	nets_cluster
	if [[ -e ${BATS_FILE_TMPDIR:-}/started ]]; then "$cluster_bin/stop" >/dev/null; fi
}

setup() {
	load ../lib.sh
	nets_cluster
	cluster_test
	fab1=${MAD_CLUSTER_NODE_ADDRS%% *} # n1-fab: n1's eth0
	# a rank that cannot reach its peer gives up well inside the time limit
	export TORCH_ALLREDUCE_TIMEOUT=20
}

submit_within=120 submit_time=2

# each task: its interface, the two variables gloo and NCCL read, then the all-reduce
task='echo "task host=$(hostname) MAD_IFNAME=${MAD_IFNAME-unset} GLOO=${GLOO_SOCKET_IFNAME-unset} NCCL=${NCCL_SOCKET_IFNAME-unset}"; exec ./torch-allreduce'

@test "the harness: the default route and the node names on eth1, which no node reaches on another" {
	for k in 1 2; do
		run ip -n "${MAD_CLUSTER_NS_PREFIX}n$k" route show default
		assert_output --partial 'dev eth1'
	done
	grep -qx "$MAD_CLUSTER_SUBNET2.11 n1 n1.spur.test # mad-cluster $MAD_CLUSTER_DIR" "$MAD_CLUSTER_DIR/etc/hosts.n2"
	grep -qx "$fab1 n1-fab # mad-cluster $MAD_CLUSTER_DIR" "$MAD_CLUSTER_DIR/etc/hosts.n2"
	# the bridge, where slurmctld connects from, has a name too: SLURM 24.11 and 25.11
	# look up every connection's peer, and no DNS server is reached over eth1
	grep -qx "$MAD_CLUSTER_SUBNET.1 mad-bridge # mad-cluster $MAD_CLUSTER_DIR" "$MAD_CLUSTER_DIR/etc/hosts.n2"
	# from n2, n1's eth0 answers (refused: nothing listens) and its eth1 never does
	run nsenter --net="/run/netns/${MAD_CLUSTER_NS_PREFIX}n2" timeout 5 bash -c ": </dev/tcp/$fab1/9"
	assert_output --partial 'Connection refused'
	run nsenter --net="/run/netns/${MAD_CLUSTER_NS_PREFIX}n2" timeout 5 bash -c ": </dev/tcp/$MAD_CLUSTER_SUBNET2.11/9"
	refute_output --partial 'Connection refused'
	assert_failure
}

@test "two networks, --mad-socket-ifname=auto: GLOO/NCCL_SOCKET_IFNAME are eth0 on each node, gloo comes up over it" {
	submit -N2 --ntasks-per-node=1 --mad-model=x --mad-addr-suffix=-fab --mad-socket-ifname=auto \
		--wrap "srun -K bash -c '$task'"
	assert_success
	for k in 1 2; do grep -qx "task host=n$k MAD_IFNAME=eth0 GLOO=eth0 NCCL=eth0" "$out"; done
	assert_allreduce 2 "$out"
	[[ $(grep -c "^allreduce .* addr=$fab1 " "$out") == 2 ]]
}

@test "two networks, auto with NCCL's own file naming NCCL_SOCKET_IFNAME (NCCL_CONF_FILE): mad.so leaves it to the file, sets GLOO_SOCKET_IFNAME, gloo comes up" {
	printf '# the site\nNCCL_SOCKET_IFNAME=ib0\n' >"$MAD_CLUSTER_SHARED/nccl.conf"
	chmod 0644 "$MAD_CLUSTER_SHARED/nccl.conf"
	submit -N2 --ntasks-per-node=1 --mad-model=x --mad-addr-suffix=-fab --mad-socket-ifname=auto \
		--export=ALL,NCCL_CONF_FILE="$MAD_CLUSTER_SHARED/nccl.conf" --wrap "srun -K bash -c '$task'"
	assert_success
	for k in 1 2; do grep -qx "task host=n$k MAD_IFNAME=eth0 GLOO=eth0 NCCL=unset" "$out"; done
	assert_allreduce 2 "$out"
}

@test "two networks, the interface left to gloo (--mad-socket-ifname=keep): gloo takes the host name's eth1 and the ranks never meet" {
	submit -N2 --ntasks-per-node=1 --mad-model=x --mad-addr-suffix=-fab --mad-socket-ifname=keep \
		--wrap "srun -K bash -c '$task'"
	assert_failure
	for k in 1 2; do grep -qx "task host=n$k MAD_IFNAME=eth0 GLOO=unset NCCL=unset" "$out"; done
	run allreduce_lines "$out"
	assert_output ''
	# gloo dialed the peer's eth1 address, which no node reaches
	grep -qE "connect \[${MAD_CLUSTER_SUBNET2//./\\.}\.1[12]\]:[0-9]+: No route to host" "$out"
}
