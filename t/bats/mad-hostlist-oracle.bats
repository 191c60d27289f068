#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-hostlist expand against scontrol show hostnames on generated lists.

setup() {
	load ../lib.sh
	load_helpers
}

# 1,500 scontrol runs; a sanitized build asks a quarter (t/lib.sh, trials): in
# t/suite's ASan pass, on a loaded machine, the whole took over 900 s.
@test "1,200 valid lists expand exactly as scontrol does; 300 bad ones fail (a quarter under ASan)" {
	require scontrol "the oracle is SLURM's own expander (Debian package slurm-client)"
	require python3 "the case generator"
	run "$MAD_SRCDIR/t/oracle/hostlist-oracle" --valid "$(trials 1200)" --invalid "$(trials 300)"
	echo "$output" | tail -20
	assert_success
	assert_output --regexp '[0-9]+ passed, 0 failed'
}
