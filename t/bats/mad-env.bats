#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-env and mad-mark on a faked job environment (the cluster tests run
# them in real jobs).
# shellcheck disable=SC2016 # the scripts are single-quoted: the shell under test expands them

bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	load_helpers
	run_dir=$BATS_TEST_TMPDIR/run
	mkdir -p "$run_dir"
	job=(env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=12 SLURM_JOB_NUM_NODES=2
		'SLURM_JOB_NODELIST=198.51.100.7,other' MAD_RUN_DIR="$run_dir")
}

@test "mad-env prints the contract as exports that dash and bash both read" {
	for sh in dash bash; do
		run "${job[@]}" "$sh" -c 'eval "$(mad-env)"; echo "$NODE_RANK $NNODES $MASTER_ADDR $MASTER_PORT $MAD_COLLECT_JOB_ID $MAD_JOB_DIR $MAD_ENV_FROM"'
		assert_success
		assert_output "0 2 198.51.100.7 $(auto_port 12) 12 $run_dir/12 mad-env"
	done
}

@test "a value with shell syntax stays one word" {
	weird="$BATS_TEST_TMPDIR/a b'\$(touch pwned)"
	mkdir -p "$weird"
	run env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=1 \
		SLURM_JOB_NODELIST=localhost MAD_RUN_DIR="$weird" \
		dash -c 'eval "$(mad-env)" && printf %s "$MAD_RUN_DIR"'
	assert_success
	assert_output "$weird"
	[[ ! -e pwned && ! -e $BATS_TEST_TMPDIR/pwned ]]
}

@test "on failure mad-env stops an eval'ing script: reason on stderr, exit 1" {
	run env -i PATH="$PATH" MAD_ERROR='rank 0 is gone' bash -c 'eval "$(mad-env)"; echo still running'
	assert_failure 1
	assert_output --partial 'mad-env: the job cannot run: rank 0 is gone (MAD_ERROR)'
	refute_output --partial 'still running'
	run env -i PATH="$PATH" SLURM_JOB_ID=1 bash -c 'eval "$(mad-env)"; echo still running'
	assert_failure 1
	assert_output --partial 'no model'
	run env -i PATH="$PATH" MAD_MODEL=m MAD_TIMEOUT=soon bash -c 'eval "$(mad-env)"; echo still running'
	assert_failure 1
	assert_output --partial "mad-env: --mad-timeout: 'soon' is not a number of seconds between 1 and 604800 (from MAD_TIMEOUT)"
	run env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=1 \
		SLURM_JOB_NODELIST=no-such-node.invalid bash -c 'eval "$(mad-env)"; echo still running'
	assert_failure 1
	assert_output --partial "cannot resolve rank 0's node 'no-such-node.invalid'"
}

@test "--explain names each source, --json is JSON" {
	run "${job[@]}" MAD_MASTER_PORT=auto mad-env --explain
	assert_success
	assert_line "MASTER_PORT=$(auto_port 12)    # env (auto: from job 12)"
	assert_line 'MAD_MODEL=m    # env'
	assert_line 'NODE_RANK=0    # SLURM'
	# the batch script of a 2-node job is no task: the process level unset
	assert_line 'RANK    # unset (batch script of 2 nodes)'
	run "${job[@]}" SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=198.51.100.7 mad-env --explain
	assert_line 'RANK=0    # computed'
	run "${job[@]}" MAD_MASTER_PORT=auto mad-env --explain
	assert_line 'MASTER_ADDR=198.51.100.7    # SLURM (rank 0'"'"'s node 198.51.100.7, resolved)'
	run "${job[@]}" MASTER_PORT=23456 mad-env --explain
	assert_line 'MASTER_PORT=23456    # user'
	assert_line 'MAD_MASTER_PORT=23456    # user'
	run "${job[@]}" SLURM_STEP_ID=0 SLURM_PROCID=3 SLURM_STEP_NUM_TASKS=4 SLURM_LOCALID=1 \
		SLURM_NODEID=1 SLURM_NNODES=2 'SLURM_STEP_TASKS_PER_NODE=2(x2)' \
		'SLURM_STEP_NODELIST=198.51.100.7,other' mad-env --explain
	assert_success
	assert_line 'RANK=3    # SLURM'
	assert_line 'WORLD_SIZE=4    # SLURM'
	assert_line 'LOCAL_RANK=1    # SLURM'
	assert_line 'LOCAL_WORLD_SIZE=2    # SLURM'
	assert_line 'MAD_NPROC_PER_NODE=2    # computed (tasks per node)'
	run "${job[@]}" mad-env --json
	assert_success
	python3 -c 'import json,sys; d = json.load(sys.stdin); assert d["NNODES"] == "2" and d["MASTER_ADDR"] == "198.51.100.7" and d["WORLD_SIZE"] is None' <<<"$output"
	# eval: an inherited RANK (a job submitted from inside a job) is unset
	run "${job[@]}" RANK=5 WORLD_SIZE=9 sh -c 'eval "$(mad-env)" && echo "[${RANK-unset} ${WORLD_SIZE-unset} $NODE_RANK]"'
	assert_output '[unset unset 0]'

}

# One task of a one-node srun step of 2 tasks, with what SLURM 22.05 sets
# per task under --gpus-per-task=1 (notes/local-cluster.md, GRES): task T
# sees "T" in both lists, SLURM_GPUS_ON_NODE the step's 2.  No run folder:
# task 1 would wait for its founder's job folder.
gpu_task() { # T [VAR=VALUE...]
	local t=$1
	shift
	env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=12 SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=127.0.0.1 SLURM_STEP_NODELIST=127.0.0.1 \
		SLURM_STEP_ID=0 SLURM_NODEID=0 SLURM_NNODES=1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=2 \
		SLURM_STEP_TASKS_PER_NODE=2 SLURM_PROCID="$t" SLURM_LOCALID="$t" SLURM_GPUS_ON_NODE=2 \
		CUDA_VISIBLE_DEVICES="$t" ROCR_VISIBLE_DEVICES="$t" "$@"
}

@test "MAD_LOCAL_DEVICE: --explain says where it came from; LOCAL_RANK past the visible GPUs is one line, strict an error" {
	run gpu_task 1 mad-env --explain
	assert_success
	assert_line 'LOCAL_RANK=1    # SLURM'
	assert_line 'MAD_LOCAL_DEVICE=0    # computed (0: SLURM bound this task'"'"'s own GPU; ROCR_VISIBLE_DEVICES=1, SLURM_GPUS_ON_NODE=2, LOCAL_RANK=1)'
	assert_line '# warning: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1): set_device(LOCAL_RANK) fails with '"'"'invalid device ordinal'"'"'; use MAD_LOCAL_DEVICE=0, e.g. torch.cuda.set_device(int(os.environ["MAD_LOCAL_DEVICE"]))'
	# eval: the values, and one line on stderr
	run --separate-stderr gpu_task 1 sh -c 'eval "$(mad-env)" && echo "$LOCAL_RANK $MAD_LOCAL_DEVICE"'
	assert_success
	assert_output '1 0'
	[[ $(grep -c 'LOCAL_RANK=1 but this task sees 1 GPU' <<<"$stderr") -eq 1 ]]
	[[ $stderr == 'mad-env: warning: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1): '* ]]
	# not said again where mad.so set up the task and said it
	run --separate-stderr gpu_task 1 MAD_ENV_FROM=spank MAD_COLLECT_JOB_ID=12 mad-env
	assert_success
	[[ -z $stderr ]]
	# task 0 sees its GPU at 0: nothing to say
	run --separate-stderr gpu_task 0 mad-env
	assert_success
	[[ -z $stderr ]]
	# every GPU visible (--gres=gpu:2 unbound): LOCAL_RANK
	run gpu_task 1 CUDA_VISIBLE_DEVICES=0,1 ROCR_VISIBLE_DEVICES=0,1 mad-env --explain
	assert_line --partial 'MAD_LOCAL_DEVICE=1    # computed (LOCAL_RANK: the task sees every GPU of the node'
	refute_line --partial 'warning'
	# a node without GPUs: unset
	run gpu_task 1 SLURM_GPUS_ON_NODE= CUDA_VISIBLE_DEVICES= ROCR_VISIBLE_DEVICES= mad-env --explain
	assert_success
	assert_line 'MAD_LOCAL_DEVICE    # unset (this task sees no GPU)'
	# a fact: a value inherited from a step on another node is unset
	run gpu_task 1 SLURM_GPUS_ON_NODE= CUDA_VISIBLE_DEVICES= ROCR_VISIBLE_DEVICES= MAD_LOCAL_DEVICE=3 \
		sh -c 'eval "$(mad-env)" && echo "[${MAD_LOCAL_DEVICE-unset}]"'
	assert_output '[unset]'
	# strict: the task stops, eval too
	run gpu_task 1 MAD_GPU_BIND=strict bash -c 'eval "$(mad-env)"; echo still running'
	assert_failure 1
	assert_output --partial 'mad-env: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1)'
	assert_output --partial '(--mad-gpu-bind=strict)'
	refute_output --partial 'still running'
	run gpu_task 1 MAD_GPU_BIND=sometimes mad-env
	assert_failure 1
	assert_output --partial "mad-env: --mad-gpu-bind: 'sometimes' is not one of warn, strict (from MAD_GPU_BIND)"
}

@test "--check reports LOCAL_RANK past the visible GPUs for the task, and strict fails it" {
	gpu_task 0 mad-env --check=10 >"$BATS_TEST_TMPDIR/rank0" 2>&1 3>&- &
	run --separate-stderr gpu_task 1 mad-env --check=10
	wait $!
	assert_success
	[[ $stderr == *'mad-env: --check: warning: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1)'* ]]
	grep -q 'check ok: 2 ranks agree' "$BATS_TEST_TMPDIR/rank0"
	[[ $(grep -c 'LOCAL_RANK' "$BATS_TEST_TMPDIR/rank0") -eq 0 ]]
	run gpu_task 1 MAD_GPU_BIND=strict mad-env --check=1
	assert_failure 1
	assert_output --partial 'mad-env: --check: LOCAL_RANK=1 but this task sees 1 GPU'
	refute_output --partial 'reach rank 0'
}

@test "--mad-socket-ifname: NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME set only where unset, never to loopback" {
	run "${job[@]}" mad-env --explain
	assert_success
	refute_line --partial 'NCCL_SOCKET_IFNAME'
	ifname=$(sed -n 's/^MAD_IFNAME=\([^ ]*\)    # computed (this node.s route to MASTER_ADDR 198.51.100.7)$/\1/p' <<<"$output")
	if [[ -n $ifname ]]; then
		run "${job[@]}" MAD_SOCKET_IFNAME=auto NCCL_SOCKET_IFNAME=ib0 mad-env --explain
		assert_success
		assert_line "GLOO_SOCKET_IFNAME=$ifname    # env (--mad-socket-ifname=auto, unset before)"
		refute_line --partial 'NCCL_SOCKET_IFNAME='
		run "${job[@]}" MAD_SOCKET_IFNAME=auto sh -c 'eval "$(mad-env)" && echo "$MAD_IFNAME $NCCL_SOCKET_IFNAME $GLOO_SOCKET_IFNAME"'
		assert_output "$ifname $ifname $ifname"
	fi
	run "${job[@]}" MAD_SOCKET_IFNAME=lo mad-env
	assert_failure 1
	assert_output --partial "mad-env: --mad-socket-ifname=lo: 'lo' is the loopback interface on "
	run "${job[@]}" MAD_SOCKET_IFNAME=auto SLURM_JOB_NUM_NODES=1 SLURM_JOB_NODELIST=127.0.0.1 mad-env --explain
	assert_success
	assert_line 'MAD_IFNAME    # unset (no interface but loopback, or none up, routes to MASTER_ADDR here)'
	refute_line --partial 'SOCKET_IFNAME'
}

@test "--mad-socket-ifname leaves NCCL_SOCKET_IFNAME to NCCL's own files: NCCL_CONF_FILE, else ~/.nccl.conf, then /etc/nccl.conf" {
	run "${job[@]}" mad-env --explain
	ifname=$(sed -n 's/^MAD_IFNAME=\([^ ]*\)    # computed (this node.s route to MASTER_ADDR 198.51.100.7)$/\1/p' <<<"$output")
	# CI's machine routes there (its default route); a test that cannot tell fails there
	[[ -n $ifname || -z ${CI:-} ]] || { echo "no route to 198.51.100.7 here: MAD_IFNAME unknown"; false; }
	[[ -n $ifname ]] || skip "no route to 198.51.100.7 on this machine"
	conf=$BATS_TEST_TMPDIR/nccl.conf home=$BATS_TEST_TMPDIR/home
	mkdir -p "$home"
	printf '# the site\nNCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME=ib0\n' >"$conf"
	run "${job[@]}" MAD_SOCKET_IFNAME=auto NCCL_CONF_FILE="$conf" mad-env --explain
	assert_success
	assert_line "NCCL_SOCKET_IFNAME    # unset (NCCL reads it from $conf)"
	assert_line "GLOO_SOCKET_IFNAME=$ifname    # env (--mad-socket-ifname=auto, unset before)"
	# ~/.nccl.conf where NCCL_CONF_FILE is unset; and an enclosing step's own
	# value (mad's: equal to its MAD_IFNAME) gives way to it
	cp "$conf" "$home/.nccl.conf"
	run "${job[@]}" MAD_SOCKET_IFNAME=auto HOME="$home" MAD_ENV_FROM=spank MAD_COLLECT_JOB_ID=12 MAD_IFNAME=eth9 \
		NCCL_SOCKET_IFNAME=eth9 sh -c 'eval "$(mad-env)" && echo "[${NCCL_SOCKET_IFNAME-unset}] [$GLOO_SOCKET_IFNAME]"'
	assert_success
	assert_output "[unset] [$ifname]"
	# the user's own value stays, file or not
	run "${job[@]}" MAD_SOCKET_IFNAME=auto HOME="$home" NCCL_SOCKET_IFNAME=ib1 \
		sh -c 'eval "$(mad-env)" && echo "[$NCCL_SOCKET_IFNAME]"'
	assert_output "[ib1]"
	# /etc/nccl.conf's turn comes after a user file that does not name it: this
	# machine's has none, so mad sets it; a value NCCL would not use (one byte) is none
	printf 'NCCL_DEBUG=INFO\n' >"$conf"
	printf 'NCCL_SOCKET_IFNAME=x\n' >"$home/.nccl.conf"
	for env in NCCL_CONF_FILE="$conf" HOME="$home"; do
		# CI's fresh machine has none; elsewhere a site's would decide
		[[ ! -e /etc/nccl.conf || -z ${CI:-} ]] || { echo "/etc/nccl.conf exists here"; false; }
		[[ ! -e /etc/nccl.conf ]] || skip "this machine has an /etc/nccl.conf"
		run "${job[@]}" MAD_SOCKET_IFNAME=auto "$env" sh -c 'eval "$(mad-env)" && echo "[$NCCL_SOCKET_IFNAME]"'
		assert_output "[$ifname]"
	done
	# keep: no file is read, nothing is set
	run "${job[@]}" MAD_SOCKET_IFNAME=keep NCCL_CONF_FILE=/dev/null/nccl.conf mad-env --explain
	assert_success
	refute_line --partial 'SOCKET_IFNAME'
}

@test "srun -E: the job's SLURM_NNODES and SLURM_NTASKS kept in a step of one node give way to the step's" {
	run "${job[@]}" SLURM_JOB_NUM_NODES=4 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NODEID=0 \
		SLURM_NNODES=4 SLURM_NTASKS=4 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=1 \
		SLURM_LOCALID=0 SLURM_STEP_TASKS_PER_NODE=1 SLURM_STEP_NODELIST=198.51.100.7 \
		sh -c 'eval "$(mad-env)" && echo "$NNODES $WORLD_SIZE $NODE_RANK $MASTER_ADDR"'
	assert_success
	assert_output "1 1 0 198.51.100.7"
}

@test "array fan-out: rank 0 publishes, a peer completes the rendezvous, a missing rank 0 times out" {
	arr=(env -i PATH="$PATH" MAD_MODEL=m MAD_FANOUT=array MAD_NNODES=2 SLURM_ARRAY_JOB_ID=40
		MAD_RUN_DIR="$run_dir" MAD_TIMEOUT=2)
	run "${arr[@]}" SLURM_JOB_ID=41 SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_JOB_ID=99 mad-env
	assert_failure 1
	assert_output --partial "rank 1 waited 2 s (--mad-timeout=2) for rank 0 to publish its address in '$run_dir/99/rendezvous'"
	run "${arr[@]}" SLURM_JOB_ID=40 SLURM_ARRAY_TASK_ID=0 mad-env
	assert_success
	addr=$(sed -n 's/^export MASTER_ADDR=//p' <<<"$output")
	[[ $addr =~ ^[0-9.]+$ && $addr != 127.* ]]
	run "${arr[@]}" SLURM_JOB_ID=41 SLURM_ARRAY_TASK_ID=1 mad-env
	assert_success
	assert_line "export MASTER_ADDR=$addr"
	assert_line 'export NODE_RANK=1'
}

@test "mad-mark writes this rank's marker atomically, as the caller, over what an earlier attempt left" {
	run "${job[@]}" mad-mark 3
	assert_success
	[[ $(head -1 "$run_dir/12/done_rank0") == 3 ]]
	# one writer per rank and attempt: what is there is an earlier attempt's
	# (or this writer's), never kept in place of this write
	run "${job[@]}" mad-mark 0
	assert_success
	[[ $(head -1 "$run_dir/12/done_rank0") == 0 ]]
	grep -q '^cluster=.*$' "$run_dir/12/attempt"
	grep -qx 'job=12' "$run_dir/12/attempt"
	[[ $(stat -c %u "$run_dir/12/done_rank0") == $(id -u) ]]
	[[ -z $(find "$run_dir/12" -name '.*tmp*') ]]
}

@test "mad-mark passes over a link planted under the job's name, says so, and marks in a name no one can plant" {
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$run_dir/13"
	run --separate-stderr env "${job[@]:1}" SLURM_JOB_ID=13 mad-mark 2
	assert_success
	[[ $stderr == *"warning: ignored '$run_dir/13': a symbolic link"* ]]
	made=("$run_dir"/13~*)
	((${#made[@]} == 1)) && [[ ${made[0]} =~ /13~[0-9a-f]{16}$ ]]
	[[ $(head -1 "${made[0]}/done_rank0") == 2 ]]
	[[ -z $(ls "$BATS_TEST_TMPDIR/elsewhere") ]]
	# the next writer of the attempt, and a reader, find it again
	run env "${job[@]:1}" SLURM_JOB_ID=13 mad-mark 0
	assert_success
	[[ $(head -1 "${made[0]}/done_rank0") == 0 ]]
	run env "${job[@]:1}" SLURM_JOB_ID=13 mad-env --json
	assert_output --partial "${made[0]}"
}

# Trials of an array of N ranks whose mad-env start together in a run folder every user may
# write, while another user makes and removes a folder under the array's id in a loop:
# prints how many trials split the attempt between folders (or lost a rank).
race_trials() { # trials ranks
	local trials=$1 n=$2 run churner t k dirs pids split=0 lost=0 user=() other=() port
	run=$(mktemp -d /tmp/mad-race-XXXXXX)
	chmod 1777 "$run"
	# the job's user and another: two ordinary users when root can be them
	if [[ $(id -u) == 0 ]]; then
		user=(setpriv --reuid=4321 --regid=4321 --clear-groups)
		other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
	for ((t = 1; t <= trials; t++)); do
		local id=$((1000 + t))
		# a port free now: rank 0's bind check must not meet another test's
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
		"${other[@]}" sh -c 'while :; do mkdir "$1" 2>/dev/null && rmdir "$1" 2>/dev/null; done' sh "$run/$id" &
		churner=$!
		pids=()
		for ((k = 0; k < n; k++)); do
			"${user[@]}" env -i PATH="$PATH" MAD_MODEL=m MAD_FANOUT=array MAD_NNODES="$n" \
				MAD_TIMEOUT=60 MAD_MASTER_PORT="$port" SLURM_ARRAY_JOB_ID="$id" \
				SLURM_ARRAY_TASK_ID="$k" SLURM_JOB_ID=$((id * 100 + k)) MAD_RUN_DIR="$run" \
				mad-env 2>"$run/.err$k" | sed -n 's/^export MAD_JOB_DIR=//p' >"$run/.rank$k" &
			pids+=($!)
		done
		wait "${pids[@]}"
		kill "$churner"
		wait "$churner" 2>/dev/null
		# a split: ranks given two folders; a rank lost: no folder, and why
		dirs=$(cat "$run"/.rank* | sort -u)
		if (($(grep -c . <<<"$dirs") > 1)); then
			split=$((split + 1))
			echo "trial $t, $n ranks, split: $(cat "$run"/.rank* | sort | uniq -c | tr '\n' ' ')" >&2
		fi
		for ((k = 0; k < n; k++)); do
			[[ -s $run/.rank$k ]] && continue
			lost=$((lost + 1))
			echo "trial $t, $n ranks, rank $k has no folder: $(head -c 300 "$run/.err$k")" >&2
		done
		rm -f "$run"/.rank* "$run"/.err*
	done
	rm -rf "$run"
	echo "$split split, $lost lost"
}

@test "array ranks that start together meet in one folder while another user makes and removes one under the id: 0 splits in 200 trials (4 and 16 ranks; a quarter under ASan)" {
	run --separate-stderr race_trials "$(trials 100)" 4
	echo "$stderr"
	assert_output "0 split, 0 lost"
	run --separate-stderr race_trials "$(trials 100)" 16
	echo "$stderr"
	assert_output "0 split, 0 lost"
}

@test "another user's entries under the next 100 ids (the id, ~1 to ~7 and 20 other names each) block no job" {
	run_dir=$(mktemp -d /tmp/mad-planted-XXXXXX)
	chmod 1777 "$run_dir"
	as=()
	[[ $(id -u) != 0 ]] || as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${as[@]}" sh -c 'cd "$1" && for id in $(seq 500 599); do : >"$id"; for k in $(seq 7); do : >"$id~$k"; done; for k in $(seq 20); do mkdir "$id~$(printf %016x "$k")"; done; done' sh "$run_dir"
	for id in 500 547 599; do
		run env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=$id SLURM_JOB_NUM_NODES=1 \
			SLURM_JOB_NODELIST=localhost MAD_RUN_DIR="$run_dir" mad-mark 0
		assert_success
		marked=$(find "$run_dir" -maxdepth 2 -name done_rank0 -path "*/$id~*" -user "$(id -u)")
		[[ $marked =~ /$id~[0-9a-f]{16}/done_rank0$ ]] || fail "job $id marked in '$marked'"
	done
	rm -rf "$run_dir"
}

@test "mad-mark: bad status or no run folder is a usage error" {
	for bad in 256 -1 x ''; do
		run "${job[@]}" mad-mark "$bad"
		assert_failure 64
	done
	run env -i PATH="$PATH" MAD_MODEL=m SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=1 \
		SLURM_JOB_NODELIST=localhost mad-mark 0
	assert_failure 64
	assert_output --partial 'no run folder: set --mad-run-dir or MAD_RUN_DIR'
}
