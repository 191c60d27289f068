#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# A short libFuzzer run of each target on a copy of its corpus (t/suite runs
# this; "make fuzz-run FUZZ_SECONDS=300" is the long run).

setup() {
	load ../lib.sh
	load_helpers
}

@test "libFuzzer: each target (host lists; job envs through mad.so; what mad-wait reads; templates and data; what rank 0 of the check reads; the hosts file; NCCL's configuration file; mad-writer's request) replays its corpus and fuzzes 20 s" {
	require clang "libFuzzer (Debian package clang)"
	[[ -n ${MAD_BUILD:-} ]] || { echo "MAD_BUILD must name a configured build"; false; }
	cd "$MAD_BUILD"
	run make fuzz-run FUZZ_SECONDS=20
	echo "$output" | tail -5
	assert_success
	# every target of Makefile.am's FUZZ_TARGETS ran: its count is read there, not written here
	targets=$(sed -n '/^FUZZ_TARGETS =/,/[^\\]$/p' "$BATS_TEST_DIRNAME/../../Makefile.am" | grep -o 't/fuzz/fuzz-[a-z-]*' | wc -l)
	((targets >= 8))
	[[ $(grep -c 'stat::number_of_executed_units' <<<"$output") -eq $targets ]]
}
