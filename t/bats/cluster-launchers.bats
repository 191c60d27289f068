#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# templates/launchers/*.sh.j2 in real jobs on the test cluster, as the test user with
# mad.so on the plugstack: the torch-based ones with real PyTorch (gloo; torchrun through
# t/helpers/torchrun-compat, Debian's torch 1.13), the others through stand-ins
# (t/helpers/standin/) that check their argv against each launcher's documented flags
# and print what they got; and mad-env --barrier with array tasks held back.
# Small jobs: 2 nodes x 2 processes (each torch rank costs about 2 s of CPU).
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin launchers-run
	copy_torch_helpers
	copy_standins
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	tpl=$BATS_TEST_DIRNAME/../../templates/launchers
	export TORCH_ALLREDUCE_TIMEOUT=40
}

# Renders launchers/NAME.sh.j2 for a 2-node job with 2 processes per node into the shared
# folder (extra -D/-c arguments after NAME), submits it with sbatch --wait as the test
# user, bounded, and sets $outs to the job's output files (one per array task).
run_launcher() { # name [mad-render args...]
	local name=$1 job=launch-$BATS_TEST_NUMBER
	shift
	rm -f "$MAD_CLUSTER_SHARED/$job"-*.out "$MAD_CLUSTER_SHARED/$job.stop"
	mad-render -c "$tpl/example.yaml" -D "job_name=$job" -D "log_dir=$MAD_CLUSTER_SHARED" \
		-D nnodes=2 -D nproc_per_node=2 -D time=00:02:00 -D model=x "$@" \
		-o "$MAD_CLUSTER_SHARED/$job.sh" "$tpl/$name.sh.j2"
	chmod 0644 "$MAD_CLUSTER_SHARED/$job.sh"
	run "$AS_USER" timeout 150 sbatch --wait "$job.sh"
	outs=("$MAD_CLUSTER_SHARED/$job"-*.out)
	cat "${outs[@]}"
}

# The command words as a JSON data file in the shared folder.
command_json() { # words...
	local f=$MAD_CLUSTER_SHARED/cmd-$BATS_TEST_NUMBER.json
	python3 -c 'import json, sys; print(json.dumps({"command": sys.argv[1:]}))' "$@" >"$f"
	echo "$f"
}

# The stand-ins' lines of LAUNCHER in FILES.
standin_lines() { # launcher files...
	local l=$1
	shift
	cat "$@" | grep "^standin launcher=$l "
}

# N stand-in lines of LAUNCHER, node ranks 0..N-1 once each, nnodes=N everywhere, and one
# address, rank 0's own, and one port in all of them.
assert_standin_nodes() { # launcher n files...
	local l=$1 n=$2
	shift 2
	standin_lines "$l" "$@" | awk -v n="$n" '
		{ for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		seen[v["node_rank"]]++ { print "node rank " v["node_rank"] " twice"; bad = 1 }
		v["nnodes"] != n { print "nnodes=" v["nnodes"] ", not " n; bad = 1 }
		v["node_rank"] == 0 { self0 = v["self_addr"] }
		{ addr[v["addr"]]++; port[v["port"]]++; lines++ }
		END {
			if (lines != n) { print lines " lines, not " n; bad = 1 }
			for (r = 0; r < n; r++) if (!(r in seen)) { print "node rank " r " missing"; bad = 1 }
			for (a in addr) if (a != self0) { print "address " a " is not rank 0'"'"'s own (" self0 ")"; bad = 1 }
			c = 0; for (p in port) c++
			if (c != 1) { print c " ports"; bad = 1 }
			exit bad
		}'
}

@test "launchers: torchrun (torchrun-compat), 2 nodes x 2, nodes fan-out: real torch, sum = WORLD_SIZE = 4" {
	require_torch
	run_launcher torchrun -D torchrun=./torchrun-compat -c "$(command_json ./torch-allreduce)"
	assert_success
	assert_allreduce 4 "${outs[@]}"
}

@test "launchers: torchrun (torchrun-compat), 2 array tasks x 2, array fan-out: real torch, sum = 4" {
	require_torch
	run_launcher torchrun -D fanout=array -D torchrun=./torchrun-compat -c "$(command_json ./torch-allreduce)"
	assert_success
	((${#outs[@]} == 2))
	assert_allreduce 4 "${outs[@]}"
}

@test "launchers: srun per process, 2 nodes x 2, nodes fan-out: real torch env://, RANK = SLURM_PROCID" {
	require_torch
	run_launcher srun -c "$(command_json ./torch-allreduce)"
	assert_success
	assert_allreduce 4 "${outs[@]}"
	allreduce_lines "${outs[@]}" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		v["rank"] != v["procid"] { print; bad = 1 } END { exit bad }'
}

@test "launchers: srun per process, 2 array tasks x 2, array fan-out: real torch, RANK = NODE_RANK*2+LOCAL_RANK" {
	require_torch
	run_launcher srun -D fanout=array -c "$(command_json ./torch-allreduce)"
	assert_success
	assert_allreduce 4 "${outs[@]}"
	allreduce_lines "${outs[@]}" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		v["rank"] != v["node_rank"] * 2 + v["local"] { print; bad = 1 } END { exit bad }'
}

@test "launchers: megatron, 2 nodes x 2: TP x PP = WORLD_SIZE in the stand-in's argv, then real torch, sum = 4" {
	require_torch
	run_launcher megatron -c "$(command_json ./standin/megatron --num-layers 2)"
	assert_success
	assert_allreduce 4 "${outs[@]}"
}

@test "launchers: deepspeed --no_ssh on both nodes: the hostfile in rank order, this node's line, slots = 2" {
	run_launcher deepspeed -D deepspeed=./standin/deepspeed -c "$(command_json train.py --epochs 1)"
	assert_success
	assert_standin_nodes deepspeed 2 "${outs[@]}"
	[[ $(standin_lines deepspeed "${outs[@]}" | grep ' nproc=2 ' | grep -c ' hosts=n1,n2 script=train.py args=--epochs,1 ') == 2 ]]
}

@test "launchers: accelerate launch, nodes and array fan-out: --num_processes is all machines' (4)" {
	local fo
	for fo in nodes array; do
		run_launcher accelerate -D "fanout=$fo" -D accelerate=./standin/accelerate -c "$(command_json train.py)"
		assert_success
		assert_standin_nodes accelerate 2 "${outs[@]}"
		[[ $(standin_lines accelerate "${outs[@]}" | grep -c ' nproc=2 total=4 ') == 2 ]]
	done
}

@test "launchers: sglang.launch_server on both nodes: --dist-init-addr is rank 0's, --tp-size 4" {
	run_launcher sglang -D python=./standin/sglang-python -c "$(command_json --model-path /models/m)"
	assert_success
	assert_standin_nodes sglang 2 "${outs[@]}"
	[[ $(standin_lines sglang "${outs[@]}" | grep -c ' tp=4 ') == 2 ]]
}

@test "launchers: vllm on Ray, nodes and array fan-out: workers join only once the head is up, vllm serve sees them" {
	local fo
	for fo in nodes array; do
		run_launcher vllm-ray -D "fanout=$fo" -D ray=./standin/ray -D vllm=./standin/vllm \
			-c "$(command_json /models/m)"
		assert_success
		standin_lines ray-head "${outs[@]}" | grep -q ' node_rank=0 nnodes=2 '
		# the worker reached the head's address and port: it started after the head listened
		head_at=$(standin_lines ray-head "${outs[@]}" | grep -o ' addr=[^ ]* port=[^ ]* ')
		standin_lines ray-worker "${outs[@]}" | grep -q " node_rank=1 nnodes=2$head_at"
		standin_lines vllm "${outs[@]}" | grep -q ' node_rank=0 nnodes=2 tp=2 pp=2 workers=1 model=/models/m '
		# the head's server, outside the step's process tree, ends with its job: one left
		# listening would hold a port a later job's MASTER_PORT may be given
		assert_nothing_listens "$head_at"
	done
}

# Within 5 s, nothing accepts a connection at " addr=A port=P " (a stand-in line's words).
assert_nothing_listens() { # " addr=A port=P "
	local addr port i
	addr=$(sed -n 's/.* addr=\([^ ]*\) .*/\1/p' <<<"$1")
	port=$(sed -n 's/.* port=\([^ ]*\) .*/\1/p' <<<"$1")
	[[ -n $addr && -n $port ]] || { echo "no address and port in '$1'"; false; }
	for i in {1..50}; do
		timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$addr" "$port" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "something still listens on $addr:$port 5 s after its job ended"
	false
}

# Renders serving template NAME (extra mad-render arguments after it) for 2 nodes, submits
# it, and asserts what a pipeline sees: mad-wait --ready gives http://ADDR:PORT while the
# job runs, curl gets 200 from its /health, and the job then ends with success.
assert_ready_endpoint() { # name port [mad-render args...]
	local name=$1 port=$2 job=launch-$BATS_TEST_NUMBER-$1
	shift 2
	rm -f "$MAD_CLUSTER_SHARED/$job"-*.out "$MAD_CLUSTER_SHARED/$job.stop"
	mad-render -c "$tpl/example.yaml" -D "job_name=$job" -D "log_dir=$MAD_CLUSTER_SHARED" \
		-D nnodes=2 -D nproc_per_node=2 -D time=00:02:00 -D model=x -D port="$port" "$@" \
		-o "$MAD_CLUSTER_SHARED/$job.sh" "$tpl/$name.sh.j2"
	chmod 0644 "$MAD_CLUSTER_SHARED/$job.sh"
	# the stand-in serves until the test has asked it (STANDIN_SERVE_UNTIL)
	run "$AS_USER" env STANDIN_SERVE_UNTIL="$MAD_CLUSTER_SHARED/$job.stop" sbatch --parsable "$job.sh"
	assert_success
	jobid=${output%%;*}
	run --separate-stderr "$AS_USER" mad-wait --ready --timeout 120 "$jobid"
	assert_success
	assert_output --regexp "^http://[0-9.]+:$port\$"
	# the endpoint answers now
	run curl -fsS -o /dev/null -w '%{http_code}' "$output/health"
	"$AS_USER" touch "$MAD_CLUSTER_SHARED/$job.stop"
	assert_output 200
	run "$AS_USER" mad-wait --timeout 120 "$jobid"
	cat "$MAD_CLUSTER_SHARED/$job"-*.out
	assert_success
}

@test "launchers: vllm on Ray marks the job ready once /health answers: mad-wait --ready gives the endpoint, curl reaches it" {
	require curl "the readiness test's client"
	assert_ready_endpoint vllm-ray 8000 -D ray=./standin/ray -D vllm=./standin/vllm -c "$(command_json /models/m)"
}

@test "launchers: SGLang's rank 0 marks the job ready once /health answers: mad-wait --ready gives the endpoint, curl reaches it" {
	require curl "the readiness test's client"
	assert_ready_endpoint sglang 30000 -D python=./standin/sglang-python -c "$(command_json --model-path /models/m)"
}

@test "launchers: the Ray worker stand-in fails when no head listens (the vLLM test can catch a race)" {
	local out=$MAD_CLUSTER_SHARED/launch-$BATS_TEST_NUMBER.out addr=${MAD_CLUSTER_NODE_ADDRS%% *}
	run "$AS_USER" timeout 60 sbatch --wait --time=1 --nodes=2 --output="$out" \
		--wrap "srun --ntasks-per-node=1 ./standin/ray start --address=$addr:28999 --block"
	assert_failure
	look_anew "$out"
	cat "$out"
	grep -q "standin ray: worker on node rank [01]: the head at $addr:28999 is not up" "$out"
}

# An array of 4 tasks of one node, each running mad-env --barrier after DELAY seconds
# (a bash expression of SLURM_ARRAY_TASK_ID), with --mad-timeout=TIMEOUT.
submit_barrier() { # timeout delay-expression
	local job=barrier-$BATS_TEST_NUMBER
	rm -f "$MAD_CLUSTER_SHARED/$job"-*.out
	run "$AS_USER" timeout 150 sbatch --wait --time=2 --array=0-3 --nodes=1 --exclusive \
		--mad-model=x --mad-fanout=array --mad-timeout="$1" --output="$job-%a.out" \
		--wrap "sleep \$(($2)); start=\$(date +%s); mad-env --barrier; s=\$?; echo \"barrier rank=\$NODE_RANK status=\$s after=\$((\$(date +%s) - start))\"; exit \$s"
	outs=("$MAD_CLUSTER_SHARED/$job"-*.out)
	cat "${outs[@]}"
}

@test "barrier: 4 array tasks that all start pass it at once, each" {
	submit_barrier 30 0
	assert_success
	[[ $(cat "${outs[@]}" | grep -c '^barrier rank=[0-3] status=0 after=[0-2]$') == 4 ]]
	# one record per rank, written as the test user
	[[ $(find "$run_dir" -name 'started_rank[0-3]' -user "$MAD_CLUSTER_USER" | wc -l) -ge 4 ]]
}

@test "barrier: tasks 1 and 3 held back past the timeout: the others fail by it, naming ranks 1, 3" {
	submit_barrier 4 'SLURM_ARRAY_TASK_ID % 2 ? 10 : 0'
	for r in 0 2; do
		grep -q "^mad-env: barrier: ranks 1, 3 did not start within 4 s" "$MAD_CLUSTER_SHARED/barrier-$BATS_TEST_NUMBER-$r.out"
		grep -qE "^barrier rank=$r status=1 after=[4-6]$" "$MAD_CLUSTER_SHARED/barrier-$BATS_TEST_NUMBER-$r.out"
	done
	# the latecomers find everyone's record and pass
	for r in 1 3; do
		grep -qE "^barrier rank=$r status=0 after=[0-1]$" "$MAD_CLUSTER_SHARED/barrier-$BATS_TEST_NUMBER-$r.out"
	done
}

@test "barrier: the batch script of a nodes fan-out job is refused, not left waiting" {
	local out=$MAD_CLUSTER_SHARED/barrier-$BATS_TEST_NUMBER.out
	run "$AS_USER" timeout 60 sbatch --wait --time=1 --nodes=2 --mad-model=x --output="$out" \
		--wrap 'mad-env --barrier'
	assert_failure
	look_anew "$out"
	grep -q "mad-env: --barrier: the batch script of a nodes fan-out job runs on the first node only" "$out"
}
