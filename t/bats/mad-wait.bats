#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-wait on fake run folders with a fake squeue first on PATH (the cluster
# tests use real jobs): usage, finding the run folder, bad markers, several
# jobs, whose job it is, Ctrl-C, requeued attempts, step tasks, the cost of
# a poll over 1,024 ranks and over a step of 1,024 tasks, and --follow's
# bounds (memory, time, and what it reads).

bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	load_helpers
	run_dir=$BATS_TEST_TMPDIR/run
	bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$run_dir" "$bin"
	# squeue answers from $BATS_TEST_TMPDIR/queue, and counts its calls; a
	# line "ID STATE LIMIT" gets the caller as %u, a submit time long ago as
	# %V and as %S the same, or N/A as SLURM prints for a job waiting to run
	# (the trust and re-run tests give their own)
	cat >"$bin/squeue" <<-EOF
		#!/bin/sh
		echo "\$*" >>"$BATS_TEST_TMPDIR/squeue.calls"
		[ -r "$BATS_TEST_TMPDIR/queue" ] || exit 1
		awk -v u="\$(id -un)" 'NF == 3 { v = "2000-01-01T00:00:00"; s = \$2 == "PENDING" || \$2 ~ /^REQUEUE/ ? "N/A" : v
			\$0 = \$0 " " u " " v " " s } { print }' "$BATS_TEST_TMPDIR/queue"
	EOF
	chmod +x "$bin/squeue"
	export PATH="$bin:$PATH" SLURM_CONF=$BATS_TEST_TMPDIR/none/slurm.conf
	unset MAD_RUN_DIR SPUR_PLUGSTACK
}

# The folder of job ID or ID.RESTART as the writers make it, with its
# attempt file (lib/jobdir.h).
jobdir() { # job
	local id=${1%%.*} restart=0
	[[ $1 == *.* ]] && restart=${1#*.}
	mkdir -p "$run_dir/$1"
	[[ -e $run_dir/$1/attempt ]] ||
		printf 'cluster=x\njob=%s\nrestart=%s\n' "$id" "$restart" >"$run_dir/$1/attempt"
}

marker() { # job rank content
	jobdir "$1"
	printf '%b' "$3" >"$run_dir/$1/done_rank$2"
}

expect() { # job count
	jobdir "$1"
	echo "$2" >"$run_dir/$1/expected"
}

@test "usage errors name the input and exit 64" {
	run mad-wait
	assert_failure 64
	assert_output --partial "no job id given"
	run mad-wait -d "$run_dir" 12_3
	assert_failure 64
	assert_output --partial "job id '12_3': give the array job id"
	run mad-wait -d "$run_dir" abc
	assert_failure 64
	assert_output --partial "'abc' is not a job id"
	run mad-wait -d "$run_dir" --timeout=5x 12
	assert_failure 64
	assert_output --partial "--timeout: '5x' is not a duration"
	run mad-wait -d "$run_dir" --nnodes 0 12
	assert_failure 64
	run mad-wait -d "$run_dir" 12 12
	assert_failure 64
	assert_output --partial "given twice"
	run mad-wait --bogus 12
	assert_failure 64
	run mad-wait -d "$BATS_TEST_TMPDIR/nope" 12
	assert_failure 64
	assert_output --partial "run folder '$BATS_TEST_TMPDIR/nope' (from --run-dir)"
}

@test "no run folder anywhere: says how to configure one, exit 64" {
	run mad-wait 12
	assert_failure 64
	assert_output --partial "no run folder: give --run-dir DIR, set MAD_RUN_DIR, or add run-dir=DIR"
	assert_output --partial "$BATS_TEST_TMPDIR/none/plugstack.conf"
}

@test "the run folder from SLURM's plugstack.conf: PlugStackConfig, an include, relative to it" {
	mkdir -p "$BATS_TEST_TMPDIR/etc/plugstack.conf.d"
	printf 'ClusterName=x\nPlugStackConfig=%s/etc/my-plugstack.conf # site\n' "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/etc/slurm.conf"
	printf 'optional /x/pyxis.so\ninclude plugstack.conf.d/*.conf\n' >"$BATS_TEST_TMPDIR/etc/my-plugstack.conf"
	printf 'required /usr/lib/slurm/mad.so timeout=30 run-dir=%s\n' "$run_dir" >"$BATS_TEST_TMPDIR/etc/plugstack.conf.d/mad.conf"
	expect 12 1
	marker 12 0 '0\n'
	# squeue says when the job was submitted: a marker written before the
	# wait began then decides however late a loaded machine starts it
	printf '12 RUNNING 1:00:00\n' >"$BATS_TEST_TMPDIR/queue"
	run env SLURM_CONF="$BATS_TEST_TMPDIR/etc/slurm.conf" mad-wait --json 12
	assert_success
	assert_output --partial "\"run_dir\":	\"$run_dir\""
	# spur's, named by SPUR_PLUGSTACK, comes first
	mkdir -p "$BATS_TEST_TMPDIR/spur-run/12"
	printf 'cluster=x\njob=12\nrestart=0\n' >"$BATS_TEST_TMPDIR/spur-run/12/attempt"
	printf '1\n' >"$BATS_TEST_TMPDIR/spur-run/12/done_rank0"
	echo "optional /opt/mad.so run-dir=$BATS_TEST_TMPDIR/spur-run" >"$BATS_TEST_TMPDIR/spur.conf"
	run env SLURM_CONF="$BATS_TEST_TMPDIR/etc/slurm.conf" SPUR_PLUGSTACK="$BATS_TEST_TMPDIR/spur.conf" mad-wait --nnodes 1 12
	assert_failure 1
	# MAD_RUN_DIR beats both
	run env SPUR_PLUGSTACK="$BATS_TEST_TMPDIR/spur.conf" MAD_RUN_DIR="$run_dir" mad-wait 12
	assert_success
}

@test "the run folder by mad.so's rules: a relative MAD_RUN_DIR or run-dir= fails as in mad.so, exit 64" {
	mkdir -p "$BATS_TEST_TMPDIR/rel"
	cd "$BATS_TEST_TMPDIR"
	# mad.so's message (mad-env resolves the options with its code)
	run env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=12 SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=n1 \
		MAD_RUN_DIR=rel mad-env
	assert_failure
	assert_output --partial "--mad-run-dir: 'rel' is not an absolute path (from MAD_RUN_DIR)"
	run env MAD_RUN_DIR=rel mad-wait 12
	assert_failure 64
	assert_output "mad-wait: --mad-run-dir: 'rel' is not an absolute path (from MAD_RUN_DIR)"
	echo "optional /opt/mad.so run-dir=rel" >"$BATS_TEST_TMPDIR/spur.conf"
	run env SPUR_PLUGSTACK="$BATS_TEST_TMPDIR/spur.conf" mad-wait 12
	assert_failure 64
	assert_output "mad-wait: --mad-run-dir: 'rel' is not an absolute path (from plugstack.conf)"
}

@test "garbage and empty markers are failures with a message naming the file" {
	expect 20 2
	marker 20 0 '0\n'
	marker 20 1 'Traceback (most recent call last):\n'
	run mad-wait -d "$run_dir" 20
	assert_failure 1
	assert_output --partial "rank 1: marker '$run_dir/20/done_rank1': first line 'Traceback (most recent call last):' is not an exit status"
	expect 21 1
	marker 21 0 ''
	local t0=$SECONDS
	run mad-wait -d "$run_dir" 21
	assert_failure 1
	assert_output --partial "marker '$run_dir/21/done_rank0' is still empty after 5 s"
	(((SECONDS - t0) >= 4))
	# an empty marker that gets its content in time is fine
	expect 22 1
	marker 22 0 ''
	(sleep 1; printf '0\n' >"$run_dir/22/done_rank0") &
	run mad-wait -d "$run_dir" 22
	assert_success
}

@test "several job ids: one squeue call for all, worst outcome wins, JSON per job and rank" {
	expect 30 2
	marker 30 0 "0\nrank=0\nhost=a\ntime=$(date +%s)\n"
	expect 31 1
	printf '30 RUNNING 1:00:00\n31 RUNNING 1:00:00\n' >"$BATS_TEST_TMPDIR/queue"
	# the last markers come once squeue was first asked: about one interval
	# before the next call, however late the machine lets mad-wait start
	(
		for _ in $(seq 200); do [[ -s $BATS_TEST_TMPDIR/squeue.calls ]] && break; sleep 0.05; done
		marker 30 1 '0\n'
		marker 31 0 '0\n'
	) &
	run -0 mad-wait -d "$run_dir" --json --interval 2 30 31
	cat "$BATS_TEST_TMPDIR/squeue.calls"
	# asked at once about both (whose markers count, since when), then
	# once an interval, one list a call: about the jobs still undecided,
	# which under load may be 31 alone when 30's last marker came first
	(($(wc -l <"$BATS_TEST_TMPDIR/squeue.calls") <= 2))
	[[ $(head -1 "$BATS_TEST_TMPDIR/squeue.calls") == '--noheader --states=all --jobs 30,31 --format %i %T %l %u %V %S' ]]
	if grep -qvxE -- '--noheader --states=all --jobs (30,31|30|31) --format %i %T %l %u %V %S' "$BATS_TEST_TMPDIR/squeue.calls"; then false; fi
	assert_output --partial '"job_id":	30'
	assert_output --partial '"job_id":	31'
	assert_output --partial '"host":	"a"'
	expect 32 1
	marker 32 0 '0\n'
	expect 33 1
	marker 33 0 '7\nerror=disk full\n'
	run mad-wait -d "$run_dir" --json 32 33
	assert_failure 1
	assert_output --partial '"verdict":	"failed"'
	assert_output --partial "rank 0 failed with exit status 7: disk full"
}

@test "whose job it is: a user this host cannot resolve, or rows that disagree, end the wait with exit 3; a numeric user is a uid" {
	local ghost=mad-no-such-user-$$ long_ago=2000-01-01T00:00:00
	if getent passwd "$ghost"; then false; fi
	expect 35 1
	marker 35 0 '0\n'
	# the job's folder and markers are there, but whose job is it?
	printf '35 RUNNING 10 %s %s N/A\n' "$ghost" "$long_ago" >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 10 35
	assert_failure 3
	assert_output --partial "mad-wait: job 35: squeue names its user '$ghost', whom this host cannot resolve (getpwnam): no such user"
	# a number is the uid SLURM could not name: files of another uid do not count
	printf '35 RUNNING 10 4321 %s N/A\n' "$long_ago" >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 3 35
	assert_failure 124
	assert_output --partial "not the job's user (uid 4321)"
	printf '35 RUNNING 10 %s %s N/A\n' "$(id -u)" "$long_ago" >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 10 35
	assert_success
	# several clusters answering (SLURM_CLUSTERS, -M): two users, two submit times
	printf '35 RUNNING 10 %s %s N/A\n35 PENDING 10 root %s N/A\n' "$(id -un)" "$long_ago" "$long_ago" \
		>"$BATS_TEST_TMPDIR/queue"
	[[ $(id -un) != root ]] || sed -i '2s/ root / daemon /' "$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 10 35
	assert_failure 3
	assert_output --regexp "mad-wait: job 35: squeue lists it under two users, '$(id -un)' and '(root|daemon)': several clusters answering"
	printf '35 RUNNING 10 %s %s N/A\n35 RUNNING 10 %s 2001-01-01T00:00:00 N/A\n' "$(id -un)" "$long_ago" "$(id -un)" \
		>"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 10 --json 35
	assert_failure 3
	assert_output --partial "squeue lists 35 twice, submitted at $long_ago and at 2001-01-01T00:00:00: several clusters answering"
	assert_output --partial '"verdict":	"unknown"'
}

@test "a job gone from the queue is confirmed over several polls, then exit 2 naming the missing ranks" {
	expect 40 3
	marker 40 1 '0\n'
	printf '40 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	(sleep 1; : >"$BATS_TEST_TMPDIR/queue") &
	run mad-wait -d "$run_dir" --interval 0.5 --grace 2 40
	assert_failure 2
	assert_output --partial "ranks 0,2 wrote no marker within 2 s"
	(($(wc -l <"$BATS_TEST_TMPDIR/squeue.calls") >= 4))
}

@test "a job listed only as ended, then dropped, is gone after --grace, not after the startup grace (spur 0.8's requeue)" {
	# spur 0.8's requeue cancels the job (spur #629), and the cluster drops
	# an ended job after MinJobAge: the first answer lists it CANCELLED, the
	# next ones not at all
	expect 41 1
	printf '41 CANCELLED 10\n' >"$BATS_TEST_TMPDIR/queue"
	mv "$bin/squeue" "$bin/squeue.real"
	cat >"$bin/squeue" <<-EOF
		#!/bin/sh
		"$bin/squeue.real" "\$@"
		: >"$BATS_TEST_TMPDIR/queue"
	EOF
	chmod +x "$bin/squeue"
	run mad-wait -d "$run_dir" --interval 0.5 --grace 1 --timeout 20 41
	assert_failure 2
	assert_output --partial "job 41: the job left the queue (last state CANCELLED) and ranks 0 wrote no marker within 1 s"
}

@test "a job listed running --overtime past its time limit is lost: exit 2 naming why (spur #803); its markers still decide" {
	# spur's controller lists a job RUNNING for hours after its node's spurd
	# restarted (spur #803): a time limit of 2 s, an overtime of 1 s
	expect 45 2
	marker 45 0 '0\n'
	printf '45 RUNNING 0:02\n' >"$BATS_TEST_TMPDIR/queue"
	SECONDS=0
	run mad-wait -d "$run_dir" --interval 0.5 --overtime 1 45
	assert_failure 2
	assert_output --partial "squeue still lists the job RUNNING"
	assert_output --partial "past its time limit (2 s"
	assert_output --partial "ranks missing: 1: the scheduler has lost it (its node daemon restarted mid-job: spur #803)"
	((SECONDS < 30))
	# the markers are the job's own: written, they decide however long it is listed
	marker 45 1 '0\n'
	run mad-wait -d "$run_dir" --interval 0.5 --overtime 1 45
	assert_success
	# unlimited: nothing tells it lost; bounded by --timeout
	rm "$run_dir/45/done_rank1"
	printf '45 RUNNING UNLIMITED\n' >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --interval 0.5 --overtime 1 --timeout 4 45
	assert_failure 124
	assert_output --partial "ranks missing: 1"
	run mad-wait -d "$run_dir" --overtime=-1 45
	assert_failure 64
	assert_output --partial "--overtime: '-1' is not a duration"
}

@test "Ctrl-C: exit 130 and the job is left alone" {
	expect 50 1
	printf '50 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	# a background job of this shell starts with SIGINT ignored, and mad-wait
	# sets its handlers before it first asks squeue: the signal is sent after
	# that call (at most 30 s on), and a watchdog ends a mad-wait that missed
	# it at 60 s (a failure, never a hang of the run)
	mad-wait -d "$run_dir" 50 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	(sleep 60 && kill -KILL "$pid") >/dev/null 2>&1 3>&- &
	watchdog=$!
	for _ in $(seq 600); do [[ -s $BATS_TEST_TMPDIR/squeue.calls ]] && break; sleep 0.05; done
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	kill "$watchdog" 2>/dev/null || true
	[[ -s $BATS_TEST_TMPDIR/squeue.calls ]]
	[[ $rc == 130 ]]
	grep -q "interrupted by signal 2; the job is left alone" "$BATS_TEST_TMPDIR/err"
}

# mad-wait on JOB for 6 s (about 6 polls) under strace: $opens and $reads.
poll_cost() {
	printf '%s RUNNING 10\n' "$1" >"$BATS_TEST_TMPDIR/queue"
	# LeakSanitizer cannot run under ptrace (the ASan build runs this too)
	run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -c -o "$BATS_TEST_TMPDIR/strace" -e trace=openat,getdents64 \
		mad-wait -d "$run_dir" --timeout 6 --interval 60 "$1"
	assert_failure 124
	cat "$BATS_TEST_TMPDIR/strace"
	opens=$(awk '$NF == "openat" { print $4 }' "$BATS_TEST_TMPDIR/strace")
	reads=$(awk '$NF == "getdents64" { print $4 }' "$BATS_TEST_TMPDIR/strace")
	echo "openat: $opens, getdents64: $reads over about 6 polls"
}

@test "1,024 ranks: a poll is one directory read, not 1,024 opens" {
	require strace "counts system calls"
	expect 60 1024
	for ((r = 0; r < 1023; r++)); do printf '0\n' >"$run_dir/60/done_rank$r"; done
	poll_cost 60
	# 1,023 markers read once, plus the program's own files; never again per poll
	((opens < 1023 + 150))
	((reads >= 6 * 2))
	# and without inotify's help too: the same with a poll per second
}

@test "squeue is asked at once: a job it does not list yet is 'not listed yet'" {
	expect 70 1
	: >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --json --timeout 2 70
	assert_failure 124
	assert_output --partial "mad-wait: job 70: 0/1 done, not listed yet"
	refute_output --partial "not asked yet"
	[[ $(head -1 "$BATS_TEST_TMPDIR/squeue.calls") == '--noheader --states=all --jobs 70,70 --format %i %T %l %u %V %S' ]]
}

@test "a requeued job: the failed attempt does not end the wait, the next decides; --no-requeue ends it" {
	expect 71 1
	marker 71 0 '143\nhost=n1\n'
	printf '71 PENDING 10\n' >"$BATS_TEST_TMPDIR/queue"
	# the next attempt once mad-wait has seen the failed one and asked squeue (a loaded
	# machine may start mad-wait late: a fixed delay could let it see both at once)
	(
		for _ in $(seq 600); do [[ -s $BATS_TEST_TMPDIR/squeue.calls ]] && break; sleep 0.05; done
		sleep 0.5
		expect 71.1 1
		marker 71.1 0 '0\nhost=n2\n'
	) &
	run mad-wait -d "$run_dir" --json --interval 1 71
	assert_success
	assert_output --partial "job 71: 0/1 done, 1 failed (requeued: waiting for the next attempt), PENDING"
	assert_output --partial "job 71: attempt 2: rank 0 exited 0"
	assert_output --partial "\"dir\":	\"$run_dir/71\""
	assert_output --partial "\"dir\":	\"$run_dir/71.1\""
	assert_output --partial '"exit":	143'
	# asked at once about the failure, not after the first interval only
	(($(wc -l <"$BATS_TEST_TMPDIR/squeue.calls") >= 1))
	run mad-wait -d "$run_dir" --no-requeue 71
	assert_success # 71.1 is there already: the newest attempt decides
	expect 72 1
	marker 72 0 '143\n'
	printf '72 PENDING 10\n' >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --no-requeue --timeout 10 72
	assert_failure 1
	assert_output --partial "rank 0 failed with exit status 143 (signal 15, Terminated)"
	# requeued forever: the timeout, saying why
	run mad-wait -d "$run_dir" --timeout 3 72
	assert_failure 124
	assert_output --partial "still being re-run after a failed marker (state PENDING)"
	# not re-run (the job failed): the failure stands
	printf '72 FAILED 10\n' >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 10 72
	assert_failure 1
}

# A job re-run in its own folder (spur's requeue, #629: the same id, submit time and folder, no
# restart count): the start squeue shows (%S) for the run says which files are its own.
@test "a job re-run in its folder: a marker from before the run's start never decides; a success waits while it is pending" {
	local u v now
	u=$(id -un) v=2000-01-01T00:00:00 now=$(date +%s)
	expect 74 1
	marker 74 0 "1\nhost=n1\ntime=$((now - 100))\n" # the first run's failure
	printf '74 PENDING 10 %s %s N/A\n' "$u" "$v" >"$BATS_TEST_TMPDIR/queue"
	(
		sleep 1.5
		printf '74 RUNNING 10 %s %s %(%Y-%m-%dT%H:%M:%S)T\n' "$u" "$v" $((now - 10)) >"$BATS_TEST_TMPDIR/queue"
		sleep 1.5
		marker 74 0 "0\nhost=n2\ntime=$(date +%s)\n"
		printf '74 COMPLETED 10 %s %s %(%Y-%m-%dT%H:%M:%S)T\n' "$u" "$v" $((now - 10)) >"$BATS_TEST_TMPDIR/queue"
	) &
	run mad-wait -d "$run_dir" --interval 1 --timeout 30 74
	assert_success
	assert_output --partial "job 74: rank 0 exited 0"
	# the first run's success while the job waits to run again: not a verdict
	expect 75 1
	marker 75 0 "0\nhost=n1\ntime=$((now - 100))\n"
	for st in PENDING REQUEUED REQUEUE_HOLD; do
		printf '75 %s 10 %s %s N/A\n' "$st" "$u" "$v" >"$BATS_TEST_TMPDIR/queue"
		run mad-wait -d "$run_dir" --timeout 2 75
		assert_failure 124
		assert_output --partial "the job waiting to run again (state $st): its markers are an earlier run's"
	done
	# a start SLURM cannot tell (Unknown, a forecast) or none at all changes nothing
	for s in Unknown N/A garbage ""; do
		printf '75 COMPLETED 10 %s %s %s\n' "$u" "$v" "$s" >"$BATS_TEST_TMPDIR/queue"
		run mad-wait -d "$run_dir" --timeout 10 75
		assert_success
	done
	# a run that started after the marker makes it an earlier run's, named
	printf '75 COMPLETED 10 %s %s %(%Y-%m-%dT%H:%M:%S)T\n' "$u" "$v" $((now - 50)) >"$BATS_TEST_TMPDIR/queue"
	run mad-wait -d "$run_dir" --timeout 3 75
	assert_failure 124
	assert_output --partial "before this run of the job started"
	assert_output --partial "an earlier attempt's"
}

@test "step tasks: a failure is named with its step, task and node; the batch marker decides" {
	expect 73 1
	marker 73 0 '0\nhost=n1\n'
	for ((r = 0; r < 8; r++)); do printf '0\nhost=n%d\n' $((r / 2 + 1)) >"$run_dir/73/step0_rank$r"; done
	now=$(date +%s)
	printf '3\nhost=n3\ntime=%s\n' "$now" >"$run_dir/73/step0_rank5"
	printf '73 RUNNING 1:00:00\n' >"$BATS_TEST_TMPDIR/queue" # its submit time: see test 3
	run mad-wait -d "$run_dir" --json 73
	assert_success
	assert_output --partial "job 73: rank 0 exited 0; step 0 task 5 on n3 exited 3"
	assert_output --partial '"task":	5,
					"status":	"failed",
					"exit":	3,
					"host":	"n3",
					"time":	'"$now"
}

@test "a step of 1,024 tasks: a poll is still one directory read, each task's marker opened once" {
	require strace "counts system calls"
	expect 61 1
	for ((r = 0; r < 1024; r++)); do printf '0\n' >"$run_dir/61/step0_rank$r"; done
	poll_cost 61
	((opens < 1024 + 150))
	((reads >= 6 * 2))
}

# mad-wait --follow=PATTERN on job 90 (listed running) with --timeout 3, in
# the test's folder, output in $BATS_TEST_TMPDIR/out: $rc, $rss (kB, peak)
# and $wall (s), by /usr/bin/time.
follow_for_3s() { # pattern
	printf '90 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	rc=0
	# killed at 20 s (exit 137), if it does not end itself
	(cd "$BATS_TEST_TMPDIR" && /usr/bin/time -o "$BATS_TEST_TMPDIR/time" -f '%M %e' \
		timeout -s KILL 20 mad-wait -d "$run_dir" -q --timeout 3 --follow="$1" 90 \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err") || rc=$?
	# its last line (a failure is said on one before)
	read -r rss wall < <(tail -1 "$BATS_TEST_TMPDIR/time")
	echo "--follow=$1: exit $rc, peak RSS $rss kB, $wall s, $(wc -c <"$BATS_TEST_TMPDIR/out") bytes out"
	cat "$BATS_TEST_TMPDIR/err"
}

@test "--follow is bounded: an output linked to /dev/zero or a sparse 3 GB file ends by --timeout, memory bounded" {
	require /usr/bin/time "measures the peak RSS (Debian package time)"
	expect 90 1
	# the same wait over an empty output: what the program costs anyway
	: >"$BATS_TEST_TMPDIR/empty.out"
	follow_for_3s empty.out
	[[ $rc == 124 ]]
	base=$rss
	# a link to a device is not read, and said so once
	ln -s /dev/zero "$BATS_TEST_TMPDIR/slurm-90.out"
	follow_for_3s 'slurm-%j.out'
	[[ $rc == 124 ]]
	(($(grep -c "'slurm-90.out' is a character device: not read" "$BATS_TEST_TMPDIR/err") == 1))
	[[ ! -s $BATS_TEST_TMPDIR/out ]]
	((rss < base + 16384))
	((${wall%.*} < 10)) # a read to the end would take longer, and write more (below)
	# a regular file is read, at most 1 MiB per poll: the wait still ends on time
	truncate -s 3G "$BATS_TEST_TMPDIR/sparse-90.out"
	follow_for_3s 'sparse-%j.out'
	[[ $rc == 124 ]]
	refute grep -q "out of memory" "$BATS_TEST_TMPDIR/err"
	[[ $(head -c 9 "$BATS_TEST_TMPDIR/out") == '[job 90] ' ]]
	((rss < base + 16384))
	((${wall%.*} < 10))
	# at most 1 MiB a poll, a poll every 0.25 s for 3 s: far from the 3 GB a whole read writes
	(($(stat -c %s "$BATS_TEST_TMPDIR/out") < 64 * 1024 * 1024))
}

@test "--follow reads regular files only: a FIFO and a folder are named once and never read" {
	expect 91 3
	printf '91 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	printf 'hello from 0\npartial' >"$BATS_TEST_TMPDIR/out-0"
	mkfifo "$BATS_TEST_TMPDIR/out-1"
	mkdir "$BATS_TEST_TMPDIR/out-2"
	(sleep 1.5; for r in 0 1 2; do marker 91 "$r" '0\n'; done) &
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr timeout 20 mad-wait -d "$run_dir" -q --follow='out-%r' 91
	echo "$output"
	echo "$stderr"
	assert_success
	assert_output "$(printf '[rank 0] hello from 0\n[rank 0] partial')"
	(($(grep -c "'out-1' is a FIFO: not read" <<<"$stderr") == 1))
	(($(grep -c "'out-2' is a folder: not read" <<<"$stderr") == 1))
}

@test "--follow's default pattern waits for squeue to say whether the job is an array (slurm-%A_%a.out)" {
	expect 92 2
	# squeue fails its first call, then lists the array's two tasks
	mv "$bin/squeue" "$bin/squeue.real"
	cat >"$bin/squeue" <<-EOF
		#!/bin/sh
		[ -e "$BATS_TEST_TMPDIR/asked" ] || { : >"$BATS_TEST_TMPDIR/asked"; echo "squeue: error: down" >&2; exit 1; }
		exec "$bin/squeue.real" "\$@"
	EOF
	chmod +x "$bin/squeue"
	printf '92_0 RUNNING 10\n92_1 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	cd "$BATS_TEST_TMPDIR"
	echo 'hello from 0' >slurm-92_0.out
	echo 'hello from 1' >slurm-92_1.out
	# the markers once squeue has answered (its second call, the first that reaches the
	# queue) and mad-wait has had an interval to follow the outputs
	(
		for _ in $(seq 600); do [[ -s $BATS_TEST_TMPDIR/squeue.calls ]] && break; sleep 0.05; done
		sleep 2
		marker 92 0 '0\n'
		marker 92 1 '0\n'
	) &
	run --separate-stderr timeout 30 mad-wait -d "$run_dir" -q --interval 1 --follow 92
	echo "exit $status: $output"
	echo "$stderr"
	assert_success
	assert_line '[rank 0] hello from 0'
	assert_line '[rank 1] hello from 1'
}

@test "a run folder reached through a link another user can flip (a project folder 0777): refused by name in 200 runs (a quarter under ASan), never a verdict from the decoy" {
	n=$(trials 200)
	top=$(mktemp -d /tmp/mad-flip-XXXXXX)
	chmod 0755 "$top"
	mkdir -m 0777 "$top/project"
	mkdir -p "$top/real" "$top/decoy"
	# the job (42) exited 3; the user's other job (43) exited 0
	for j in 42 43; do
		mkdir "$top/real/$j"
		printf 'cluster=x\njob=%s\nrestart=0\n' "$j" >"$top/real/$j/attempt"
		echo 1 >"$top/real/$j/expected"
	done
	echo 3 >"$top/real/42/done_rank0"
	echo 0 >"$top/real/43/done_rank0"
	ln -s ../real/43 "$top/decoy/42"
	printf '42 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	as=()
	[[ $(id -u) != 0 ]] || { chmod 0755 "$top/real" "$top/decoy"; as=(setpriv --reuid=65534 --regid=65534 --clear-groups); }
	"${as[@]}" ln -s ../real "$top/project/runs"
	# shellcheck disable=SC2016 # the flipper's own shell expands it
	"${as[@]}" sh -c 'while :; do ln -sfn ../decoy "$1.new" && mv -T "$1.new" "$1"; ln -sfn ../real "$1.new" && mv -T "$1.new" "$1"; done' sh "$top/project/runs" &
	flipper=$!
	wrong=0 refused=0
	for _ in $(seq "$n"); do
		run mad-wait -d "$top/project/runs" --timeout 5 --interval 1 42
		((status != 0)) || wrong=$((wrong + 1))
		[[ $status == 64 && $output == *"'$top/project' is writable by group or others without the sticky bit"* ]] &&
			refused=$((refused + 1))
	done
	kill "$flipper"
	wait "$flipper" 2>/dev/null || true
	echo "wrong verdicts: $wrong, refused by name: $refused"
	rm -rf "$top"
	assert_equal "$wrong" 0
	assert_equal "$refused" "$n"
}

@test "--prune: removes only job folders of jobs no longer in the queue, idle for the age, the caller's; never through a link" {
	run_dir=$(mktemp -d /tmp/mad-prune-XXXXXX)
	chmod 1777 "$run_dir"
	old=$(date -d '10 days ago' +%Y%m%d%H%M)
	# old(): the folder and its files last written 10 days ago
	old() { find "$run_dir/$1" -exec touch -h -t "$old" {} +; }
	for j in 70 71 72 73.1 74~00000000000000ab 75.old.1700000000.00000000000000cd; do
		jobdir "$j"
		echo 0 >"$run_dir/$j/done_rank0"
		old "$j"
	done
	# 71 is still in the queue; 72 was written to an hour ago
	printf '71 RUNNING 10\n' >"$BATS_TEST_TMPDIR/queue"
	touch -d '1 hour ago' "$run_dir/72/done_rank0"
	# not job folders: no attempt file; a folder inside; a link named as a job folder
	mkdir "$run_dir/76" "$run_dir/77" "$run_dir/elsewhere"
	touch "$run_dir/76/done_rank0"
	jobdir 77
	mkdir "$run_dir/77/sub"
	old 76
	old 77
	echo keep >"$run_dir/elsewhere/attempt"
	ln -s elsewhere "$run_dir/78"
	if [[ $(id -u) == 0 ]]; then # another user's: root prunes it, a user would not
		jobdir 79
		old 79
		chown -R 65534:65534 "$run_dir/79"
	fi
	run mad-wait --prune 7d -d "$run_dir"
	assert_success
	for j in 70 73.1 74~00000000000000ab 75.old.1700000000.00000000000000cd; do
		[[ ! -e $run_dir/$j ]] || fail "$j was not removed"
		assert_output --partial "removed '$run_dir/$j'"
	done
	for j in 71 72 76 77 78 elsewhere; do
		[[ -e $run_dir/$j ]] || fail "$j was removed"
	done
	[[ -L $run_dir/78 && -e $run_dir/elsewhere/attempt ]]
	[[ $(id -u) != 0 || ! -e $run_dir/79 ]] || fail "root did not prune another user's old folder"
	# squeue cannot answer: nothing is removed, exit 3
	jobdir 80
	old 80
	rm "$BATS_TEST_TMPDIR/queue"
	run mad-wait --prune 7d -d "$run_dir"
	assert_failure 3
	assert_output --partial "nothing removed"
	[[ -e $run_dir/80 ]]
	run mad-wait --prune 7d -d "$run_dir" 80
	assert_failure 64
	rm -rf "$run_dir"
}
