#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-env --check as processes on this host: ranks as background mad-env processes over
# 127.0.0.1 (the cluster tests run it in real jobs).

setup() {
	load ../lib.sh
	load_helpers
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	job=(env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=12 SLURM_JOB_NUM_NODES=1
		SLURM_JOB_NODELIST=localhost MASTER_ADDR=127.0.0.1 MASTER_PORT="$port"
		WORLD_SIZE=3 NNODES=1)
}

# Runs ranks 0..2 of one check, each with its own extra env ("" for none); exit statuses
# in ${rcs[@]}, outputs in $BATS_TEST_TMPDIR/rankN.
check_ranks() {
	local r rc pids=()
	rcs=()
	for r in 0 1 2; do
		# shellcheck disable=SC2086 # the extra env is word lists on purpose
		"${job[@]}" RANK=$r ${extra[r]:-} mad-env --check=6 >"$BATS_TEST_TMPDIR/rank$r" 2>&1 &
		pids+=($!)
	done
	for r in 0 1 2; do
		rc=0
		wait "${pids[r]}" || rc=$?
		rcs[r]=$rc
		cat "$BATS_TEST_TMPDIR/rank$r"
	done
}

@test "mad-env --check: three ranks agree; rank 0 says so; MASTER_PORT is free right after" {
	extra=()
	check_ranks
	[[ ${rcs[*]} == "0 0 0" ]]
	grep -q "^mad-env: check ok: 3 ranks agree on WORLD_SIZE=3 NNODES=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port and reached rank 0 in " "$BATS_TEST_TMPDIR/rank0"
	[[ ! -s $BATS_TEST_TMPDIR/rank1 && ! -s $BATS_TEST_TMPDIR/rank2 ]]
	# a plain bind, without SO_REUSEADDR: no listener and no TIME_WAIT left on the port
	python3 -c 'import socket, sys; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()' "$port"
}

@test "mad-env --check: a rank with another MASTER_PORT in its environment is named" {
	extra=("" "" "MASTER_PORT=1")
	check_ranks
	[[ ${rcs[*]} == "1 1 1" ]]
	grep -q '^mad-env: --check: the check failed: 1 of 3 ranks: rank 2 did not connect$' "$BATS_TEST_TMPDIR/rank0"
	grep -q '^mad-env: --check: rank 2 on .* cannot reach rank 0 at 127.0.0.1 port 1: Connection refused$' "$BATS_TEST_TMPDIR/rank2"
	grep -q '^RANK   HOST ' "$BATS_TEST_TMPDIR/rank0"
}

@test "mad-env --check: a bad time limit or an incomplete contract is a clear error" {
	run "${job[@]}" RANK=0 mad-env --check=0
	assert_failure 64
	assert_output --partial "mad-env: --check=0: not a number of seconds from 1 to 3600"
	run "${job[@]}" RANK=x mad-env --check=1
	assert_failure 1
	assert_output --partial "mad-env: --check: RANK is not a number (or too long) in the task's environment"
	run "${job[@]}" RANK=5 mad-env --check=1
	assert_failure 1
	assert_output --partial "mad-env: --check: rank 5 on "
	assert_output --partial ": RANK 5 is not in 0..2 (WORLD_SIZE 3)"
}
