#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Which build is which: every tool's --version, and mad-env --explain naming
# why mad.so did not run in a job that asked for a model (on a faked job
# environment; cluster-release.bats shows it on a real cluster).
# shellcheck disable=SC2016 # single-quoted scripts: the shell under test expands them

setup() {
	load ../lib.sh
	load_helpers
	version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	slurm=$(sed -n 's/^#define MAD_SLURM_VERSION "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	# A SLURM whose clients say they are 24.11.7, whatever is installed.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "slurm 24.11.7"\n' >"$BATS_TEST_TMPDIR/bin/srun"
	chmod +x "$BATS_TEST_TMPDIR/bin/srun"
	conf=$BATS_TEST_TMPDIR/slurm.conf
	echo "PlugStackConfig=$BATS_TEST_TMPDIR/plugstack.conf" >"$conf"
	job=(env -i PATH="$BATS_TEST_TMPDIR/bin:$PATH" SLURM_CONF="$conf" MAD_MODEL=m
		SLURM_JOB_ID=12 SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=localhost SLURM_NODEID=0)
}

# A file that says it is mad.so built for SLURM $1, as mad.so's load message does.
fake_so() {
	printf '\177ELF...mad: mad-spank 9.9, built for SLURM %s\0...' "$1" >"$BATS_TEST_TMPDIR/mad.so"
}

@test "every tool's --version is configure's version and the SLURM release it was built for" {
	[[ -n $version && -n $slurm ]]
	for tool in "${mad_tools[@]}"; do
		run "$tool" --version
		assert_success
		assert_output "$tool (mad-spank) $version, built for SLURM $slurm"
	done
}

@test "mad-env --explain says mad.so was built for another release than the one running" {
	fake_so 22.05.8
	echo "optional $BATS_TEST_TMPDIR/mad.so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	run "${job[@]}" mad-env --explain
	assert_success
	assert_line --partial 'NODE_RANK=0'
	assert_line --partial "# mad.so did not run in this job"
	assert_output --partial "was built for SLURM 22.05.8, and this job runs under SLURM 24.11.7"
	assert_output --partial "only into the major.minor it was built for"
}

@test "mad-env --explain says mad.so is not installed on this node" {
	echo "optional $BATS_TEST_TMPDIR/nowhere/mad.so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	run "${job[@]}" mad-env --explain
	assert_success
	assert_output --partial "mad.so is not installed on this node: $BATS_TEST_TMPDIR/plugstack.conf:1 names '$BATS_TEST_TMPDIR/nowhere/mad.so'"
}

@test "mad-env --explain with a build for the running release points at the slurmd log" {
	fake_so 24.11.1
	echo "optional $BATS_TEST_TMPDIR/mad.so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	run "${job[@]}" mad-env --explain
	assert_output --partial "built for SLURM 24.11.1, the release running here; see this node's slurmd log"
}

@test "mad-env --explain says so when no plugstack line names mad.so" {
	echo "optional /x/other.so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	run "${job[@]}" mad-env --explain
	assert_output --partial "no plugstack line loads mad.so here (looked in '$BATS_TEST_TMPDIR/plugstack.conf'"
}

@test "mad-env --explain on spur names a plugstack line spur reads as an empty path" {
	fake_so "$slurm"
	# two blanks: spur's splitn(3, whitespace) gives an empty path
	# (crates/spur-spank/src/lib.rs, parse_plugstack)
	printf 'optional  %s run-dir=/x\n' "$BATS_TEST_TMPDIR/mad.so" >"$BATS_TEST_TMPDIR/spur.conf"
	run "${job[@]}" SPUR_PLUGSTACK="$BATS_TEST_TMPDIR/spur.conf" SPUR_JOB_ID=12 mad-env --explain
	assert_success
	assert_output --partial "# mad.so did not run in this job"
	assert_output --partial "$BATS_TEST_TMPDIR/spur.conf:1 has two blanks before the path: spur"
	# one blank (or one tab) is read as SLURM reads it: the plugin is there
	printf 'optional\t%s run-dir=/x\n' "$BATS_TEST_TMPDIR/mad.so" >"$BATS_TEST_TMPDIR/spur.conf"
	run "${job[@]}" SPUR_PLUGSTACK="$BATS_TEST_TMPDIR/spur.conf" SPUR_JOB_ID=12 mad-env --explain
	refute_output --partial "two blanks"
	assert_output --partial "is there, built for SLURM $slurm; see the node daemon's log"
}

@test "mad-env --explain says nothing of the plugin in a job mad.so set up" {
	fake_so 22.05.8
	echo "optional $BATS_TEST_TMPDIR/mad.so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	run "${job[@]}" MAD_ENV_FROM=spank MAD_COLLECT_JOB_ID=12 mad-env --explain
	assert_success
	refute_output --partial "did not run"
}

@test "configure --version, the tools and the man pages do not disagree on the version" {
	[[ -n $version ]]
	# configure.ac's AC_INIT is the one place the version is written
	run "$MAD_SRCDIR/configure" --version
	assert_line --index 0 "mad-spank configure $version"
	run grep -c "^AC_INIT(\[mad-spank\], \[$version\]" "$MAD_SRCDIR/configure.ac"
	assert_output 1
	for tool in "${mad_tools[@]}"; do
		run "$tool" --version
		assert_output --regexp "^$tool \\(mad-spank\\) $version, "
	done
	# the man pages carry no version of their own to fall behind
	run grep -E '^\.TH .*[0-9]+\.[0-9]+\.[0-9]+' "$MAD_SRCDIR"/doc/*.[18]
	assert_output ''
}
