#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Rank 0's network chosen by --mad-iface and --mad-addr-suffix, in both
# fan-outs, and a busy MASTER_PORT, on the real cluster as the test user.
# Node n1 gets a second address on its interface, named n1-ib in every
# node's hosts view: the "fast network" a site names by host-name suffix.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin run-address
	first=${MAD_CLUSTER_NODE_ADDRS%% *}
	ib_addr=${first%.*}.200
	if [[ $MAD_CLUSTER_MODE == netns ]]; then
		ip -n "${MAD_CLUSTER_NS_PREFIX}n1" addr add "$ib_addr/24" dev eth0
	else
		ib_addr=127.0.0.1
	fi
	for view in "$MAD_CLUSTER_DIR"/etc/hosts.n*; do
		echo "$ib_addr n1-ib # mad-address-test" >>"$view"
	done
	export ib_addr first
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
	[[ -n ${ib_addr:-} ]] || return 0
	if [[ $MAD_CLUSTER_MODE == netns ]]; then
		ip -n "${MAD_CLUSTER_NS_PREFIX}n1" addr del "$ib_addr/24" dev eth0 || true
	fi
	for view in "$MAD_CLUSTER_DIR"/etc/hosts.n*; do
		# in place: the file is bound over each node's /etc/hosts
		grep -v ' # mad-address-test$' "$view" >"$view.tmp" || true
		cat "$view.tmp" >"$view"
		rm -f "$view.tmp"
	done
}

setup() {
	load ../lib.sh
	cluster_test
	if [[ $MAD_CLUSTER_MODE != netns ]]; then
		[[ ${CI:-} != true ]] || { echo "CI=true needs the netns cluster (root): nodes with addresses of their own"; return 1; }
		skip "needs nodes in network namespaces"
	fi
}


@test "nodes fan-out, --mad-addr-suffix=-ib: every node resolves n1-ib, TCP exchange through it" {
	submit --nodes=4 --mad-model=m --mad-addr-suffix=-ib --wrap 'srun --nodes=4 ./tcp-exchange'
	assert_success
	[[ $(grep -c "^contract .* addr=$ib_addr " "$out") == 4 ]]
	grep -qx 'exchange ok: ranks 1..3' "$out"
}

@test "nodes fan-out, --mad-iface=eth0: rank 0 publishes its interface's address, the others wait for it" {
	submit --nodes=4 --mad-model=m --mad-iface=eth0 --wrap 'srun --nodes=4 ./tcp-exchange'
	assert_success
	[[ $(grep -c "^contract .* addr=$first " "$out") == 4 ]]
	grep -qx 'exchange ok: ranks 1..3' "$out"
}

@test "nodes fan-out, --mad-iface without a run folder: an error that says how to fix it, at the task's start" {
	echo "optional $so" >"$MAD_CLUSTER_PLUGSTACK" # no run-dir= for this job
	submit --nodes=2 --mad-model=m --mad-iface=eth0 --wrap 'srun --nodes=2 ./tcp-exchange'
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	assert_failure
	grep -q "mad: --mad-iface in nodes fan-out needs --mad-run-dir, a folder all nodes share, where rank 0 publishes its interface's address; or name the network by host name with --mad-addr-suffix" "$out"
	run ! grep -q '^contract' "$out"
}

@test "array fan-out, --mad-addr-suffix and --mad-iface: rank 0 publishes the chosen address" {
	submit --array=0-3 --exclusive --nodes=1 --mad-model=m --mad-fanout=array \
		--mad-addr-suffix=-ib --output="$MAD_CLUSTER_SHARED/address-$BATS_TEST_NUMBER-%a.out" \
		--wrap './tcp-exchange'
	cat "$MAD_CLUSTER_SHARED"/address-"$BATS_TEST_NUMBER"-*.out
	assert_success
	[[ $(cat "$MAD_CLUSTER_SHARED"/address-"$BATS_TEST_NUMBER"-*.out | grep -c "^contract .* addr=$ib_addr ") == 4 ]]
	grep -qx 'exchange ok: ranks 1..3' "$MAD_CLUSTER_SHARED/address-$BATS_TEST_NUMBER-0.out"
	submit --array=0-3 --exclusive --nodes=1 --mad-model=m --mad-fanout=array \
		--mad-iface=eth0 --output="$MAD_CLUSTER_SHARED/address-$BATS_TEST_NUMBER-%a.out" \
		--wrap './tcp-exchange'
	assert_success
	[[ $(cat "$MAD_CLUSTER_SHARED"/address-"$BATS_TEST_NUMBER"-*.out | grep -c "^contract .* addr=$first ") == 4 ]]
}

@test "a MASTER_PORT held by another process fails rank 0 at once, naming port and node" {
	port=23999
	# a listener on n1, where rank 0 runs, for the length of the job
	holder=$MAD_CLUSTER_SHARED/address-holder.py
	cat >"$holder" <<-'PY'
		import socket, sys, time
		s = socket.socket(socket.AF_INET6)
		s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		s.bind(("::", int(sys.argv[1])))
		s.listen(1)
		open(sys.argv[2], "w").close()
		print("holding", flush=True)
		time.sleep(30)
	PY
	chmod 0644 "$holder"
	up=$MAD_CLUSTER_SHARED/address-holder.up
	rm -f "$up"
	start=$SECONDS
	# the exchange starts once the holder listens (a step's start takes seconds on a
	# loaded machine), within 30 s: a late holder would let rank 0 take the port
	submit --nodes=2 --mad-model=m --mad-master-port="$port" --wrap "
		srun --overlap -N1 -n1 -w n1 python3 $holder $port $up &
		for i in \$(seq 300); do [ -e $up ] && break; sleep 0.1; done
		srun --overlap --kill-on-bad-exit=1 --nodes=2 ./tcp-exchange; rc=\$?; kill %1 2>/dev/null; exit \$rc"
	assert_failure
	grep -q "MASTER_PORT $port is already in use on rank 0's node n1" "$out"
	run ! grep -q 'exchange ok' "$out"
	((SECONDS - start < 60))
}

@test "two jobs sharing nodes with auto ports get different ports and both run" {
	pids=()
	for j in a b; do
		"$AS_USER" timeout 120 sbatch --wait --output="$MAD_CLUSTER_SHARED/address-two-$j.out" \
			--nodes=2 --ntasks-per-node=1 -w n1,n2 --mad-model=m \
			--wrap 'srun --nodes=2 ./tcp-exchange; sleep 2' >/dev/null &
		pids+=($!)
	done
	# these two only: bats runs its own child (the BATS_TEST_TIMEOUT watchdog)
	wait "${pids[@]}"
	cat "$MAD_CLUSTER_SHARED"/address-two-?.out
	pa=$(sed -n 's/^contract host=n1 .* port=\([0-9]*\) .*/\1/p' "$MAD_CLUSTER_SHARED/address-two-a.out")
	pb=$(sed -n 's/^contract host=n1 .* port=\([0-9]*\) .*/\1/p' "$MAD_CLUSTER_SHARED/address-two-b.out")
	[[ -n $pa && -n $pb && $pa != "$pb" ]]
	grep -qx 'exchange ok: ranks 1..1' "$MAD_CLUSTER_SHARED/address-two-a.out"
	grep -qx 'exchange ok: ranks 1..1' "$MAD_CLUSTER_SHARED/address-two-b.out"
}
