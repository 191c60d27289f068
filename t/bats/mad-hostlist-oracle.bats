#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-hostlist expand against scontrol show hostnames on generated lists.

setup() {
	load ../lib.sh
	load_helpers
}

@test "1,200 valid lists expand exactly as scontrol does; 300 bad ones fail" {
	require scontrol "the oracle is SLURM's own expander (Debian package slurm-client)"
	require python3 "the case generator"
	run "$MAD_SRCDIR/t/oracle/hostlist-oracle" --valid 1200 --invalid 300
	echo "$output" | tail -20
	assert_success
	assert_output --regexp '[0-9]+ passed, 0 failed'
}
