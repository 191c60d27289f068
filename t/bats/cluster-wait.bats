#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-wait on the real cluster, as the test user: jobs with mad.so on stock
# SLURM, and through the spur emulation (t/spur/bin).  mad-wait finds the run
# folder on its own: run-dir= on mad.so's line in the cluster's plugstack.conf.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin run-wait
	# squeue that always fails, for the budget test
	mkdir -p "$MAD_CLUSTER_SHARED/bad-squeue"
	printf '#!/bin/sh\necho "squeue: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' \
		>"$MAD_CLUSTER_SHARED/bad-squeue/squeue"
	chmod 0755 "$MAD_CLUSTER_SHARED/bad-squeue" "$MAD_CLUSTER_SHARED/bad-squeue/squeue"
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
}

sbatch_id() {
	run "$AS_USER" sbatch --parsable "$@"
	assert_success
	jobid=${output%%;*}
}

# mad-wait as the test user; $elapsed in seconds.
waitfor() {
	local t0=$SECONDS
	run "$AS_USER" mad-wait "$@"
	elapsed=$((SECONDS - t0))
	echo "mad-wait $* -> $status in ${elapsed}s"
	echo "$output"
}

@test "success: a 4-node job, run folder from plugstack.conf, JSON per rank" {
	sbatch_id --nodes=4 --mad-model=m --wrap 'srun --nodes=4 true'
	waitfor --json --interval 2 "$jobid"
	assert_success
	assert_output --partial '"verdict":	"success"'
	assert_output --partial "\"run_dir\":	\"$run_dir\""
	assert_output --partial '"status":	"done"'
	assert_output --partial '"host":	"n1"'
}

@test "one rank of an array job fails: its rank and status reported, exit 1" {
	sbatch_id --array=0-3 --nodes=1 --exclusive --mad-model=m --mad-fanout=array \
		--output=/dev/null --wrap 'if [ "$MAD_NODE_RANK" = 2 ]; then exit 3; fi'
	waitfor --interval 2 "$jobid"
	assert_failure 1
	assert_output --partial "job $jobid: rank 2 failed with exit status 3 on n"
}

@test "one array task cancelled with scancel: that rank is reported, exit 1" {
	sbatch_id --array=0-3 --nodes=1 --exclusive --mad-model=m --mad-fanout=array \
		--output=/dev/null --wrap 'sleep 60'
	for _ in $(seq 100); do
		[[ $("$AS_USER" squeue -h -j "$jobid" -t R | wc -l) == 4 ]] && break
		sleep 0.2
	done
	"$AS_USER" scancel "${jobid}_1"
	waitfor --interval 2 --grace 5 "$jobid"
	"$AS_USER" scancel "$jobid"
	assert_failure 1
	assert_output --partial "rank 1 failed with exit status 143 (signal 15"
}

@test "scancel of a whole job that never ran: exit 2 within the grace, folder never appeared" {
	sbatch_id --hold --nodes=2 --mad-model=m --wrap 'true'
	"$AS_USER" scancel "$jobid"
	waitfor --interval 1 --grace 3 "$jobid"
	assert_failure 2
	assert_output --partial "the job left the queue"
	assert_output --partial "never appeared"
	((elapsed <= 15))
}

@test "a job whose script ends without its markers (no model in the job): exit 2, not success" {
	sbatch_id --nodes=1 --output=/dev/null --wrap 'true'
	waitfor --interval 1 --grace 2 --nnodes 1 "$jobid"
	assert_failure 2
}

@test "timeout: exit 124 naming the missing ranks; the job is left alone" {
	sbatch_id --nodes=2 --mad-model=m --output=/dev/null --wrap 'sleep 60'
	waitfor --timeout 3 --interval 1 --nnodes 1 "$jobid"
	assert_failure 124
	assert_output --partial "timed out after 3 s"
	assert_output --partial "ranks missing: 0"
	# left alone: still queued (on a loaded machine it may not have started in 3 s)
	run "$AS_USER" squeue -h -j "$jobid" -o %T
	assert_output --regexp '^(PENDING|RUNNING)$'
	"$AS_USER" scancel "$jobid"
}

@test "squeue always failing: exit 3 within the budget, no hang; markers still win" {
	sbatch_id --nodes=1 --mad-model=m --output=/dev/null --wrap 'sleep 60'
	local t0=$SECONDS
	run "$AS_USER" env PATH="$MAD_CLUSTER_SHARED/bad-squeue:$PATH" \
		mad-wait --interval 1 --unknown-budget 5 "$jobid"
	echo "$output"
	assert_failure 3
	assert_output --partial "could not be asked"
	assert_output --partial "Unable to contact slurm controller"
	(((SECONDS - t0) <= 12))
	"$AS_USER" scancel "$jobid"
	# markers written since the wait began decide, whatever squeue says, with
	# the count the job wrote as it started, however long before the wait
	# (design.md §15): the job starts well before the wait, ends within it
	sbatch_id --nodes=1 --mad-model=m --output=/dev/null \
		--wrap 'touch "started-$SLURM_JOB_ID"; sleep 8'
	for _ in $(seq 150); do
		look_anew "$MAD_CLUSTER_SHARED/started-$jobid"
		[[ -e $MAD_CLUSTER_SHARED/started-$jobid ]] && break
		sleep 0.2
	done
	[[ -e $MAD_CLUSTER_SHARED/started-$jobid ]]
	sleep 4 # past MAD_WAIT_CLOCK_SLACK, lib/wait/wait.h
	run "$AS_USER" env PATH="$MAD_CLUSTER_SHARED/bad-squeue:$PATH" \
		mad-wait --interval 1 --unknown-budget 30 "$jobid"
	echo "$output"
	assert_success
	"$AS_USER" rm -f "$MAD_CLUSTER_SHARED/started-$jobid"
	# older ones wait for squeue's submit time (mad-wait(1)): a finished
	# job's markers cannot decide for a wait that began after them
	sleep 4 # past MAD_WAIT_CLOCK_SLACK, lib/wait/wait.h
	run "$AS_USER" env PATH="$MAD_CLUSTER_SHARED/bad-squeue:$PATH" \
		mad-wait --interval 1 --unknown-budget 5 "$jobid"
	echo "$output"
	assert_failure 3
	assert_output --partial "before this wait began"
}

@test "several job ids in one call share one squeue per interval" {
	sbatch_id --nodes=1 --mad-model=m --output=/dev/null --wrap 'sleep 4'
	a=$jobid
	sbatch_id --nodes=2 --mad-model=m --output=/dev/null --wrap 'sleep 6; srun -N2 true'
	b=$jobid
	waitfor --json --interval 2 "$a" "$b"
	assert_success
	assert_output --partial "\"job_id\":	$a"
	assert_output --partial "\"job_id\":	$b"
	calls=$(grep -o '"squeue_calls":	[0-9]*' <<<"$output" | grep -o '[0-9]*$')
	echo "squeue calls: $calls in ${elapsed}s"
	((calls <= elapsed / 2 + 2))
}

@test "--follow streams every rank's output with its rank, array logs %A_%a" {
	"$AS_USER" rm -f "$MAD_CLUSTER_SHARED"/follow-*.out
	sbatch_id --array=0-3 --nodes=1 --exclusive --mad-model=m --mad-fanout=array \
		--output='follow-%A_%a.out' --wrap 'echo "hello from $MAD_NODE_RANK of $NNODES"'
	waitfor --interval 2 --follow='follow-%A_%a.out' "$jobid"
	assert_success
	for r in 0 1 2 3; do
		assert_line "[rank $r] hello from $r of 4"
	done
}

@test "slurmctld restarted mid-job: no false failure" {
	sbatch_id --nodes=2 --mad-model=m --output=/dev/null --wrap 'sleep 12; srun -N2 true'
	"$AS_USER" mad-wait --interval 1 --grace 5 "$jobid" >"$BATS_TEST_TMPDIR/out" 2>&1 &
	waiter=$!
	sleep 2
	"$BATS_TEST_DIRNAME/../cluster/restart" slurmctld 3
	wait "$waiter" || status=$?
	cat "$BATS_TEST_TMPDIR/out"
	[[ ${status:-0} == 0 ]]
	grep -q "job $jobid: rank 0 exited 0" "$BATS_TEST_TMPDIR/out"
}

@test "a node's slurmd killed mid-job: the job's markers still decide, no false failure" {
	sbatch_id --array=0-1 --nodes=1 --exclusive --mad-model=m --mad-fanout=array \
		--output=/dev/null --wrap 'sleep 8'
	"$AS_USER" mad-wait --interval 1 --grace 5 "$jobid" >"$BATS_TEST_TMPDIR/out" 2>&1 &
	waiter=$!
	sleep 2
	node=$("$AS_USER" squeue -h -j "${jobid}_1" -o %N)
	"$BATS_TEST_DIRNAME/../cluster/restart" "$node" 3
	wait "$waiter" || status=$?
	cat "$BATS_TEST_TMPDIR/out"
	[[ ${status:-0} == 0 ]]
}

# Waits until job $1 is RUNNING.
running() {
	for _ in $(seq 100); do
		[[ $("$AS_USER" squeue -h -j "$1" -o %T) == RUNNING ]] && return 0
		sleep 0.2
	done
	return 1
}

# SLURM holds a requeued job back for two minutes (BeginTime): now instead.
release_requeued() {
	for _ in $(seq 100); do
		[[ $("$AS_USER" squeue -h -j "$1" -o %T) == PENDING ]] && break
		sleep 0.2
	done
	# Not within the second of the requeue: slurmd revoked the first attempt's credential,
	# and an attempt started on the same node in that second is killed at launch ("Killing
	# non-startable batch JobId=N: Job credential revoked", seen on 24.11): it never runs.
	sleep 2
	"$AS_USER" scontrol update jobid="$1" StartTime=now
}

# mad-wait in the background as the test user; waitfor_end collects it.
waitfor_bg() {
	"$AS_USER" mad-wait "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	waiter=$!
}

waitfor_end() {
	status=0
	wait "$waiter" || status=$?
	output=$(cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err")
	echo "mad-wait -> $status"
	echo "$output"
}

# A job that sleeps in its first attempt and exits $second in the next ones. Each attempt
# logs its start to requeue-JOBID.out, for job_story.
# The first attempt ends with the status of its sleep, killed by the requeue (143): the
# shell must not go on to "exit 0" when the signal reaches the sleep before it.
requeue_job() {
	sbatch_id --requeue --nodes=1 --mad-model=m --open-mode=append \
		--output="$MAD_CLUSTER_SHARED/requeue-%j.out" "$@" \
		--wrap "echo \"restart \${SLURM_RESTART_COUNT:-0} on \$(hostname) at \$(date +%T.%N)\";
			if [ \"\${SLURM_RESTART_COUNT:-0}\" = 0 ]; then sleep 60; exit \$?; fi; exit $second"
}

# What happened to job $1, for a failing requeue test (bats shows it only then): each
# attempt's log, SLURM's view, the run folders with their times, slurmctld's lines.
job_story() {
	echo "# job $1 at $(date +%T.%N)"
	cat "$MAD_CLUSTER_SHARED/requeue-$1.out" 2>&1 || true
	scontrol show job "$1" 2>&1 | grep -E 'JobState|Restarts|Time=|NodeList' || true
	ls -l --time-style=full-iso "$run_dir/$1" "$run_dir/$1".* 2>&1 || true
	grep -E "(JobId|job_id)=$1([^0-9]|\$)" "$MAD_CLUSTER_DIR/log/slurmctld.log" 2>&1 | tail -n 20 || true
}

@test "requeue: scontrol requeue kills the first attempt, the second succeeds: exit 0, both attempts in the JSON" {
	second=0 requeue_job
	waitfor_bg --json --interval 2 "$jobid"
	running "$jobid"
	sleep 1
	"$AS_USER" scontrol requeue "$jobid"
	release_requeued "$jobid"
	waitfor_end
	job_story "$jobid"
	[[ $status == 0 ]]
	assert_output --partial '"verdict":	"success"'
	assert_output --partial "\"dir\":	\"$run_dir/$jobid\""
	assert_output --partial "\"dir\":	\"$run_dir/$jobid.1\""
	assert_output --partial '"exit":	143'
	assert_output --partial "job $jobid: attempt 2: rank 0 exited 0"
	assert_output --partial "job $jobid (attempt 2): "
	[[ $(grep -c '"attempt":	[12],' "$BATS_TEST_TMPDIR/out") == 3 ]] # the job's, then both
}

@test "requeue: the second attempt fails: exit 1 naming attempt 2" {
	second=5 requeue_job
	waitfor_bg --interval 2 "$jobid"
	running "$jobid"
	sleep 1
	"$AS_USER" scontrol requeue "$jobid"
	release_requeued "$jobid"
	waitfor_end
	job_story "$jobid"
	[[ $status == 1 ]]
	assert_output --partial "job $jobid: attempt 2: rank 0 failed with exit status 5 on n"
}

@test "requeue: --no-requeue ends the wait with the first attempt's failure, exit 1" {
	second=0 requeue_job
	waitfor_bg --no-requeue --interval 2 "$jobid"
	running "$jobid"
	sleep 1
	"$AS_USER" scontrol requeue "$jobid"
	waitfor_end
	job_story "$jobid"
	"$AS_USER" scancel "$jobid"
	[[ $status == 1 ]]
	assert_output --partial "job $jobid: rank 0 failed with exit status 143 (signal 15"
	refute_output --partial "attempt 2"
}

@test "preemption: a low-priority job requeued by a high-priority one, then re-run: exit 0 after the re-run" {
	[[ $("$AS_USER" scontrol show config) == *preempt/partition_prio* ]] ||
		{ echo "the cluster runs without preemption (MAD_CLUSTER_PREEMPT=0)"; return 1; }
	second=0 requeue_job --partition=low --nodes=4 --exclusive
	waitfor_bg --json --interval 2 "$jobid"
	running "$jobid"
	sleep 1
	run "$AS_USER" sbatch --parsable --partition=high --nodes=1 --output=/dev/null --wrap 'sleep 1'
	assert_success
	high=${output%%;*}
	release_requeued "$jobid"
	waitfor_end
	job_story "$jobid"
	[[ $status == 0 ]]
	assert_output --partial "job $jobid: attempt 2: rank 0 exited 0"
	assert_output --partial '"exit":	143'
	run "$AS_USER" scontrol show job "$high"
	refute_output --partial "JobState=PENDING"
}

@test "nodes fan-out, 4 nodes x 2 tasks, task 5 exits 3: the batch marker decides, step 0 task 5 named with its node" {
	# the script goes on after srun: its marker says 0, the verdict is success
	sbatch_id --nodes=4 --ntasks-per-node=2 --mad-model=m --output=/dev/null \
		--wrap 'srun sh -c "[ \$SLURM_PROCID = 5 ] && exit 3; exit 0"; true'
	waitfor --json --interval 2 "$jobid"
	assert_success
	node=$(awk '/^host=/ { sub("host=", ""); print }' "$run_dir/$jobid/step0_rank5")
	[[ $node == n3 ]] # tasks 4 and 5 on the third node
	assert_output --partial "job $jobid: rank 0 exited 0; step 0 task 5 on n3 exited 3"
	assert_output --partial '"task":	5,
					"status":	"failed",
					"exit":	3,
					"host":	"n3",'
	# the same step with the script's status its own: the batch marker's 3 decides
	sbatch_id --nodes=4 --ntasks-per-node=2 --mad-model=m --output=/dev/null \
		--wrap 'srun sh -c "[ \$SLURM_PROCID = 5 ] && kill -SEGV \$\$; exit 0"'
	waitfor --interval 2 "$jobid"
	assert_failure 1
	assert_output --partial "job $jobid: rank 0 failed with exit status"
	assert_output --partial "; step 0 task 5 on n3 exited 139 (signal 11, Segmentation fault)"
	# every task wrote its marker as the job's user
	[[ $(find "$run_dir/$jobid" -name 'step0_rank*' -user "$MAD_CLUSTER_USER" | wc -l) == 8 ]]
}

@test "spur: startup window where squeue lists nothing, no false failure; array fan-out via mad-env/mad-mark" {
	host=${MAD_BUILD:-${MAD_BUILDDIR:-}}/t/spur/spurd-spank
	require_spur_host "$host"
	cp "$host" "$MAD_CLUSTER_SHARED/spurd-spank"
	chmod 0755 "$MAD_CLUSTER_SHARED/spurd-spank"
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_SHARED/spur-plugstack-wait.conf"
	chmod 0644 "$MAD_CLUSTER_SHARED/spur-plugstack-wait.conf"
	: >"$MAD_CLUSTER_PLUGSTACK" # SLURM runs no plugin: spur's host does
	printf '#!/bin/bash\ntrap '\''mad-mark $?'\'' EXIT\neval "$(mad-env)"\nsleep 2\n' >"$MAD_CLUSTER_SHARED/spur-wait.sh"
	chmod 0755 "$MAD_CLUSTER_SHARED/spur-wait.sh"
	spur=("$AS_USER" env PATH="$BATS_TEST_DIRNAME/../spur/bin:$PATH"
		SPUR_EMU_HOST="$MAD_CLUSTER_SHARED/spurd-spank"
		SPUR_PLUGSTACK="$MAD_CLUSTER_SHARED/spur-plugstack-wait.conf"
		SPUR_EMU_SQUEUE_HIDE=30 MAD_MODEL=m MAD_NNODES=4)
	run "${spur[@]}" sbatch --array=0-3 --nodes=1 --exclusive --output=/dev/null spur-wait.sh
	assert_success
	jobid=${output##* }
	# no MAD_RUN_DIR, no flag: the run folder comes from spur's plugstack.conf
	run "${spur[@]}" mad-wait --json --interval 2 --grace 3 --startup-grace 60 "$jobid"
	echo "$output"
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	assert_success
	assert_output --partial '"scheduler_state":	"NOT_LISTED"'
	assert_output --partial '"expected":	4'
}
