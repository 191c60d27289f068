#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-env --check on the real cluster, jobs as the test user with mad.so on the plugstack:
# every task of a step checks, before the real program, that all ranks agree and reach rank 0.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin check-run
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
}

# every job of this file (submit, t/lib.sh)
submit_time=2

@test "check: a good 4-node job passes in under 5 s, and the real program binds MASTER_PORT right after" {
	submit --nodes=4 --mad-model=x --wrap 'start=$(date +%s%N)
		srun mad-env --check || exit 1
		echo "took_ms $((($(date +%s%N) - start) / 1000000))"
		srun bash -c "mad-env --check && exec ./tcp-exchange"'
	assert_success
	[[ $(grep -c '^mad-env: check ok: 4 ranks agree on WORLD_SIZE=4 NNODES=4 MASTER_ADDR=' "$out") == 2 ]]
	ms=$(awk '/^took_ms / { print $2 }' "$out")
	echo "srun mad-env --check on 4 nodes: $ms ms"
	((ms < 5000))
	grep -qx 'exchange ok: ranks 1..3' "$out"
}

@test "check: 4 nodes x 2 tasks agree on 8 distinct ranks" {
	submit --nodes=4 --ntasks-per-node=2 --mad-model=x --wrap 'srun mad-env --check'
	assert_success
	grep -q '^mad-env: check ok: 8 ranks agree on WORLD_SIZE=8 NNODES=4 ' "$out"
}

@test "check: a rank given another MASTER_ADDR is named, by rank 0's table and by itself" {
	submit --nodes=4 --mad-model=x --wrap 'srun bash -c "
		if [ \$SLURM_PROCID = 2 ]; then export MASTER_ADDR=n1; fi
		exec mad-env --check=5"'
	assert_failure
	# rank 0's table: a row for rank 2 saying what differs
	grep -E '^2 +n3 +[0-9.]+ +4 +4 +n1 +[0-9]+ +MASTER_ADDR n1, rank 0 has [0-9.]+$' "$out"
	grep -q '^1 of 4 ranks failed the check$' "$out"
	grep -q '^mad-env: --check: rank 2 on n3: the check failed at rank 0 .*: 1 of 4 ranks: rank 2 on n3: MASTER_ADDR n1' "$out"
	# every rank fails, so the program behind && never starts
	[[ $(grep -c '^mad-env: --check: ' "$out") == 4 ]]
}

@test "check: a rank whose MASTER_ADDR reaches no host fails in time, and rank 0 names it" {
	nowhere=$MAD_CLUSTER_SUBNET.99
	submit --nodes=4 --mad-model=x --wrap 'start=$(date +%s); srun bash -c "
		if [ \$SLURM_PROCID = 3 ]; then export MASTER_ADDR='"$nowhere"'; fi
		exec mad-env --check=3"; rc=$?; echo "took $(($(date +%s) - start))"; exit $rc'
	assert_failure
	grep -q "^mad-env: --check: rank 3 on n4 cannot reach rank 0 at $nowhere port [0-9]*: " "$out"
	grep -q '^mad-env: --check: the check failed: 1 of 4 ranks: rank 3 did not connect$' "$out"
	grep -E '^3 +- +- +- +- +- +- +did not connect by the deadline$' "$out"
	(($(awk '/^took/ { print $2 }' "$out") <= 3 + 2 + 3))
}

@test "check: rank 0 unreachable (not checking) fails every other rank, naming rank 0's address" {
	submit --nodes=4 --mad-model=x --wrap 'srun bash -c "
		if [ \$SLURM_PROCID = 0 ]; then exit 0; fi
		exec mad-env --check=2"'
	assert_failure
	for r in 1 2 3; do
		grep -q "^mad-env: --check: rank $r on n$((r + 1)) cannot reach rank 0 at [0-9.]* port [0-9]*: Connection refused$" "$out"
	done
}
