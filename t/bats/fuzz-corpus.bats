#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The fuzz corpus replayed through the tool, and (with clang) a short fuzz run.

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
	writer=$MAD_BUILDDIR/plugin/mad-writer
	for f in "$MAD_SRCDIR"/t/corpus/writer/*; do
		run --separate-stderr "$writer" <"$f"
		# 123, 124: refused (made by another version; malformed); 125: the
		# drop to its user failed (not root); 126: its folder,
		# /nonexistent/run, cannot be opened
		case $status in
		123 | 124) [[ $stderr == 'mad-writer: standard input: '* ]] || { echo "$f: $stderr"; false; } ;;
		125 | 126) [[ -z $stderr ]] || { echo "$f: $stderr"; false; } ;;
		*) echo "$f: status $status"; false ;;
		esac
		[[ -z $output ]]
	done
	run "$writer" --version
	assert_output --regexp '^mad-writer \(mad-spank\) [0-9]'
}
