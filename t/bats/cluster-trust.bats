#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Trust only what this job attempt wrote (lib/jobdir.h), on the real cluster: in a run
# folder every user may write ($MAD_CLUSTER_PUBLIC, root's, 1777, as sites make one),
# another user ($AS_OTHER) plants markers, a rendezvous record, readiness and barrier
# files or a symbolic link under the id the next job will get, and an earlier job with the
# same id (the controller's state cleared: t/cluster/restart slurmctld --fresh) leaves its
# markers. Every job is the first test user's; each test asserts what really happened to
# the job, and that the file passed over is named. The run folder keeps what earlier runs
# left (t/lib.sh fresh_run_dir): nothing here is cleaned but the names a test plants.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	[[ $(id -u) == 0 ]] || return 0 # setup() says why every test cannot run
	so=$(mad_so)
	[[ -r $so ]] || { echo "mad.so is not installed at '$so' (t/prepare, or the package with MAD_INSTALLED=deb, installs it)"; return 1; }
	run_dir=$MAD_CLUSTER_PUBLIC/trust
	# a site's shared run folder: root's, every user may write, the sticky bit
	mkdir -p "$run_dir"
	chown 0:0 "$run_dir"
	chmod 1777 "$run_dir"
	plugstack_save
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	export so run_dir
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
	# the ids go on above every id of this start, for the test files after this one
	if [[ -d $MAD_CLUSTER_DIR/state.saved ]]; then
		restart_fresh_wait
		"$BATS_TEST_DIRNAME/../cluster/restart" slurmctld --restore
	fi
}

setup() {
	load ../lib.sh
	cluster_test
	local why=
	if [[ $(id -u) != 0 ]]; then
		why="needs root: a second test user plants files, and root makes the run folders"
	elif [[ -z ${MAD_CLUSTER_USER2:-} || $MAD_CLUSTER_USER2 == "${MAD_CLUSTER_USER:-}" ]]; then
		why="the cluster has no second test user (MAD_CLUSTER_USER2; restart it with this t/cluster/start)"
	elif [[ -z ${MAD_CLUSTER_PUBLIC:-} || ! -d ${MAD_CLUSTER_PUBLIC:-} ]]; then
		why="the cluster has no public run folder (MAD_CLUSTER_PUBLIC; restart it with this t/cluster/start)"
	fi
	if [[ -n $why ]]; then
		[[ ${CI:-} != true ]] || { echo "$why, and CI=true: failing, not skipping" >&2; return 1; }
		skip "$why"
	fi
	uid=$(id -u "$MAD_CLUSTER_USER")
	uid2=$(id -u "$MAD_CLUSTER_USER2")
}

# "$AS_OTHER" is as-user --other: two words.
as_other() {
	# shellcheck disable=SC2086
	$AS_OTHER "$@"
}

# A regular expression matching the text $1 literally.
# shellcheck disable=SC2001
re_quote() { sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$1"; }

# The id the next job will get, in $next: a held job's id plus one (nothing else submits
# meanwhile).
next_job_id() {
	local held
	held=$("$AS_USER" sbatch --parsable --hold --output=/dev/null --wrap true)
	held=${held%%;*}
	[[ $held =~ ^[0-9]+$ ]] || { echo "sbatch --hold said '$held'"; return 1; }
	"$AS_USER" scancel "$held"
	next=$((held + 1))
}

# The other user's folder DIR (mode MODE) with FILE CONTENT pairs, as that user would
# plant them. 0777 is a trap: a job that took the folder for its own would write there and
# run on. Whatever an earlier run left under that name goes first (as root): the sticky bit
# keeps the first user's folder from the other user, who needs the name free to take it.
plant() { # mode dir [file content]...
	local mode=$1 dir=$2
	shift 2
	rm -rf "$dir"
	as_other mkdir -m "$mode" "$dir"
	while (($#)); do
		printf '%s\n' "$2" | as_other tee "$dir/$1" >/dev/null
		shift 2
	done
}

# every job of this file (submit, t/lib.sh)
submit_within=180

# mad-wait as the test user over the plugstack's run folder: $status, $output.
waitfor() {
	run "$AS_USER" timeout 120 mad-wait --interval 1 --grace 5 "$@"
	echo "mad-wait $* -> $status"
	echo "$output"
}

# The job folder the job's own script was given (it printed job_dir=$MAD_JOB_DIR), looked at
# anew: an earlier job's under that name may have been moved aside meanwhile.
job_dir_of() {
	local dir
	look_anew "$1"
	dir=$(sed -n 's/^job_dir=//p' "$1" | head -1)
	look_anew "$dir"
	echo "$dir"
}

# The job's own folder, $1 taken by another: a name of 16 random hex digits after '~'.
fallback_of() { # base dir
	[[ $2 =~ ^$(re_quote "$1")~[0-9a-f]{16}$ ]] || fail "the job folder '$2' is not a fallback name of '$1'"
}

# The output names the job folder $1 as passed over (mad-wait's reason, or the plugin's
# note): "ignored" with that path, not a longer name (~..., .old) or a file below it.
names_ignored() { # dir text
	grep -E "ignored.*$(re_quote "$1")([^~0-9./]|/[^ ]*:|\$)" <<<"$2"
}

# The controller's state cleared: job ids start again at FirstJobId. No job of ours runs.
restart_fresh() {
	restart_fresh_wait
	"$BATS_TEST_DIRNAME/../cluster/restart" slurmctld --fresh
}
restart_fresh_wait() {
	for _ in $(seq 60); do
		[[ -z $("$AS_USER" squeue -h -u "$MAD_CLUSTER_USER" 2>/dev/null) ]] && break
		sleep 0.5
	done
}

@test "another user's done_rank0 (0) and expected under the next id: the job that exits 3 writes <id>~<random>, mad-wait says 1" {
	next_job_id
	plant 0777 "$run_dir/$next" done_rank0 0 expected 1
	submit --nodes=1 --mad-model=m --wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 3'
	[[ $jobid == "$next" ]] || fail "the job got id $jobid, not $next: another job was submitted meanwhile"
	assert_equal "$status" 3
	# the job's own folder, another name, its marker the job's status
	own=$(job_dir_of "$out")
	fallback_of "$run_dir/$next" "$own"
	assert_equal "$(head -1 "$own/done_rank0")" 3
	assert_equal "$(stat -c %U "$own/done_rank0")" "$MAD_CLUSTER_USER"
	# the planted folder is left as it was, and named
	assert_equal "$(head -1 "$run_dir/$next/done_rank0")" 0
	assert_equal "$(find "$run_dir/$next" -user "$MAD_CLUSTER_USER" | wc -l)" 0
	grep -F "ignored '$run_dir/$next': owned by uid $uid2, not the job's user (uid $uid)" "$out"
	# a pipeline is told the job failed, and why the planted marker did not count
	waitfor "$next"
	assert_equal "$status" 1
	assert_output --partial "rank 0 failed with exit status 3"
	names_ignored "$run_dir/$next" "$output"
}

@test "a symbolic link under the next id to another user's folder (writable, with done_rank0 0): nothing of the job lands there, its files are in <id>~<random>" {
	next_job_id
	bait=$run_dir/bait-$next
	rm -rf "$bait" "${run_dir:?}/$next"
	as_other mkdir -m 0777 "$bait"
	echo 0 | as_other tee "$bait/done_rank0" >/dev/null
	as_other ln -s "$bait" "$run_dir/$next"
	submit --nodes=1 --mad-model=m --wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 3'
	[[ $jobid == "$next" ]] || fail "the job got id $jobid, not $next: another job was submitted meanwhile"
	assert_equal "$status" 3
	# the other user's folder holds what they put there, nothing else
	assert_equal "$(ls -A "$bait")" done_rank0
	assert_equal "$(head -1 "$bait/done_rank0")" 0
	assert_equal "$(find "$bait" -user "$MAD_CLUSTER_USER" | wc -l)" 0
	[[ -L $run_dir/$next ]]
	# the job's files, in a folder of its own
	own=$(job_dir_of "$out")
	fallback_of "$run_dir/$next" "$own"
	assert_equal "$(head -1 "$own/done_rank0")" 3
	assert_equal "$(head -1 "$own/expected")" 1
	grep -F "ignored '$run_dir/$next': a symbolic link" "$out"
	waitfor "$next"
	assert_equal "$status" 1
	assert_output --partial "rank 0 failed with exit status 3"
	names_ignored "$run_dir/$next" "$output"
}

@test "array fan-out: another user's rendezvous record (10.99.99.99) under the next array id: every task gets rank 0's real address" {
	next_job_id
	plant 0755 "$run_dir/$next" rendezvous "addr=10.99.99.99
port=29999
host=n9
job=$next
nnodes=4
tasks_per_node=1
time=$(date +%s)"
	submit --array=0-3 --nodes=1 --exclusive --mad-fanout=array --mad-model=m --mad-timeout=30 \
		--output="trust-$BATS_TEST_NUMBER-%a.out" \
		--wrap 'echo "rank=$MAD_NODE_RANK host=$(hostname) MASTER_ADDR=$MASTER_ADDR job_dir=$MAD_JOB_DIR"'
	[[ $jobid == "$next" ]] || fail "the job got id $jobid, not $next: another job was submitted meanwhile"
	assert_equal "$status" 0
	outs=$(cat "$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER"-[0-3].out)
	run ! grep -F 10.99.99.99 <<<"$outs"
	# rank 0's address: the cluster's address of the node rank 0 ran on
	host0=$(sed -n 's/^rank=0 host=\(n[0-9]*\) .*/\1/p' <<<"$outs")
	[[ -n $host0 ]] || fail "rank 0 printed no line"
	read -r -a addrs <<<"$MAD_CLUSTER_NODE_ADDRS"
	addr0=${addrs[${host0#n} - 1]}
	for r in 0 1 2 3; do
		grep -E "^rank=$r host=n[0-9]+ MASTER_ADDR=$(re_quote "$addr0") " <<<"$outs" ||
			fail "rank $r did not get rank 0's address $addr0"
	done
	# the record the tasks met in is the job's, in its own folder; the planted one is as it was
	own=$(sed -n 's/.* job_dir=//p' <<<"$outs" | sort -u)
	fallback_of "$run_dir/$next" "$own"
	grep -qx "addr=$addr0" "$own/rendezvous"
	grep -qx addr=10.99.99.99 "$run_dir/$next/rendezvous"
	grep -F "ignored '$run_dir/$next': owned by uid $uid2, not the job's user (uid $uid)" <<<"$outs"
}

@test "mad-env --barrier: another user's started_rank0 and started_rank1 under the next array id do not let rank 0 pass while rank 1 is held" {
	next_job_id
	plant 0777 "$run_dir/$next" started_rank0 "host=n9" started_rank1 "host=n9"
	run "$AS_USER" sbatch --parsable --hold --array=0-1 --nodes=1 --exclusive --mad-fanout=array \
		--mad-model=m --mad-timeout=5 --output="trust-$BATS_TEST_NUMBER-%a.out" \
		--wrap 't0=$(date +%s); mad-env --barrier; s=$?; echo "barrier status=$s after=$(($(date +%s) - t0))"; exit $s'
	jobid=${output%%;*}
	[[ $jobid == "$next" ]] || fail "the job got id $jobid, not $next: another job was submitted meanwhile"
	out=$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER-0.out
	rm -f "$out"
	"$AS_USER" scontrol release "${jobid}_0"
	for _ in $(seq 60); do
		look_anew "$out"
		grep -q '^barrier status=' "$out" 2>/dev/null && break
		sleep 0.5
	done
	"$AS_USER" scancel "$jobid"
	cat "$out"
	grep -qE '^barrier status=1 after=([5-9]|1[0-5])$' "$out" ||
		fail "rank 0 passed the barrier (or did not end by it) with rank 1 held"
	grep -q "barrier: rank 1 did not start within 5 s" "$out"
	grep -F "ignored '$run_dir/$next': owned by uid $uid2, not the job's user (uid $uid)" "$out"
}

@test "mad-wait --ready: another user's ready_rank0 under the next id is never the endpoint; the job's own is" {
	next_job_id
	plant 0777 "$run_dir/$next" ready_rank0 "http://10.99.99.99:8000/
rank=0
host=n9
job=$next
time=$(date +%s)"
	out=$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER.out
	rm -f "$out"
	run "$AS_USER" sbatch --parsable --nodes=1 --mad-model=m --output="$out" \
		--wrap 'echo "job_dir=$MAD_JOB_DIR"; sleep 3; mad-mark --ready "tcp://$(hostname):1"; sleep 60'
	jobid=${output%%;*}
	[[ $jobid == "$next" ]] || { "$AS_USER" scancel "$jobid"; fail "the job got id $jobid, not $next: another job was submitted meanwhile"; }
	run --separate-stderr "$AS_USER" timeout 60 mad-wait --ready --interval 1 --timeout 45 "$jobid"
	ready_status=$status ready_output=$output ready_stderr=$stderr
	host=$("$AS_USER" squeue -h -j "$jobid" -o %N)
	"$AS_USER" scancel "$jobid"
	look_anew "$out"
	cat "$out" || echo "(the job had not started)"
	echo "mad-wait --ready -> $ready_status: $ready_output / $ready_stderr"
	[[ $ready_output != *10.99.99.99* ]] || fail "mad-wait --ready gave the planted endpoint"
	assert_equal "$ready_status" 0
	assert_equal "$ready_output" "tcp://$host:1"
	own=$(job_dir_of "$out")
	fallback_of "$run_dir/$next" "$own"
	assert_equal "$(head -1 "$own/ready_rank0")" "tcp://$host:1"
	assert_equal "$(head -1 "$run_dir/$next/ready_rank0")" http://10.99.99.99:8000/
	grep -F "ignored '$run_dir/$next': owned by uid $uid2, not the job's user (uid $uid)" "$out"
}

@test "stale, same id: job A exits 0, the controller's state is cleared, job B gets A's id and exits 3: B's own folder, mad-wait B says 1" {
	restart_fresh
	submit --nodes=1 --mad-model=m --wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 0'
	a=$jobid a_dir=$(job_dir_of "$out")
	assert_equal "$status" 0
	assert_equal "$(head -1 "$a_dir/done_rank0")" 0
	waitfor "$a"
	assert_equal "$status" 0
	restart_fresh
	submit --nodes=1 --mad-model=m --wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 3'
	[[ $jobid == "$a" ]] || fail "job B got id $jobid, not A's $a, after a fresh controller"
	assert_equal "$status" 3
	# B's folder is a fresh one under A's name, A's moved aside with its marker
	assert_equal "$(job_dir_of "$out")" "$a_dir"
	assert_equal "$(head -1 "$a_dir/done_rank0")" 3
	moved_re="moved '$(re_quote "$a_dir")', an earlier job's with the same id, to '[^']*'"
	moved=$(grep -ho "$moved_re" "$out" "$MAD_CLUSTER_DIR"/log/slurmd-n*.log 2>/dev/null | tail -1)
	[[ -n $moved ]] || fail "neither the job's output nor a slurmd log says A's folder was moved aside"
	old=${moved##*to \'}
	old=${old%\'}
	assert_equal "$(head -1 "$old/done_rank0")" 0
	waitfor "$jobid"
	assert_equal "$status" 1
	assert_output --partial "rank 0 failed with exit status 3"
}

@test "stale, same id, array fan-out: array A (2 tasks) exits 0, the controller's state is cleared, array B with A's id has task 1 exit 3: mad-wait B says 1" {
	restart_fresh
	submit --array=0-1 --nodes=1 --exclusive --mad-fanout=array --mad-model=m --mad-timeout=30 \
		--output="trust-$BATS_TEST_NUMBER-a%a.out" --wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 0'
	a=$jobid
	assert_equal "$status" 0
	waitfor "$a"
	assert_equal "$status" 0
	restart_fresh
	submit --array=0-1 --nodes=1 --exclusive --mad-fanout=array --mad-model=m --mad-timeout=30 \
		--output="trust-$BATS_TEST_NUMBER-b%a.out" \
		--wrap 'echo "job_dir=$MAD_JOB_DIR"; if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then exit 3; fi'
	[[ $jobid == "$a" ]] || fail "array B got id $jobid, not A's $a, after a fresh controller"
	# both tasks of B in one folder, their own
	b0=$(job_dir_of "$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER-b0.out")
	b1=$(job_dir_of "$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER-b1.out")
	[[ -n $b0 && $b0 == "$b1" ]] || fail "B's tasks were given the folders '$b0' and '$b1'"
	assert_equal "$(head -1 "$b0/done_rank1")" 3
	assert_equal "$(head -1 "$b0/done_rank0")" 0
	waitfor "$jobid"
	assert_equal "$status" 1
	assert_output --partial "rank 1 failed with exit status 3"
}

@test "stale, same id, array fan-out: A's task 1 could not start (its marker says why), the controller's state is cleared, array B with A's id succeeds: mad-wait B says 0" {
	# a run folder of this test's own: no earlier folder under the id to join
	dir=$MAD_CLUSTER_PUBLIC/stale-failure-$$-$BATS_TEST_NUMBER
	mkdir -p "$dir"
	chmod 1777 "$dir"
	restart_fresh
	# A: task 0 held, task 1 gives up on rank 0 after 3 s and records why
	run "$AS_USER" sbatch --parsable --hold --array=0-1 --nodes=1 --exclusive --mad-fanout=array \
		--mad-model=m --mad-timeout=3 --mad-run-dir="$dir" \
		--output="$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER-a%a.out" \
		--wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 0'
	a=${output%%;*}
	"$AS_USER" scontrol release "${a}_1"
	for _ in $(seq 120); do
		[[ -z $("$AS_USER" squeue -h -j "${a}_1" 2>/dev/null) ]] && break
		sleep 0.5
	done
	"$AS_USER" scancel "$a"
	a_dir=$(find "$dir" -maxdepth 2 -name done_rank1 -printf '%h\n' | head -1)
	[[ -n $a_dir ]] || fail "A's task 1 left no marker"
	grep -q '^error=' "$a_dir/done_rank1" || fail "A's task 1 marker records no reason: $(cat "$a_dir/done_rank1")"
	restart_fresh
	submit --array=0-1 --nodes=1 --exclusive --mad-fanout=array --mad-model=m --mad-timeout=30 \
		--mad-run-dir="$dir" --output="trust-$BATS_TEST_NUMBER-b%a.out" \
		--wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 0'
	[[ $jobid == "$a" ]] || fail "array B got id $jobid, not A's $a, after a fresh controller"
	b1=$(job_dir_of "$MAD_CLUSTER_SHARED/trust-$BATS_TEST_NUMBER-b1.out")
	# B's task 1 marker is B's success, not A's recorded failure
	assert_equal "$(head -1 "$b1/done_rank1")" 0
	waitfor -d "$dir" "$jobid"
	assert_equal "$status" 0
}

@test "a run folder every user may write without the sticky bit (0777): the job fails, naming the folder and the sticky bit; no marker written" {
	dir=$MAD_CLUSTER_PUBLIC/nosticky
	mkdir -p "$dir"
	chown 0:0 "$dir"
	chmod 0777 "$dir"
	stamp=$BATS_TEST_TMPDIR/stamp
	touch "$stamp"
	sleep 0.1
	submit --nodes=1 --mad-model=m --mad-run-dir="$dir" --wrap 'echo ran; exit 0'
	[[ $status != 0 ]] || fail "the job succeeded"
	run ! grep -qx ran "$out"
	{ cat "$out"; echo "$output"; } | grep -F "'$dir'" | grep -F sticky ||
		fail "no message names '$dir' and the sticky bit"
	# nothing written in that folder, nor in the plugstack's
	assert_equal "$(find "$dir" "$run_dir" -newer "$stamp" | wc -l)" 0
}

@test "a run folder of a group the user is in as a secondary group only (root:group, 3770): the batch marker is written" {
	[[ -n ${MAD_CLUSTER_GROUP:-} ]] || fail "the cluster has no MAD_CLUSTER_GROUP (t/cluster/start makes it as root)"
	[[ $(id -gn "$MAD_CLUSTER_USER") != "$MAD_CLUSTER_GROUP" ]]
	id -Gn "$MAD_CLUSTER_USER" | tr ' ' '\n' | grep -qxF "$MAD_CLUSTER_GROUP"
	dir=$MAD_CLUSTER_PUBLIC/group
	mkdir -p "$dir"
	chown "0:$MAD_CLUSTER_GROUP" "$dir"
	chmod 3770 "$dir"
	stamp=$BATS_TEST_TMPDIR/stamp
	touch "$stamp"
	sleep 0.1
	submit --nodes=1 --mad-model=m --mad-run-dir="$dir" --wrap 'echo "job_dir=$MAD_JOB_DIR"; exit 0'
	assert_equal "$status" 0
	job_dir=$(job_dir_of "$out")
	[[ $job_dir == "$dir/$jobid" || $job_dir =~ ^$(re_quote "$dir/$jobid")~[0-9a-f]{16}$ ]] || fail "job folder '$job_dir'"
	[[ -e $job_dir/done_rank0 ]] || fail "no batch marker in '$job_dir': $(ls -la "$job_dir")"
	# this job's, not one an earlier job with its id left
	[[ -n $(find "$job_dir/done_rank0" -newer "$stamp") ]] || fail "the batch marker in '$job_dir' is older than the job"
	assert_equal "$(head -1 "$job_dir/done_rank0")" 0
	assert_equal "$(stat -c %U "$job_dir/done_rank0")" "$MAD_CLUSTER_USER"
	assert_equal "$(head -1 "$job_dir/expected")" 1
}
