#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Smoke tests of the test cluster itself (t/cluster/): if these fail, every plugin test on
# the cluster would fail for reasons that have nothing to do with the plugin.
# The cluster must already run (the suite runner starts it: sudo t/cluster/start).

setup() {
	load ../lib.sh
	cluster_test
	# A fresh folder per test, written by the jobs (so owned by the test user).
	WORK=$("$AS_USER" mktemp -d "$MAD_CLUSTER_SHARED/cluster-bats.XXXXXX")
}
teardown() {
	if [[ -n ${WORK:-} ]]; then "$AS_USER" rm -rf "$WORK"; fi
}

@test "srun over all nodes: one task per node, each on its own host and address, as the test user" {
	N=$MAD_CLUSTER_NODES
	# -t 1: SLURM ends it after a minute too; timeout ends a client stuck on a broken cluster.
	# shellcheck disable=SC2016 # expanded by the task's shell
	run timeout 60 "$AS_USER" srun -N"$N" --ntasks-per-node=1 -t 1 \
		sh -c 'echo "$SLURMD_NODENAME $(hostname) $(id -un) $(hostname -I | cut -d" " -f1)"'
	assert_success
	lines_sorted=$(printf '%s\n' "${lines[@]}" | sort)
	echo "$lines_sorted"
	assert_equal "$(wc -l <<<"$lines_sorted")" "$N"
	# One task on each node.
	assert_equal "$(cut -d' ' -f1 <<<"$lines_sorted" | sort -u | tr '\n' ' ')" \
		"$(tr ' ' '\n' <<<"$MAD_CLUSTER_NODE_NAMES" | sort -u | tr '\n' ' ')"
	# Every task runs as the test user, never as root (unless the cluster is all root's).
	assert_equal "$(cut -d' ' -f3 <<<"$lines_sorted" | sort -u)" "$MAD_CLUSTER_USER"
	if [[ $(id -u) == 0 && $MAD_CLUSTER_USER == root ]]; then fail "jobs run as root"; fi
	if [[ $MAD_CLUSTER_MODE == netns ]]; then
		# Each node has its own host name and its own address: the node's namespace address.
		while read -r node host _ addr; do
			assert_equal "$host" "$node"
			k=${node#n}
			assert_equal "$addr" "$(cut -d' ' -f"$k" <<<"$MAD_CLUSTER_NODE_ADDRS")"
		done <<<"$lines_sorted"
		assert_equal "$(cut -d' ' -f4 <<<"$lines_sorted" | sort -u | wc -l)" "$N"
	fi
}

@test "an --exclusive -N1 job array runs one task per node, all at once" {
	N=$MAD_CLUSTER_NODES
	# Each task waits (at most 30 s) until all N have started: with --exclusive they can only
	# all run at once on N different nodes, which is how an array fans out (spur style).
	cat >"$WORK/array.sh" <<'EOF'
#!/bin/sh
echo "$SLURMD_NODENAME $(hostname) $SLURM_ARRAY_TASK_ID"
touch "$1/started.$SLURM_ARRAY_TASK_ID"
i=0
while [ "$(ls "$1" | grep -c '^started\.')" -lt "$2" ]; do
    i=$((i + 1))
    if [ "$i" -gt 300 ]; then echo "not all $2 tasks ran at once" >&2; exit 1; fi
    sleep 0.1
done
EOF
	run timeout 90 "$AS_USER" sbatch --wait --array=0-$((N - 1)) --exclusive -N1 -t 2 \
		--output="$WORK/array_%A_%a.out" "$WORK/array.sh" "$WORK" "$N"
	assert_success
	cat "$WORK"/array_*.out
	assert_equal "$(find "$WORK" -name 'array_*.out' | wc -l)" "$N"
	assert_equal "$(cut -d' ' -f1 "$WORK"/array_*.out | sort -u | wc -l)" "$N"
	if [[ $MAD_CLUSTER_MODE == netns ]]; then
		assert_equal "$(cut -d' ' -f2 "$WORK"/array_*.out | sort -u | wc -l)" "$N"
	fi
}

@test "a batch job over all nodes sees SLURM_JOB_NUM_NODES and the whole node list" {
	N=$MAD_CLUSTER_NODES
	cat >"$WORK/batch.sh" <<'EOF'
#!/bin/sh
echo "num=$SLURM_JOB_NUM_NODES"
echo "list=$SLURM_JOB_NODELIST"
echo "hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | tr '\n' ' ')"
EOF
	run timeout 60 "$AS_USER" sbatch --wait -N"$N" -t 2 --output="$WORK/batch.out" "$WORK/batch.sh"
	assert_success
	run cat "$WORK/batch.out"
	assert_line "num=$N"
	assert_line "hosts=$MAD_CLUSTER_NODE_NAMES "
}

@test "every node resolves the first node's name and reaches it over TCP" {
	N=$MAD_CLUSTER_NODES
	first_addr=${MAD_CLUSTER_NODE_ADDRS%% *}
	# What a rendezvous needs (MASTER_ADDR is the first node's name): connect to n1's slurmd.
	# shellcheck disable=SC2016 # expanded by the task's shell
	run timeout 60 "$AS_USER" srun -N"$N" --ntasks-per-node=1 -t 1 bash -c '
		addr=$(getent ahostsv4 n1 | head -n 1 | cut -d" " -f1)
		exec 3<>"/dev/tcp/$addr/$1" && echo "$SLURMD_NODENAME reached $addr"' bash "$MAD_CLUSTER_SLURMD_PORT"
	assert_success
	assert_equal "$(grep -c " reached $first_addr\$" <<<"$output")" "$N"
}
