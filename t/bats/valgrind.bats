#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
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

@test "mad.so under spur's real long-lived host: memcheck-clean, and helgrind-clean with 16 jobs at once" {
	require valgrind "the suite installs it"
	host=$MAD_BUILDDIR/t/spur/spurd-spank
	require_spur_host "$host"
	plugstack=$BATS_TEST_TMPDIR/plugstack.conf
	echo "optional $MAD_BUILDDIR/plugin/.libs/mad.so" >"$plugstack"
	# one job, its command and its end hooks
	run valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
		"$host" "$plugstack" MAD_MODEL=m SLURM_JOB_ID=5 SPUR_JOB_ID=5 SLURM_NODEID=1 \
		SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2 'SLURM_JOB_NODELIST=198.51.100.1,n2' -- /bin/true
	[[ $status -ne 99 ]] || { echo "$output"; false; }
	assert_success
	# many jobs through the plugin loaded once, one after another
	run valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
		"$host" --jobs 100 "$plugstack"
	[[ $status -ne 99 ]] || { echo "$output"; false; }
	assert_output --partial '100 jobs, 1 at a time, 1 plugin loaded once: 0 with a wrong env, 0 of 16 different'
	# and 16 at once: glibc's one-time NSS setup is the only thing suppressed (see the file)
	run valgrind -q --tool=helgrind --suppressions="$MAD_SRCDIR/t/spur/helgrind.supp" \
		--error-exitcode=99 "$host" --jobs 200 --concurrent 16 "$plugstack"
	[[ $status -ne 99 ]] || { echo "$output" | head -60; false; }
	assert_output --partial '200 jobs, 16 at a time, 1 plugin loaded once: 0 with a wrong env, 0 of 16 different'
	# the host is Rust, its std locks invisible to helgrind: helgrind.supp hides races whose
	# access is in the host's own code; one in a plugin's code is still reported
	echo "optional $MAD_BUILDDIR/t/spur/.libs/api-probe.so" >"$BATS_TEST_TMPDIR/probe.conf"
	run valgrind -q --tool=helgrind --suppressions="$MAD_SRCDIR/t/spur/helgrind.supp" \
		--error-exitcode=99 "$host" --jobs 20 --concurrent 4 "$BATS_TEST_TMPDIR/probe.conf" PROBE_RACE=1
	assert_failure 99
	assert_output --partial 'Possible data race'
	assert_output --partial '(api-probe.c:'
}

@test "mad-env, mad-mark and mad-wait: valgrind-clean on success, failure and bad input" {
	require valgrind "the suite installs it"
	local run_dir=$BATS_TEST_TMPDIR/run bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$run_dir" "$bin"
	printf '#!/bin/sh\necho "12 RUNNING 1:00:00 %s 2000-01-01T00:00:00 2000-01-01T00:00:00"\n' "$(id -un)" >"$bin/squeue"
	chmod +x "$bin/squeue"
	# --follow over a file with lines and a partial one, and over a link to a device
	printf 'one\ntwo\npartial' >"$BATS_TEST_TMPDIR/out-12.out"
	ln -s /dev/zero "$BATS_TEST_TMPDIR/zero-12.out"
	vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99)
	job=(env -i PATH="$bin:$PATH" SLURM_CONF=/nonexistent MAD_MODEL=m SLURM_JOB_ID=12
		SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=localhost MAD_RUN_DIR="$run_dir")
	for cmd in "mad-env" "mad-env --json" "mad-env --explain" "mad-env --check=2" "mad-env --check=x" "mad-mark 0" "mad-mark x" \
		"mad-wait --timeout=2 --json 12" "mad-wait --timeout=2 --follow=none-%a.out -q 12" \
		"mad-wait --timeout=2 --follow=$BATS_TEST_TMPDIR/out-%j.out -q 12" \
		"mad-wait --timeout=2 --follow=$BATS_TEST_TMPDIR/zero-%j.out -q 12" \
		"mad-wait --timeout=1 13" "mad-wait --timeout=2 12_1" "mad-wait --bogus"; do
		# shellcheck disable=SC2086
		run "${job[@]}" "${vg[@]}" $cmd
		[[ $status -ne 99 ]] || { echo "valgrind: $cmd: $output"; false; }
	done
}

@test "mad-render: valgrind-clean on the job template, and on bad templates and data" {
	require valgrind "the suite installs it"
	local d=$BATS_TEST_TMPDIR
	vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99)
	printf '{%% if x %%}\n' >"$d/open.j2"
	printf '{{ a | nosuch }}\n' >"$d/filter.j2"
	printf 'a: [1,\n' >"$d/bad.yaml"
	printf '{"a": 1.5}' >"$d/bad.json"
	for args in "-c $MAD_SRCDIR/templates/example.yaml $MAD_SRCDIR/templates/job.sh.j2" \
		"-c $MAD_SRCDIR/templates/example.yaml -D scheduler=spur -D fanout=array -o $d/out.sh $MAD_SRCDIR/templates/job.sh.j2" \
		"-D x=1 $d/open.j2" "-D a=1 $d/filter.j2" "-c $d/bad.yaml $d/open.j2" "-c $d/bad.json $d/open.j2" \
		"--bogus" "-D 1=2 $d/open.j2"; do
		# shellcheck disable=SC2086
		run "${vg[@]}" mad-render $args
		[[ $status -ne 99 ]] || { echo "valgrind: mad-render $args: $output"; false; }
	done
}

@test "a lookup past its deadline: 8 threads at once, helgrind-clean, and each question freed once its late answer comes" {
	require valgrind "the suite installs it"
	require_root "a network and mount namespace with a silent name server"
	require unshare "Debian package util-linux"
	require ip "Debian package iproute2"
	require python3 "the silent name server"
	resolve=("$MAD_BUILDDIR/t/unit/resolve" --threads 8 --linger 4 mad-silent-node /etc/hosts 300)
	# glibc gives up after 1 s, 4 s before the program ends.  glibc 2.36 frees
	# rows of getaddrinfo_a's pool it never set when valgrind runs its
	# freeres at exit (resolv/gai_misc.c free_res): not ours, left out.
	run silent_resolver 1 1 valgrind -q --run-libc-freeres=no --leak-check=full \
		--show-leak-kinds=definite,possible "${resolve[@]}"
	assert_success
	[[ $(grep -c 'the resolver did not answer within 0.3 s' <<<"$output") -eq 8 ]]
	# a block netaddr.c allocated itself that is lost (the detached threads'
	# own stacks are glibc's, and possibly lost at exit)
	lost=$(awk '/are (definitely|possibly) lost/ { rec = 1; next }
		rec && / by / { if ($0 ~ /netaddr\.c/) print; rec = 0 }' <<<"$output")
	[[ -z $lost ]] || { echo "$output"; false; }
	run silent_resolver 1 1 valgrind -q --tool=helgrind \
		--suppressions="$MAD_SRCDIR/t/spur/helgrind.supp" --error-exitcode=99 "${resolve[@]}"
	[[ $status -ne 99 ]] || { echo "$output" | head -60; false; }
	assert_success
}

@test "mad-writer: valgrind-clean writing markers as their user, and on every request of the corpus" {
	require valgrind "the suite installs it"
	writer=$MAD_BUILDDIR/t/unit/mad-writer-dynamic # mad-writer's source, linked dynamically
	# the unit test runs it on good and bad requests (as root: dropping to nobody and writing);
	# no vgdb: its pipes in /tmp are root's, which a writer that dropped its ids cannot remove
	run env MAD_WRITER="$writer" valgrind -q --vgdb=no --trace-children=yes --trace-children-skip='*/sh,*/rm' \
		--leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
		"$MAD_BUILDDIR/t/unit/test-writer"
	[[ $status -ne 99 ]] || { echo "$output"; false; }
	assert_success
	assert_output --partial "# $(grep -c '^[[:space:]]*RUN(' "$MAD_SRCDIR/t/unit/test-writer.c") passed, 0 failed"
	for f in "$MAD_SRCDIR"/t/corpus/writer/*; do
		# this build's version in the header, so the request's check and run are reached
		writer_request_of_this_build "$f" "$writer" >"$BATS_TEST_TMPDIR/request"
		run valgrind -q --vgdb=no --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99 "$writer" <"$BATS_TEST_TMPDIR/request"
		[[ $status -ne 99 ]] || { echo "valgrind: $f: $output"; false; }
	done
}
