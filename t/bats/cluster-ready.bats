#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Readiness on the real cluster, as the test user: a job that serves marks itself ready with
# `mad-mark --ready ENDPOINT` once its health check answers, and `mad-wait --ready JOBID`
# returns that endpoint, or fails at once when the job ends first (design.md §13).
# The service is a real HTTP server (python3 -m http.server) and the client is curl.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin run-ready
	# job ids start again at 1 with every cluster start: no stop file of an older job
	"$AS_USER" rm -rf "$MAD_CLUSTER_SHARED"/stop.* "$MAD_CLUSTER_SHARED"/www.*
	# The serving job: rank 0 starts an HTTP server after DELAY seconds, polls it with curl
	# (the service's own health check), marks the job ready, and serves until told to stop.
	cat >"$MAD_CLUSTER_SHARED/serve.sh" <<'SCRIPT'
#!/bin/bash
set -eu
eval "$(mad-env)"
port=$((MASTER_PORT + 1))
www=$MAD_CLUSTER_SHARED_DIR/www.$SLURM_JOB_ID
stop=$MAD_CLUSTER_SHARED_DIR/stop.$SLURM_JOB_ID
mkdir -p "$www"
echo "served by $(hostname)" >"$www/index.html"
sleep "${DELAY:-3}"
echo "serve: starting the server on $MASTER_ADDR:$port"
python3 -m http.server "$port" --bind "$MASTER_ADDR" --directory "$www" 2>&1 &
server=$!
trap 'echo "serve: the script ends (status $?)"' EXIT
url="http://$MASTER_ADDR:$port/"
# the health check: ready only once it answers (python may start slowly on a loaded node)
until curl -fsS -o /dev/null "$url"; do
	kill -0 "$server" || { echo "serve: the server died before it answered" >&2; exit 1; }
	sleep 0.1
done
mad-mark --ready "$url"
echo "serve: ready at $url"
# Serve until the test says stop (a file), for at most 5 minutes. The folder is opened before
# each look: on NFS this node would see the test's file only once its cache expired (look_anew
# in t/lib.sh says why).
end=$((SECONDS + 300))
while { : <"$MAD_CLUSTER_SHARED_DIR"; [[ ! -e $stop ]]; } && ((SECONDS < end)); do
	kill -0 "$server" || { echo "serve: the server died while serving" >&2; exit 1; }
	sleep 0.1
done
echo "serve: stopping the server (stop file: $([[ -e $stop ]] && echo yes || echo no))"
kill "$server"
SCRIPT
	chmod 0755 "$MAD_CLUSTER_SHARED/serve.sh"
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	require curl "the readiness tests' client"
}

sbatch_id() {
	job_out=$MAD_CLUSTER_SHARED/ready-$BATS_TEST_NUMBER.out
	rm -f "$job_out"
	run "$AS_USER" sbatch --parsable --output="$job_out" "$@"
	assert_success
	jobid=${output%%;*}
}

# What a failed test shows: the job's output, what SLURM says of it, and what listens on n1.
explain_job() {
	echo "# job $jobid, output $job_out:"
	look_anew "$job_out"
	cat "$job_out" 2>/dev/null || true
	scontrol show job "$jobid" 2>&1 | grep -E 'JobState|Restarts|NodeList|Reason' || true
	ls -l "$run_dir"/"$jobid"* 2>&1 || true
	if [[ -n ${MAD_CLUSTER_NS_PREFIX:-} ]]; then
		ip netns exec "${MAD_CLUSTER_NS_PREFIX}n1" ss -ltnp 2>&1 || true
	fi
}

@test "mad-wait --ready prints the endpoint once the job's HTTP server answers, and curl reaches it" {
	sbatch_id --nodes=2 --mad-model=m --export=ALL,DELAY=3,MAD_CLUSTER_SHARED_DIR="$MAD_CLUSTER_SHARED" serve.sh
	t0=$SECONDS
	run --separate-stderr "$AS_USER" mad-wait --ready --timeout 120 "$jobid"
	elapsed=$((SECONDS - t0))
	assert_success
	assert_output --regexp '^http://[0-9.]+:[0-9]+/$'
	url=$output
	((elapsed >= 3)) # not before the server started
	run curl -fsS "$url"
	[[ $status == 0 ]] || explain_job
	assert_success
	assert_output 'served by n1'
	"$AS_USER" touch "$MAD_CLUSTER_SHARED/stop.$jobid"
	run "$AS_USER" mad-wait --timeout 120 "$jobid"
	assert_success
}

@test "mad-wait --ready --json gives the endpoint, rank and host of the ready marker" {
	sbatch_id --nodes=2 --mad-model=m --export=ALL,DELAY=1,MAD_CLUSTER_SHARED_DIR="$MAD_CLUSTER_SHARED" serve.sh
	run --separate-stderr "$AS_USER" mad-wait --ready --json --timeout 120 "$jobid"
	"$AS_USER" touch "$MAD_CLUSTER_SHARED/stop.$jobid"
	assert_success
	assert_output --regexp '"endpoint":[[:space:]]+"http://[0-9.]+:[0-9]+/"'
	assert_output --partial '"ready":	true'
	assert_output --partial '"ready_host":	"n1"'
	python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["jobs"][0]["ready"]' <<<"$output"
}

@test "a job that fails before it is ready: mad-wait --ready exits 1 within a second of its end" {
	sbatch_id --nodes=1 --mad-model=m --wrap 'sleep 3; exit 7'
	run "$AS_USER" mad-wait --ready --timeout 120 "$jobid"
	end=$(date +%s.%N)
	assert_failure 1
	assert_output --partial "job $jobid"
	assert_output --partial "before it was ready"
	marker=$(stat -c %Y.%y "$run_dir/$jobid/done_rank0" | awk -F. '{ print $1 }')
	# The marker's mtime (whole seconds) to mad-wait's end: within a second (plus the rounding).
	awk -v e="$end" -v m="$marker" 'BEGIN { exit !(e - m < 2.0) }'
}

@test "a job that ends with success but never marked ready: exit 1, not a wait until the timeout" {
	sbatch_id --nodes=1 --mad-model=m --wrap 'sleep 1'
	t0=$SECONDS
	run "$AS_USER" mad-wait --ready --timeout 120 "$jobid"
	assert_failure 1
	assert_output --partial "ended before it was ready"
	((SECONDS - t0 < 30))
}

@test "a job that is never ready: mad-wait --ready times out with 124, the job left alone" {
	sbatch_id --nodes=1 --mad-model=m --wrap 'sleep 30'
	run "$AS_USER" mad-wait --ready --timeout 3 "$jobid"
	assert_failure 124
	[[ -n $("$AS_USER" squeue -h -j "$jobid") ]]
	"$AS_USER" scancel "$jobid"
}

@test "array fan-out: rank 0's ready marker makes the job ready, its endpoint printed" {
	sbatch_id --array=0-1 --nodes=1 --exclusive --mad-model=m --mad-fanout=array \
		--wrap 'eval "$(mad-env)"; if [ "$MAD_NODE_RANK" = 0 ]; then sleep 1; mad-mark --ready "tcp://$MASTER_ADDR:$MASTER_PORT"; fi; sleep 5'
	run --separate-stderr "$AS_USER" mad-wait --ready --timeout 120 "$jobid"
	assert_success
	assert_output --regexp '^tcp://[0-9.]+:[0-9]+$'
	run "$AS_USER" mad-wait --timeout 120 "$jobid"
	assert_success
}

@test "mad-mark --ready refuses an empty or multi-line endpoint and writes nothing" {
	sbatch_id --nodes=1 --mad-model=m --wrap '
		eval "$(mad-env)"
		mad-mark --ready "" 2>"$MAD_JOB_DIR/../e1.$SLURM_JOB_ID"; echo "rc=$?" >>"$MAD_JOB_DIR/../e1.$SLURM_JOB_ID"
		mad-mark --ready "$(printf "a\nb")" 2>"$MAD_JOB_DIR/../e2.$SLURM_JOB_ID"; echo "rc=$?" >>"$MAD_JOB_DIR/../e2.$SLURM_JOB_ID"
		ls "$MAD_JOB_DIR" >"$MAD_JOB_DIR/../ls.$SLURM_JOB_ID"'
	run "$AS_USER" mad-wait --timeout 120 "$jobid"
	assert_success
	run cat "$run_dir/e1.$jobid"
	assert_output --partial "mad-mark: --ready: the endpoint is empty"
	assert_output --partial "rc=64"
	run cat "$run_dir/e2.$jobid"
	assert_output --partial "mad-mark: --ready: the endpoint 'a\x0ab'"
	assert_output --partial "rc=64"
	run cat "$run_dir/ls.$jobid"
	refute_output --partial ready_rank
}
