#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-hostlist expand against scontrol show hostnames on generated lists.

setup() {
	load ../lib.sh
	load_helpers
}

# 1,500 scontrol runs; t/suite's ASan pass, on a loaded machine, asks a quarter
# (MAD_ORACLE_VALID, MAD_ORACLE_INVALID), and its distcheck the whole.
@test "1,200 valid lists expand exactly as scontrol does; 300 bad ones fail (a quarter under ASan)" {
	require scontrol "the oracle is SLURM's own expander (Debian package slurm-client)"
	require python3 "the case generator"
	run "$MAD_SRCDIR/t/oracle/hostlist-oracle" --valid "${MAD_ORACLE_VALID:-1200}" --invalid "${MAD_ORACLE_INVALID:-300}"
	echo "$output" | tail -20
	assert_success
	assert_output --regexp '[0-9]+ passed, 0 failed'
}
