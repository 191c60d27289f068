#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The fuzz corpus replayed through the tool, and (with clang) a short fuzz run.

bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	load_helpers
}

@test "every corpus input: exit 0 with output, or exit 1 with a message" {
	for f in "$MAD_SRCDIR"/t/corpus/hostlist/*; do
		run --separate-stderr mad-hostlist --max-hosts=100000 expand - < "$f"
		if [[ $status -eq 0 ]]; then
			[[ -n $output && -z $stderr ]] || { echo "$f: empty"; false; }
		else
			[[ $status -eq 1 && -z $output && $stderr == mad-hostlist:* ]] ||
				{ echo "$f: status $status, stderr $stderr"; false; }
		fi
	done
}

@test "every marker writer request in the corpus: refused with a message, or carried out as its user, never as root" {
	local past=0
	writer=$MAD_BUILDDIR/plugin/mad-writer
	run "$writer" --version
	assert_output --regexp '^mad-writer \(mad-spank\) [0-9]'
	for f in "$MAD_SRCDIR"/t/corpus/writer/*; do
		writer_request_of_this_build "$f" "$writer" >"$BATS_TEST_TMPDIR/request"
		run --separate-stderr "$writer" <"$BATS_TEST_TMPDIR/request"
		# lib/writer.h: 81 malformed; 82 the drop to its user failed (not root); 83 its
		# folder, /nonexistent/run, cannot be opened; never 80 (another build's) here
		case $status in
		81) [[ $stderr == 'mad-writer: standard input: '* ]] || { echo "$f: $stderr"; false; } ;;
		82 | 83)
			[[ $stderr == 'mad-writer: '* && $stderr != *'standard input'* ]] || { echo "$f: $stderr"; false; }
			past=$((past + 1))
			;;
		*) echo "$f: status $status: $stderr"; false ;;
		esac
		[[ -z $output ]]
	done
	# the corpus's well-formed requests (a batch marker, a node's eight, a step's) get past the check
	[[ $past -ge 3 ]] || { echo "only $past requests of the corpus reached the drop"; false; }
}
