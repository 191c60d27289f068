#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Name lookups are bounded (design.md §5, §9): rank 0's node is looked up in
# the hosts file first, and a resolver that never answers fails the lookup
# within MAD_RESOLVE_TIMEOUT (lib/netaddr.h) instead of holding the task, or
# spurd's worker thread, for as long as glibc would wait.  Each test runs in
# a namespace of its own whose name server reads and never answers
# (silent_resolver in t/lib.sh).
# shellcheck disable=SC2016 # the scripts are single-quoted: the shell under test expands them

setup() {
	load ../lib.sh
	load_helpers
	require_root "a network and mount namespace with a silent name server"
	require unshare "Debian package util-linux"
	require ip "Debian package iproute2"
	require python3 "the silent name server"
	deadline=$(sed -n 's/^#define MAD_RESOLVE_TIMEOUT \([0-9][0-9]*\).*/\1/p' "$MAD_SRCDIR/lib/netaddr.h")
	[[ -n $deadline ]]
	job=(env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=1)
}

@test "mad-env: a resolver that never answers fails within the deadline, naming the host and the deadline" {
	export SILENT_RESOLVER_LOG=$BATS_TEST_TMPDIR/asked
	# glibc alone would wait its timeout x attempts: the answer to "whose bound
	# ended the wait" is in the message and in a time between the deadline
	# and two of them.  The clock runs inside the namespace (its start and
	# the name server's are not the deadline's) and stops at the message,
	# not at mad-env's exit: in the ASan build the exit runs LeakSanitizer,
	# whose thread stops took seconds more on a loaded machine (17.5 s from
	# start to exit in a CI run).  The clock's non-digits are dropped, so a
	# comma locale cannot break it.
	local glibc_timeout=30 glibc_attempts=2
	run silent_resolver "$glibc_timeout" "$glibc_attempts" timeout 100 "${job[@]}" SLURM_JOB_NODELIST=mad-silent-node \
		bash -c 's=${EPOCHREALTIME//[!0-9]/}
			mad-env 2>&1 | while IFS= read -r line; do
				printf "%s\n" "$line" "said_ms $(((${EPOCHREALTIME//[!0-9]/} - s) / 1000))"
			done
			exit "${PIPESTATUS[0]}"'
	echo "$output"
	assert_failure 1
	assert_output --partial "cannot resolve rank 0's node 'mad-silent-node': not in /etc/hosts, and the resolver did not answer within $deadline s"
	# the stamp of the message's own line; at least the deadline less 1 s, and less than
	# two deadlines (one per address family, or a retry, would be a second), which are
	# less than glibc's own wait
	said_ms=$(sed -n '/did not answer within/{n;s/^said_ms //p;q}' <<<"$output")
	((deadline * 2 < glibc_timeout * glibc_attempts))
	((said_ms >= (deadline - 1) * 1000 && said_ms < deadline * 2 * 1000))
	# the name reached the name server (bare, or with the host's search domain)
	grep -q '^mad-silent-node\(\.\|$\)' "$SILENT_RESOLVER_LOG"
}

@test "mad-env: a name in the hosts file needs no resolver" {
	# what the name server was asked, not a clock: on a loaded machine two
	# namespace starts alone can take seconds
	export SILENT_RESOLVER_LOG=$BATS_TEST_TMPDIR/asked
	run silent_resolver 30 2 timeout 100 "${job[@]}" SLURM_JOB_NODELIST=mad-listed-node \
		bash -c 'eval "$(mad-env)" && echo "$MASTER_ADDR"'
	assert_success
	assert_output 192.0.2.41
	run silent_resolver 30 2 timeout 100 "${job[@]}" SLURM_JOB_NODELIST=mad-listed-v6 \
		bash -c 'eval "$(mad-env)" && echo "$MASTER_ADDR"'
	assert_success
	assert_output 2001:db8::41
	run cat "$SILENT_RESOLVER_LOG"
	assert_output ''
}

@test "16 threads at once, each within its deadline; the late answers are freed" {
	# glibc gives up after 1 s: the answers come after the 0.3 s deadline,
	# within the 4 s the program lingers (LeakSanitizer in an ASan build,
	# valgrind.bats in a plain one, watch them freed).  A thread may take up
	# to 4 s on a loaded machine; 16 deadlines in turn would take 4.8 s.
	run silent_resolver 1 1 timeout 60 "$MAD_BUILDDIR/t/unit/resolve" --threads 16 --linger 4 \
		mad-silent-node /etc/hosts 300
	echo "$output"
	assert_success
	[[ $(grep -c "error cannot resolve rank 0's node 'mad-silent-node': not in /etc/hosts, and the resolver did not answer within 0.3 s" <<<"$output") -eq 16 ]]
	while read -r ms _; do
		((ms >= 300 && ms <= 4000)) || { echo "a thread took $ms ms"; false; }
	done <<<"$output"
}
