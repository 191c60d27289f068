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

@test "mad.so under spur's long-lived host: memcheck-clean, and helgrind-clean with 16 jobs at once" {
	require valgrind "the suite installs it"
	host=$MAD_BUILDDIR/t/spur/spank-host
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
}

@test "mad-env, mad-mark and mad-wait: valgrind-clean on success, failure and bad input" {
	require valgrind "the suite installs it"
	local run_dir=$BATS_TEST_TMPDIR/run bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$run_dir" "$bin"
	printf '#!/bin/sh\necho "12 RUNNING 1:00:00"\n' >"$bin/squeue"
	chmod +x "$bin/squeue"
	vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=99)
	job=(env -i PATH="$bin:$PATH" SLURM_CONF=/nonexistent MAD_MODEL=m SLURM_JOB_ID=12
		SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=localhost MAD_RUN_DIR="$run_dir")
	for cmd in "mad-env" "mad-env --json" "mad-env --explain" "mad-env --check=2" "mad-env --check=x" "mad-mark 0" "mad-mark x" \
		"mad-wait --json 12" "mad-wait --follow=none-%a.out -q 12" "mad-wait --timeout=1 13" \
		"mad-wait 12_1" "mad-wait --bogus"; do
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
