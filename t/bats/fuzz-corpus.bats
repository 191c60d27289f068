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
