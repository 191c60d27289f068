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
	# one target per t/fuzz/fuzz-*.c, each named in Makefile.am's FUZZ_TARGETS,
	# and each of them ran (the count is the tree's, never written here)
	top=$BATS_TEST_DIRNAME/../..
	mapfile -t sources < <(cd "$top" && ls t/fuzz/fuzz-*.c)
	listed=$(sed -n '/^FUZZ_TARGETS =/,/[^\\]$/p' "$top/Makefile.am")
	for f in "${sources[@]}"; do
		[[ $listed == *"${f%.c}"[[:space:]]* || $listed == *"${f%.c}" ]] ||
			{ echo "$f has no target in Makefile.am's FUZZ_TARGETS"; false; }
	done
	ran=$(grep -c 'stat::number_of_executed_units' <<<"$output")
	((ran == ${#sources[@]})) || { echo "$ran targets ran, of ${#sources[@]}"; false; }
}
