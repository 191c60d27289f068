#!/usr/bin/env bats
# The tools under valgrind: no invalid access, no leak, on good and bad input.

setup() {
	load ../lib.sh
	load_helpers
}

@test "mad-hostlist: valgrind-clean on every command" {
	require valgrind "the suite installs it"
	for args in "expand n[1-50]x[1-2]" "--sort --uniq compress n3,n1,n3" \
		"count n[1-9]" "nth 3 n[1-9]" "expand n[5-3]" "--uniq expand a,a"; do
		# shellcheck disable=SC2086
		run valgrind -q --leak-check=full --errors-for-leak-kinds=all \
			--error-exitcode=99 mad-hostlist $args
		[[ $status -ne 99 ]] || { echo "valgrind: $args: $output"; false; }
	done
}
