#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end "as spur would": spur's sbatch, squeue, sacct, scancel and scontrol (t/spur/bin)
# over the real test cluster, each node's launch through spur's SPANK host (t/spur/spurd-spank)
# with mad.so, job scripts using mad-env and mad-mark; as the test user.  Every test runs for
# both spur generations, SPUR_EMU_VERSION 0.8 and 0.12 (the table in t/spur/lib.sh).
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	plugstack_save
	: >"$MAD_CLUSTER_PLUGSTACK" # SLURM itself runs no plugin: spur's host does
	host=${MAD_BUILD:-${MAD_BUILDDIR:-}}/t/spur/spurd-spank
	[[ -x $host ]] || { echo "no spurd-spank at $host (make check builds it)"; return 1; }
	cp "$host" "$MAD_CLUSTER_SHARED/spurd-spank"
	chmod 0755 "$MAD_CLUSTER_SHARED/spurd-spank"
	so=$MAD_PREFIX/lib/slurm/mad.so
	echo "optional $so" >"$MAD_CLUSTER_SHARED/spur-plugstack.conf"
	printf 'optional  %s\n' "$so" >"$MAD_CLUSTER_SHARED/spur-plugstack-blank.conf"
	chmod 0644 "$MAD_CLUSTER_SHARED"/spur-plugstack*.conf
	run_dir=$MAD_CLUSTER_SHARED/run-spur
	fresh_run_dir "$run_dir"
	cat >"$MAD_CLUSTER_SHARED/spur-job.sh" <<-'JOB'
		#!/bin/bash
		trap 'mad-mark $?' EXIT
		eval "$(mad-env)"
		./tcp-exchange
	JOB
	chmod 0755 "$MAD_CLUSTER_SHARED/spur-job.sh"
	# torchrun on every node from the contract alone (torch 1.13's flag spelling)
	cat >"$MAD_CLUSTER_SHARED/spur-torch.sh" <<-'JOB'
		#!/bin/bash
		trap 'mad-mark $?' EXIT
		eval "$(mad-env)"
		./torchrun-compat --nnodes="$NNODES" --node_rank="$NODE_RANK" \
			--nproc_per_node="$MAD_NPROC_PER_NODE" --master_addr="$MASTER_ADDR" \
			--master_port="$MASTER_PORT" ./torch-allreduce
	JOB
	chmod 0755 "$MAD_CLUSTER_SHARED/spur-torch.sh"
	copy_torch_helpers
	export run_dir so
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	require_spur_host "$MAD_CLUSTER_SHARED/spurd-spank" # a stand-in without spur's source
	gens=(0.8 0.12)
	spur_env=(env PATH="$BATS_TEST_DIRNAME/../spur/bin:$PATH"
		SPUR_EMU_HOST="$MAD_CLUSTER_SHARED/spurd-spank"
		SPUR_PLUGSTACK="$MAD_CLUSTER_SHARED/spur-plugstack.conf"
		MAD_MODEL=m MAD_RUN_DIR="$run_dir")
}

# spur's commands for generation GEN, as the test user
use_gen() {
	spur=("$AS_USER" "${spur_env[@]}" SPUR_EMU_VERSION="$1")
	echo "--- spur $1"
}

# spur's sbatch has no --wait: poll spur's squeue until the job has left it.
wait_gone() {
	for _ in $(seq 240); do
		[[ -z $("${spur[@]}" squeue -h -j "$1,$1" 2>/dev/null) ]] && return 0
		sleep 0.5
	done
	echo "job $1 still in the queue"
	return 1
}

# sacct_ids J N: spur's sacct asked every 0.2 s until it has listed each of the ids J+1..J+N
# (at any time: the test cluster keeps a finished job's record only MinJobAge seconds, so
# asking once after the tasks end may find none); prints every id it listed, once each.
# Bounded by 120 s of clock; then says which ids never came, and sacct's last stderr.
sacct_ids() {
	local j=$1 n=$2 seen=$BATS_TEST_TMPDIR/sacct-ids t missing end=$((SECONDS + 120))
	: >"$seen"
	while :; do
		"${spur[@]}" sacct -n -o jobid 2>"$BATS_TEST_TMPDIR/sacct.err" | tr -d ' ' >>"$seen" || true
		missing=''
		for ((t = 1; t <= n; t++)); do grep -qx "$((j + t))" "$seen" || missing+=" $((j + t))"; done
		[[ -n $missing ]] || break
		if ((SECONDS >= end)); then
			echo "sacct never listed:$missing; its last stderr: $(head -c 500 "$BATS_TEST_TMPDIR/sacct.err")" >&2
			break
		fi
		sleep 0.2
	done
	sort -u "$seen"
}

# waits until FILE has LINES lines (the job wrote them all)
wait_lines() {
	for _ in $(seq 120); do
		look_anew "$1"
		[[ -r $1 && $(wc -l <"$1") -ge $2 ]] && return 0
		sleep 0.5
	done
	echo "$1: fewer than $2 lines"
	cat "$1" 2>/dev/null
	return 1
}

# spur_lib FUNCTION ARGS...: a function of t/spur/lib.sh, as the test user (spur's state is
# the user's)
spur_lib() {
	"${spur[@]}" bash -c '. "$1"; "${@:2}"' - "$BATS_TEST_DIRNAME/../spur/lib.sh" "$@"
}

# No test leaves a job the controller lists for ever (spur #803's, spur_spurd_restart).
teardown() {
	[[ -z ${spur+set} ]] || spur_lib spur_orphan_end
}

# spur_submit ARGS...: through spur's sbatch, which cannot wait: "Submitted batch job J".
spur_submit() {
	run "${spur[@]}" "$@"
	assert_success
	assert_output --regexp '^Submitted batch job [0-9]+$'
	jobid=${output##* }
}

@test "spur's sbatch rejects --mad-*, --wait and --version on the command line and in #SBATCH lines; nothing queued" {
	printf '#!/bin/bash\n#SBATCH --mad-model=m\ntrue\n' >"$MAD_CLUSTER_SHARED/sbatch-line.sh"
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		# Finished jobs of earlier tests may age out meanwhile (MinJobAge):
		# only a job id that was not listed before would mean one was queued.
		before=$("${spur[@]}" squeue -h -t all -o %i | sort)
		run "${spur[@]}" sbatch --mad-model=m --wrap true
		assert_failure 2
		assert_output --partial "unexpected argument '--mad-model=m' found"
		run "${spur[@]}" sbatch sbatch-line.sh
		assert_failure 2
		run "${spur[@]}" sbatch --wait --wrap true
		assert_failure 2
		run "${spur[@]}" sbatch --version
		assert_failure 2
		after=$("${spur[@]}" squeue -h -t all -o %i | sort)
		run comm -13 <(echo "$before") <(echo "$after")
		assert_output ''
	done
}

@test "spur's sbatch: its own options, --parsable prints the bare id, --export exact names on 0.8, SLURM's forms on 0.12" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		run "${spur[@]}" sbatch --parsable -N 1 -w n2 --comment=c --mpi=none --requeue -o 'exp-%j.out' \
			--wrap 'echo "A=${A:-unset} B=${B:-unset} MAD_MODEL=${MAD_MODEL:-unset}"; echo "node=$SLURMD_NODENAME"'
		assert_success
		assert_output --regexp '^[0-9]+$'
		a=$output
		run env A=1 B=2 "${spur[@]}" sbatch --parsable --export=A -o 'exp-%j.out' \
			--wrap 'echo "A=${A:-unset} B=${B:-unset}"'
		b=$output
		run env A=1 B=2 "${spur[@]}" sbatch --parsable --export=ALL,A=5 -o 'exp-%j.out' \
			--wrap 'echo "A=${A:-unset} B=${B:-unset} HOME=${HOME:-unset}"'
		c=$output
		run env A=1 "${spur[@]}" sbatch --parsable --export=NONE -o 'exp-%j.out' \
			--wrap 'echo "A=${A:-unset} MAD_MODEL=${MAD_MODEL:-unset}"'
		d=$output
		for j in "$a" "$b" "$c" "$d"; do wait_lines "exp-$j.out" 1; done
		wait_lines "exp-$a.out" 2
		grep -qx 'A=unset B=unset MAD_MODEL=m' "exp-$a.out"
		grep -qx 'node=n2' "exp-$a.out"
		grep -qx 'A=1 B=unset' "exp-$b.out"
		if [[ $gen != 0.8 ]]; then
			# 0.12 (#795): ALL seeds the spur_submit env, A=5 sets on top
			grep -qx 'A=5 B=2 HOME=.*' "exp-$c.out"
		else
			grep -qx 'A=unset B=unset HOME=/root' "exp-$c.out" # nothing exported: spurd's HOME shows through
		fi
		grep -qx 'A=unset MAD_MODEL=unset' "exp-$d.out"
		# #SBATCH lines: read until the first command, quoted words kept whole
		printf '#!/bin/bash\n#SBATCH --job-name="q r" --hold\ntrue\n#SBATCH --bogus\n' >directives.sh
		run "${spur[@]}" sbatch --parsable directives.sh
		assert_success
		e=$output
		run "${spur[@]}" squeue -h -j "$e" -o '%j|%T'
		assert_output 'q r|PENDING'
		"${spur[@]}" scancel "$e"
	done
}

@test "(a) native 4-node spur job: every node runs the script, ranks from SPANK + mad-env, TCP exchange" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit sbatch --nodes=4 spur-job.sh
		wait_gone "$jobid"
		out=$MAD_CLUSTER_SHARED/spur-$jobid.out # spur's default name, spur's id
		cat "$out"
		grep -qx 'exchange ok: ranks 1..3' "$out"
		[[ $(grep -c '^contract .* fanout=nodes scheduler=spur from=mad-env$' "$out") -eq 4 ]]
		for r in 0 1 2 3; do
			[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
		done
	done
}

@test "PyTorch on spur: torchrun per node, 4 nodes x 2 from the contract, nodes and array fan-out: sum = WORLD_SIZE" {
	require_torch
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit env MAD_NPROC_PER_NODE=2 TORCH_ALLREDUCE_TIMEOUT=40 sbatch --nodes=4 --exclusive \
			-o 'torch-%j.out' spur-torch.sh
		wait_gone "$jobid"
		cat "torch-$jobid.out"
		assert_allreduce 8 "torch-$jobid.out"
		for r in 0 1 2 3; do
			[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
		done
		spur_submit env MAD_NPROC_PER_NODE=2 MAD_FANOUT=array MAD_NNODES=4 TORCH_ALLREDUCE_TIMEOUT=40 \
			sbatch --array=0-3 --exclusive --nodes=1 -o 'torch-arr-%A_%a.out' spur-torch.sh
		wait_gone "$jobid"
		cat torch-arr-"$jobid"_*.out
		assert_allreduce 8 torch-arr-"$jobid"_*.out
	done
}

@test "spur's launch env on the nodes: uncompressed nodelist, peers' FQDNs that resolve; NODE_RANK, MASTER_*, RANK/WORLD_SIZE only on 0.8" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		# no model: what spur itself gives, untouched by mad.so
		spur_submit env -u MAD_MODEL RANK=user sbatch --nodes=3 -o 'env-%j.out' --wrap \
			'echo "$SLURM_NODEID node=${NODE_RANK:-none} procid=$SLURM_PROCID local=$SLURM_LOCALID/${LOCAL_RANK:-none}/${LOCAL_WORLD_SIZE:-none}/${NPROC_PER_NODE:-none} list=$SLURM_JOB_NODELIST name=$SLURMD_NODENAME peers=$SPUR_PEER_NODES master=${MASTER_ADDR:-none}:${MASTER_PORT:-none} rank=${RANK:-none} world=${WORLD_SIZE:-none} resolves=$(getent hosts "${SPUR_PEER_NODES%%:*}" | wc -l)"'
		wait_lines "env-$jobid.out" 3
		out=env-$jobid.out
		cat "$out"
		for r in 0 1 2; do
			line=$(grep "^$r " "$out")
			[[ $line == *" resolves=1" ]]
			if [[ $gen == 0.8 ]]; then
				[[ $line == *"node=$r procid=$r local=0/0/1/1 list=n1,n2,n3 name=n$((r + 1)) "* ]]
				[[ $line == *"peers=n1.spur.test:6818,n2.spur.test:6818,n3.spur.test:6818 master=n1.spur.test:29500 "* ]]
				[[ $line == *" rank=$r world=3 "* ]]
			else
				[[ $line == *"node=none procid=$r local=0/none/none/none list=n1,n2,n3 name=n$((r + 1)) "* ]]
				[[ $line == *"peers=n1.spur.test:6818,n2.spur.test:6818,n3.spur.test:6818 master=none:none "* ]]
				[[ $line == *" rank=user world=none "* ]]
			fi
		done
		# a single-node job has NODE_RANK too, on 0.8
		spur_submit env -u MAD_MODEL sbatch -o 'env-%j.out' --wrap 'echo "node=${NODE_RANK:-none} master=${MASTER_ADDR:-none}"'
		wait_lines "env-$jobid.out" 1
		if [[ $gen == 0.8 ]]; then grep -qx 'node=0 master=none' "env-$jobid.out"; else grep -qx 'node=none master=none' "env-$jobid.out"; fi
	done
}

@test "spur --mpi=pmix, 2 nodes x 2 tasks: no SPANK; each task's mad-env gives its rank, local rank, one MASTER_ADDR" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		# agent_server.rs pmix_multi_task: the script forked once per task, SPANK skipped
		spur_submit env SPUR_EMU_TRACE=1 sbatch --nodes=2 --ntasks-per-node=2 --mpi=pmix -o 'pmix-%j.out' --wrap \
			'eval "$(mad-env)"; echo "task rank=${RANK:-none} world=${WORLD_SIZE:-none} local=${LOCAL_RANK:-none}/${LOCAL_WORLD_SIZE:-none} node=${NODE_RANK:-none}/${NNODES:-none} master=${MASTER_ADDR:-none} from=${MAD_ENV_FROM:-none}"'
		wait_lines "pmix-$jobid.out" 4
		wait_gone "$jobid"
		out=pmix-$jobid.out
		cat "$out" "spur-$jobid.out"
		[[ $(grep -c '^task ' "$out") -eq 4 ]]
		for r in 0 1 2 3; do
			grep -Eqx "task rank=$r world=4 local=$((r % 2))/2 node=$((r / 2))/2 master=[0-9a-f.:]+ from=mad-env" "$out"
		done
		[[ $(sed -n 's/^task .* master=\([^ ]*\) .*/\1/p' "$out" | sort -u | wc -l) -eq 1 ]]
		run grep -c 'init, task_init ran' "spur-$jobid.out"
		assert_output 0 # SPANK never ran
	done
}

@test "(b) spur array fan-out: task ids J+1.., collected under SLURM_ARRAY_JOB_ID, TCP exchange" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit env MAD_FANOUT=array MAD_NNODES=4 sbatch --array=0-3 --exclusive --nodes=1 \
			--output='spur-arr-%A_%a.out' spur-job.sh
		# spur's ids, gathered while the tasks run
		run sacct_ids "$jobid" 4
		ids=$output
		wait_gone "$jobid"
		cat "$MAD_CLUSTER_SHARED"/spur-arr-"$jobid"_*.out
		grep -qx 'exchange ok: ranks 1..3' "$MAD_CLUSTER_SHARED/spur-arr-${jobid}_0.out"
		for r in 0 1 2 3; do
			grep -q "^contract .* rank=$r .* fanout=array scheduler=spur " "$MAD_CLUSTER_SHARED/spur-arr-${jobid}_$r.out"
			[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
		done
		# spur's ids: every task is a job of its own, J+1..J+4, none equal to J
		run echo "$ids"
		for t in 1 2 3 4; do assert_line "$((jobid + t))"; done
		refute_line "$jobid"
	done
}

@test "multi-node array tasks get the whole multi-node env (its torch variables only on 0.8, #793)" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit env -u MAD_MODEL sbatch --array=0-1 --nodes=2 -o 'marr-%A_%a.out' --wrap \
			'echo "job=$SLURM_JOB_ID array=$SLURM_ARRAY_JOB_ID task=$SLURM_ARRAY_TASK_ID nodeid=$SLURM_NODEID node=${NODE_RANK:-none} nnodes=$SLURM_NNODES master=${MASTER_ADDR:-none}"'
		for t in 0 1; do
			f=marr-${jobid}_$t.out
			wait_lines "$f" 2
			cat "$f"
			for r in 0 1; do
				if [[ $gen == 0.8 ]]; then
					grep -q "^job=$((jobid + 1 + t)) array=$jobid task=$t nodeid=$r node=$r nnodes=2 master=n[0-9].spur.test$" "$f"
				else
					grep -q "^job=$((jobid + 1 + t)) array=$jobid task=$t nodeid=$r node=none nnodes=2 master=none$" "$f"
				fi
			done
		done
	done
}

@test "a batch script that launches steps runs on the first node only; the others hold, SPANK runs on all" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		# srun as a command, never run: the mention is what counts
		spur_submit env SPUR_EMU_TRACE=1 sbatch --nodes=3 -o 'hold-%j.out' --wrap \
			'if false; then srun true; fi; echo "script on $NODE_RANK"'
		wait_gone "$jobid"
		out=hold-$jobid.out
		cat "$out"
		[[ $(grep -c '^script on ' "$out") -eq 1 ]]
		grep -qx 'script on 0' "$out"
		# stderr: spur-%j.out, as -e was not given (crates/spur-core/src/job.rs)
		cat "spur-$jobid.out"
		[[ $(grep -c "spurd-spank: job $jobid: init, task_init ran" "spur-$jobid.out") -eq 3 ]]
		# a quoted or commented mention: 0.8 still holds, 0.12 ignores it (#627)
		spur_submit sbatch --nodes=2 -o 'hold-%j.out' --wrap 'echo "srun later, on $NODE_RANK" # mpirun'
		wait_gone "$jobid"
		cat "hold-$jobid.out"
		if [[ $gen == 0.8 ]]; then
			[[ $(grep -c '^srun later' "hold-$jobid.out") -eq 1 ]]
		else
			[[ $(grep -c '^srun later' "hold-$jobid.out") -eq 2 ]]
		fi
	done
}

# spur runs a script that launches steps on its first node only (the others hold): mad-env and
# mad-mark say on which nodes the script ran (script_rank<N>), so mad-wait expects no marker of
# a node that held.  The emulation runs no spur step: a mention of srun is what counts.
@test "a batch script that launches steps: mad-wait decides by the first node's marker, the holding nodes owe none" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		for st in 0 3; do
			spur_submit sbatch --nodes=3 -o /dev/null --wrap \
				"eval \"\$(mad-env)\"; if false; then srun true; fi; mad-mark $st; exit $st"
			SECONDS=0
			# the verdict on stderr, the JSON on stdout, from one wait: a second mad-wait
			# after the end would find the job forgotten (MinJobAge) and never listed, so
			# pending for its startup grace (5 min).  A grace of 240 s: a success decided
			# once the job is gone comes long before it, on a machine as busy as it may be
			run --separate-stderr "${spur[@]}" mad-wait --json --interval 1 --grace 240 "$jobid"
			echo "$stderr (${SECONDS} s)"
			echo "$output"
			if ((st == 0)); then
				assert_success
				((SECONDS < 200)) # decided once the job is gone, not after the grace
				[[ $stderr == *"rank 0 exited 0; ranks 1-2 never ran the job script"* ]]
				python3 -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]; assert (j["held"], j["missing"]) == ([1, 2], []), j' <<<"$output"
			else
				assert_failure 1
				[[ $stderr == *"rank 0 failed with exit status 3"* ]]
			fi
			[[ -e $run_dir/$jobid/script_rank0 && ! -e $run_dir/$jobid/script_rank1 ]]
			wait_gone "$jobid" # a failure is decided while the job may still be listed
		done
	done
}

# spur's steps (bin/srun: no SPANK, the job's node ids; lib.sh fact step_nodes): over every node,
# each task's mad-env gives real PyTorch its world; a subset (-w, #868 on 0.12) starts off the
# job's first node, and task 0 fails at once naming why; up to 0.11 -w is not applied and the
# step runs on the job's first nodes.  mad-wait's verdict is the script's (node 0's) marker.
@test "spur steps: every node runs real torch from each task's mad-env; a subset step (#868) fails at once on 0.12, runs on the first nodes on 0.8" {
	require_torch
	cat >"$MAD_CLUSTER_SHARED/spur-steps.sh" <<-'JOB'
		#!/bin/bash
		eval "$(mad-env)"
		srun -n 4 bash -c 'eval "$(mad-env)" && exec ./torch-allreduce' || exit 10
		srun -w n3,n4 -n 2 bash -c 'eval "$(mad-env)" && echo "subset $(hostname) rank=$RANK node=$NODE_RANK nnodes=$NNODES master=$MASTER_ADDR"'
		st=$?
		mad-mark $st
		exit $st
	JOB
	chmod 0755 "$MAD_CLUSTER_SHARED/spur-steps.sh"
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit sbatch --nodes=4 -o 'steps-%j.out' -e 'steps-%j.err' spur-steps.sh
		run "${spur[@]}" mad-wait --interval 1 --grace 2 --timeout 240 "$jobid"
		echo "$output"
		cat "steps-$jobid.out" "steps-$jobid.err"
		# the whole-job step: four ranks, one world, rank 0 on the job's first node
		[[ $(grep -c 'sum=4$' "steps-$jobid.out") -eq 4 ]]
		grep -q '^allreduce rank=0 world=4 .* host=n1 ' "steps-$jobid.out"
		if [[ $gen == 0.8 ]]; then
			assert_success
			assert_output --partial "rank 0 exited 0; ranks 1-3 never ran the job script"
			grep -q '^subset n1 rank=0 node=0 nnodes=4 ' "steps-$jobid.out"
			grep -q '^subset n2 rank=1 node=1 nnodes=4 ' "steps-$jobid.out"
		else
			assert_failure 1
			assert_output --partial "rank 0 failed with exit status 1"
			grep -q "task 0 runs on n3, node 2 of the job, not on its first node n1 that MASTER_ADDR names: spur gives a step on some of the job's nodes (srun -w or -N, spur #868)" "steps-$jobid.err"
			# the other task cannot tell: the job's ids, rank 0's address on n1
			grep -q '^subset n4 rank=1 node=3 nnodes=4 ' "steps-$jobid.out"
		fi
		wait_gone "$jobid" # a failure is decided while the job may still be listed
	done
}

@test "spur GPU job (0.12, -N2 --gres=gpu:4): srun -n4 gives each task its slice of SPUR_JOB_GPUS; each task's mad-env: 4 GPUs a node, 2 tasks, device 0; the script is an agent of 4" {
	use_gen 0.12
	cat >"$MAD_CLUSTER_SHARED/spur-gpus.sh" <<-'JOB'
		#!/bin/bash
		eval "$(mad-env)" || exit 1
		echo "script gpus=${MAD_GPUS_PER_NODE-unset} nproc=$MAD_NPROC_PER_NODE device=${MAD_LOCAL_DEVICE-unset}"
		srun -n 4 bash -c 'eval "$(mad-env)" && echo "task $RANK $(hostname) local=$LOCAL_RANK/$LOCAL_WORLD_SIZE rocr=$ROCR_VISIBLE_DEVICES cuda=$CUDA_VISIBLE_DEVICES gpus=${MAD_GPUS_PER_NODE-unset} nproc=$MAD_NPROC_PER_NODE device=${MAD_LOCAL_DEVICE-unset}"'
		st=$?
		mad-mark $st
		exit $st
	JOB
	chmod 0755 "$MAD_CLUSTER_SHARED/spur-gpus.sh"
	spur_submit sbatch --nodes=2 --gres=gpu:4 -o 'gpus-%j.out' -e 'gpus-%j.err' spur-gpus.sh
	run "${spur[@]}" mad-wait --interval 1 --grace 2 --timeout 120 "$jobid"
	echo "$output"
	cat "gpus-$jobid.out" "gpus-$jobid.err"
	assert_success
	run cat "gpus-$jobid.out"
	assert_line 'script gpus=4 nproc=4 device=unset'
	local t
	for t in 0 1 2 3; do
		slice=0,1
		((t % 2 == 0)) || slice=2,3
		assert_line "task $t n$((t / 2 + 1)) local=$((t % 2))/2 rocr=$slice cuda=$slice gpus=4 nproc=2 device=0"
	done
	wait_gone "$jobid"
}

@test "jobs of root: refused by 0.12's spurd (allow_root_jobs = false), run on 0.8" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		root=("${spur_env[@]}" SPUR_EMU_VERSION="$gen" SPUR_EMU_STATE="$MAD_CLUSTER_SHARED/.spur-emu-root")
		run "${root[@]}" sbatch --parsable -o 'root-%j.out' --wrap 'echo "ran as $(id -u)"'
		assert_success
		j=$output
		for _ in $(seq 60); do
			[[ -z $("${root[@]}" squeue -h -j "$j,$j") ]] && break
			sleep 0.5
		done
		if [[ $gen == 0.8 ]]; then
			wait_lines "root-$j.out" 1
			grep -qx 'ran as 0' "root-$j.out"
		else
			sleep 1
			[[ ! -e root-$j.out ]]
			grep -q 'refusing to execute as uid 0' "$MAD_CLUSTER_SHARED"/.spur-emu-root/real-*.out
		fi
	done
}

@test "spur's squeue: literal delimiters kept, -S sorts, -j J_k lists every job, array tasks by id, unknown flags rejected" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit sbatch --hold --job-name='a b' --wrap true
		one=$jobid
		spur_submit sbatch --hold --array=0-1 --wrap true
		arr=$jobid
		run "${spur[@]}" squeue -h -j "$one" -o '%i|%T|%j'
		assert_success
		assert_output "$one|PENDING|a b"
		run "${spur[@]}" squeue -j "$one" -o '%i;%t'
		assert_line --index 0 'JOBID;ST'
		assert_line --index 1 "$one;PD"
		# -j J_k: the id is dropped, the filter is empty: everything is listed
		run "${spur[@]}" squeue -h -j "${arr}_1" -o '%i' -S i
		assert_output "$(printf '%s\n' "$one" "$((arr + 1))" "$((arr + 2))")"
		run "${spur[@]}" squeue -h -o '%i' -S -i
		assert_output "$(printf '%s\n' "$((arr + 2))" "$((arr + 1))" "$one")"
		# the parent J: one row made of its tasks
		run "${spur[@]}" squeue -h -j "$arr" -o '%i %T'
		assert_output "$arr PENDING"
		run "${spur[@]}" squeue -S x
		assert_failure 1
		assert_output --partial 'Invalid sort specification: x'
		run "${spur[@]}" squeue -t BOGUS
		assert_failure 1
		run "${spur[@]}" squeue --bogus
		assert_failure 2
		run "${spur[@]}" squeue -h -w n1 -o %i
		if [[ $gen == 0.8 ]]; then assert_failure 2; else assert_success; fi
		# 0.12 lists only the caller's jobs; 0.8 everyone's
		run "${spur_env[@]}" SPUR_EMU_VERSION="$gen" SPUR_EMU_STATE="$MAD_CLUSTER_SHARED/.spur-emu-$(id -u "$MAD_CLUSTER_USER")" \
			squeue -h -j "$one" -o '%i'
		if [[ $gen == 0.8 ]]; then assert_output "$one"; else assert_output ''; fi
		"${spur[@]}" scancel "$one" "$arr"
	done
}

@test "spur's squeue: a new job hidden for the startup window (SPUR_EMU_SQUEUE_HIDE)" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit sbatch --hold --wrap true
		run "${spur[@]}" SPUR_EMU_SQUEUE_HIDE=30 squeue -h -j "$jobid" -o '%i'
		assert_output ''
		run "${spur[@]}" squeue -h -j "$jobid" -o '%i'
		assert_output "$jobid"
		"${spur[@]}" scancel "$jobid"
	done
}

@test "mad-wait over spur's squeue decides correctly for a native and an array job" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		printf '#!/bin/bash\ntrap '\''mad-mark $?'\'' EXIT\neval "$(mad-env)"\nsleep 2\n' >wait-ok.sh
		printf '#!/bin/bash\ntrap '\''mad-mark $?'\'' EXIT\neval "$(mad-env)"\n[[ $NODE_RANK != 1 ]]\n' >wait-fail.sh
		chmod 0755 wait-ok.sh wait-fail.sh
		spur_submit sbatch --nodes=2 -o /dev/null wait-ok.sh
		run "${spur[@]}" mad-wait --interval 1 --grace 2 "$jobid"
		echo "$output"
		assert_success
		spur_submit env MAD_FANOUT=array MAD_NNODES=2 sbatch --array=0-1 -o /dev/null wait-ok.sh
		run "${spur[@]}" mad-wait --json --interval 1 --grace 2 "$jobid"
		echo "$output"
		assert_success
		assert_output --partial '"expected":	2'
		spur_submit env MAD_FANOUT=array MAD_NNODES=2 sbatch --array=0-1 -o /dev/null wait-fail.sh
		run "${spur[@]}" mad-wait --interval 1 --grace 2 "$jobid"
		echo "$output"
		assert_failure
	done
}

# spur #629 (0.11+; lib.sh fact requeue): scontrol requeue puts the job back to PENDING with the
# same id, the same submit time and no restart count, so the second attempt writes into the first
# attempt's folder.  Only the second attempt may decide; 0.8's requeue only cancels.
@test "spur requeue (#629): the same id, no restart count; mad-wait gives the second attempt's verdict, never the first's; 0.8's requeue cancels" {
	use_gen 0.12
	local first second want
	for first in 1 0; do
		second=$((1 - first)) want=$((1 - first))
		rm -f "$MAD_CLUSTER_SHARED/rq-flag" "$MAD_CLUSTER_SHARED/rq-env".*
		shared_q=$(printf %q "$MAD_CLUSTER_SHARED") # the job script's word for the folder
		cat >rq.sh <<-JOB
			#!/bin/bash
			eval "\$(mad-env)"
			: <$shared_q # on NFS, the flag as it is now (look_anew in t/lib.sh says why)
			n=1; [[ -e $shared_q/rq-flag ]] && n=2
			touch $shared_q/rq-flag
			env | grep -c RESTART_COUNT >$shared_q/rq-env.\$n
			st=$first; ((n == 1)) || { st=$second; sleep 6; } # mad-wait starts before it ends
			mad-mark \$st
			# past mad-wait's clock slack: the first attempt's marker is
			# older than the requeue, which comes right after this end:
			# the cluster forgets an ended job after MinJobAge (4 s)
			((n == 2)) || sleep 3
			exit \$st
		JOB
		chmod 0755 rq.sh
		spur_submit sbatch -o /dev/null rq.sh
		wait_gone "$jobid"
		wait_lines "$MAD_CLUSTER_SHARED/rq-env.1" 1
		run "${spur[@]}" scontrol requeue "$jobid"
		assert_success
		run "${spur[@]}" squeue -h -t all -j "$jobid" -o '%i %T'
		echo "$output"
		assert_output --regexp "^$jobid (PENDING|RUNNING|COMPLETING|COMPLETED|FAILED)$"
		run "${spur[@]}" mad-wait --timeout 90 --interval 1 --grace 2 "$jobid"
		echo "first attempt $first, second $second: $output"
		[[ $status == "$want" ]]
		look_anew "$MAD_CLUSTER_SHARED/rq-env.2"
		run cat "$MAD_CLUSTER_SHARED/rq-env.1" "$MAD_CLUSTER_SHARED/rq-env.2"
		assert_output $'0\n0'
		run head -1 "$run_dir/$jobid/done_rank0"
		assert_output "$second"
	done
	# 0.8's requeue only cancels (spur #629): the job is gone, its marker missing.
	# proctrack/linuxproc signals a step's deepest process first (SLURM's
	# src/plugins/proctrack/linuxproc/kill_tree.c _get_list): the script may reap
	# its killed sleep and start its next line before its own SIGTERM comes, so
	# that line runs only if the sleep ended of itself.
	use_gen 0.8
	printf '#!/bin/bash\neval "$(mad-env)"\nsleep 60 && mad-mark 0\n' >rq8.sh
	chmod 0755 rq8.sh
	spur_submit sbatch -o /dev/null rq8.sh
	wait_lines "$run_dir/$jobid/expected" 1 # its mad-env ran: the job is under way
	run "${spur[@]}" scontrol requeue "$jobid"
	assert_success
	assert_output "Job $jobid requeued"
	run "${spur[@]}" mad-wait --timeout 60 --interval 1 --grace 2 "$jobid"
	echo "$output"
	assert_failure 2
	assert_output --partial "the job left the queue (last state CANCELLED) and ranks 0 wrote no marker"
}

# spur #629 re-runs a requeued job in its earlier run's folder with the same identity: the
# earlier run's rendezvous record and started files are there when the next run starts
# (lib/run.h).  Rank 0 of the second run starts 2 s late: its peer must wait for it in the
# rendezvous (--mad-iface, nodes fan-out) and in the barrier, not pass on the first run's files.
@test "spur requeue (#629), 2 nodes: the re-run's peer waits for this run's rank 0 in the rendezvous and the barrier" {
	use_gen 0.12
	local t n
	rm -f "$MAD_CLUSTER_SHARED"/rr-*
	shared_q=$(printf %q "$MAD_CLUSTER_SHARED")
	cat >rr.sh <<-JOB
		#!/bin/bash
		id=\$SPUR_NODEID n=1
		[[ -e $shared_q/rr-ran.\$id ]] && n=2
		touch $shared_q/rr-ran.\$id
		((n == 2 && id == 0)) && sleep 2
		date +%s.%N >$shared_q/rr-start.\$n.\$id
		eval "\$(mad-env)" || exit 1
		date +%s.%N >$shared_q/rr-env.\$n.\$id
		mad-env --barrier || exit 1
		date +%s.%N >$shared_q/rr-barrier.\$n.\$id
		# the first run is requeued while it runs (then only its sleep's end
		# may lead on: see the 0.8 requeue test above)
		((n == 2)) || sleep 60 || exit
		mad-mark 0
	JOB
	chmod 0755 rr.sh
	spur_submit env MAD_IFACE=eth0 sbatch --nodes=2 -o /dev/null rr.sh
	wait_lines "$MAD_CLUSTER_SHARED/rr-barrier.1.0" 1
	wait_lines "$MAD_CLUSTER_SHARED/rr-barrier.1.1" 1
	# a live job runs again after a hold of at least 5 s (t/spur/bin/scontrol): the runs
	# start further apart than the nodes of one run (lib/run.h)
	run "${spur[@]}" scontrol requeue "$jobid"
	assert_success
	run "${spur[@]}" mad-wait --timeout 90 --interval 1 --grace 2 "$jobid"
	echo "$output"
	assert_success
	for t in start env barrier; do
		for n in 1 2; do echo "run $n $t: $(cat "$MAD_CLUSTER_SHARED/rr-$t.$n.0") $(cat "$MAD_CLUSTER_SHARED/rr-$t.$n.1")"; done
	done
	# the peer's contract and barrier came after this run's rank 0 started
	awk -v s="$(cat "$MAD_CLUSTER_SHARED/rr-start.2.0")" -v e="$(cat "$MAD_CLUSTER_SHARED/rr-env.2.1")" \
		-v b="$(cat "$MAD_CLUSTER_SHARED/rr-barrier.2.1")" 'BEGIN { exit !(e >= s && b >= s) }'
	# and it started before rank 0 did, with the first run's files all there
	awk -v s="$(cat "$MAD_CLUSTER_SHARED/rr-start.2.0")" -v p="$(cat "$MAD_CLUSTER_SHARED/rr-start.2.1")" \
		'BEGIN { exit !(p < s) }'
}

# spur #803 (lib.sh spur_spurd_restart): after a restart of spurd the controller lists the job
# RUNNING after it ended.  The markers are the job's own: written, they decide at once; missing,
# the job is lost once it is listed running --overtime past its time limit.
@test "spurd restarted mid-job (#803): listed RUNNING after it ended; its markers decide at once, without them it is lost" {
	use_gen 0.12
	# each runs 12 s: both are still running when their spurd "restarts", even where the
	# loaded machine's squeue takes seconds to say RUNNING (5 s was a race there)
	printf '#!/bin/bash\neval "$(mad-env)"\nsleep 12\nmad-mark 0\n' >orphan-ok.sh
	printf '#!/bin/bash\neval "$(mad-env)"\nsleep 12\n[[ $NODE_RANK == 1 ]] && kill -9 $$\nmad-mark 0\n' >orphan-lost.sh
	chmod 0755 orphan-ok.sh orphan-lost.sh
	spur_submit sbatch --nodes=2 -o /dev/null orphan-ok.sh
	ok=$jobid
	spur_submit sbatch --nodes=2 -t 0:00:20 -o /dev/null orphan-lost.sh
	lost=$jobid
	# spur keeps the limit to the second (the real cluster beneath rounds it to 1:00)
	run "${spur[@]}" squeue -h -j "$lost" -o %l
	assert_output 0:20
	for id in "$ok" "$lost"; do
		for _ in $(seq 60); do
			[[ $("${spur[@]}" squeue -h -j "$id" -o %T) == RUNNING ]] && break
			sleep 0.5
		done
		run spur_lib spur_spurd_restart "$id"
		assert_success
	done
	# the lost job's wait starts now: its clock, from its first answer, runs out at
	# the limit (20 s, --overtime 0; spur keeps limits to the second, lib.sh
	# spur_time_limit), before spur's watchdog ends it (limit + 30 s)
	"${spur[@]}" mad-wait --interval 1 --grace 2 --overtime 0 "$lost" >"$BATS_TEST_TMPDIR/lost" 2>&1 &
	waiter=$!
	wait_lines "$run_dir/$ok/done_rank1" 1
	sleep 6 # the real cluster forgets the ended job (MinJobAge); spur's controller does not
	run "${spur[@]}" squeue -h -t all -j "$ok,$lost" -o '%i %T'
	echo "$output"
	assert_output --partial "$ok RUNNING"
	assert_output --partial "$lost RUNNING"
	SECONDS=0
	run "${spur[@]}" mad-wait --interval 1 --grace 2 "$ok"
	echo "$output"
	assert_success
	((SECONDS < 10))
	local rc=0
	wait "$waiter" || rc=$?
	cat "$BATS_TEST_TMPDIR/lost"
	((rc == 2))
	grep -q "squeue still lists the job RUNNING" "$BATS_TEST_TMPDIR/lost"
	grep -q "ranks missing: 1: the scheduler has lost it" "$BATS_TEST_TMPDIR/lost"
	# spur's watchdog ends it TIMEOUT at its limit plus 30 s
	for _ in $(seq 60); do
		[[ $("${spur[@]}" squeue -h -t all -j "$lost" -o %T) == TIMEOUT ]] && break
		sleep 1
	done
	run "${spur[@]}" squeue -h -t all -j "$lost" -o '%T'
	assert_output TIMEOUT
	spur_lib spur_orphan_end
}

@test "(c) spur, rank 0 late past the timeout: peers fail clearly, markers say so, no empty MASTER_ADDR" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit env MAD_FANOUT=array MAD_NNODES=4 MAD_TIMEOUT=8 sbatch --hold --array=0-3 \
			--exclusive --nodes=1 --output='spur-late-%A_%a.out' spur-job.sh
		# tasks 1..3 are jobs J+2..J+4
		"${spur[@]}" scontrol release "$((jobid + 2)),$((jobid + 3)),$((jobid + 4))"
		for _ in $(seq 80); do
			look_anew "$run_dir/$jobid"
			[[ $(find "$run_dir/$jobid" -maxdepth 1 -name 'done_rank*' 2>/dev/null | wc -l) -eq 3 ]] && break
			sleep 0.5
		done
		"${spur[@]}" scancel "$jobid"
		for r in 1 2 3; do
			# without -e, task r's stderr is spur-<its job id>.out (crates/spur-core/src/job.rs)
			f=$MAD_CLUSTER_SHARED/spur-$((jobid + 1 + r)).out
			cat "$f"
			grep -q "mad-env: rank $r waited [0-9]* s (--mad-timeout=8) for rank 0 to publish its address" "$f"
			run ! grep -q '^contract' "$MAD_CLUSTER_SHARED/spur-late-${jobid}_$r.out" # the program never ran
			[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 1 ]]
		done
	done
}

@test "(d) MAD_SCHEDULER=slurm given on a spur-looking job wins over detection" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit env MAD_SCHEDULER=slurm sbatch --nodes=2 spur-job.sh
		wait_gone "$jobid"
		out=$MAD_CLUSTER_SHARED/spur-$jobid.out
		cat "$out"
		[[ $(grep -c '^contract .* scheduler=slurm from=mad-env$' "$out") -eq 2 ]]
		grep -qx 'exchange ok: ranks 1..1' "$out"
	done
}

@test "a plugstack line with two blanks before the path: mad.so never ran, and mad-env --explain says why" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit env SPUR_PLUGSTACK="$MAD_CLUSTER_SHARED/spur-plugstack-blank.conf" sbatch --nodes=2 \
			-o 'blank-%j.out' --wrap 'echo "from=${MAD_ENV_FROM:-none} sched=${MAD_SCHEDULER:-none}"
				mad-env --explain | grep "^# mad.so did not run" | tr -d "\n"; echo'
		wait_lines "blank-$jobid.out" 4
		cat "blank-$jobid.out"
		[[ $(grep -cx 'from=none sched=none' "blank-$jobid.out") -eq 2 ]]
		[[ $(grep -c '^# mad.so did not run in this job .*two blanks before the path' "blank-$jobid.out") -eq 2 ]]
		run ! grep -qi 'warn\|fail' "blank-$jobid.out"
	done
}

@test "spur's sacct: records only from RUNNING, -j filters only on 0.12, no -P or -X" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_submit sbatch --wrap 'sleep 30'
		first=$jobid
		spur_submit sbatch --wrap 'sleep 30'
		second=$jobid
		spur_submit sbatch --hold --wrap true
		held=$jobid
		for _ in $(seq 40); do
			[[ $("${spur[@]}" squeue -h -t R -o %i | wc -l) -ge 2 ]] && break
			sleep 0.5
		done
		run "${spur[@]}" sacct -n -j "$first" -o jobid,state
		assert_success
		assert_line --regexp "^ *$first +RUNNING\$"
		if [[ $gen == 0.8 ]]; then
			assert_line --regexp "^ *$second "
		else
			refute_line --regexp "^ *$second "
		fi
		run "${spur[@]}" sacct -n -o jobid
		refute_line --regexp "^ *$held\$" # never ran: no record
		run "${spur[@]}" sacct -P -j "$first"
		assert_failure 2
		run "${spur[@]}" sacct -X -j "$first"
		assert_failure 2
		"${spur[@]}" scancel "$first" "$second" "$held"
	done
}

@test "spur's scontrol has no 'show hostnames'; other show commands pass" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		run "${spur[@]}" scontrol show hostnames 'n[1-2]'
		assert_failure 1
		assert_output --partial "unknown entity type 'hostnames'"
		run "${spur[@]}" scontrol show partition
		assert_success
		assert_output --partial PartitionName=
	done
}

# templates/launchers rendered for spur, with the launcher stand-ins (t/helpers/standin)
spur_launcher() { # name fanout nnodes command-word
	local job=spur-launch-$BATS_TEST_NUMBER-$1-$2
	printf '{"command": ["%s"]}\n' "$4" >"$MAD_CLUSTER_SHARED/$job.json"
	copy_standins
	mad-render -c "$BATS_TEST_DIRNAME/../../templates/launchers/example.yaml" -D scheduler=spur \
		-D "fanout=$2" -D "nnodes=$3" -D nproc_per_node=2 -D model=m -D "job_name=$job" \
		-D "log_dir=$MAD_CLUSTER_SHARED" -D "run_dir=$run_dir" -D time=00:02:00 \
		-D ray=./standin/ray -D vllm=./standin/vllm -D accelerate=./standin/accelerate \
		-c "$MAD_CLUSTER_SHARED/$job.json" -o "$MAD_CLUSTER_SHARED/$job.sh" "$BATS_TEST_DIRNAME/../../templates/launchers/$1.sh.j2"
	chmod 0644 "$MAD_CLUSTER_SHARED/$job.sh"
	rm -f "$MAD_CLUSTER_SHARED/$job"-*.out
	# spur's SPANK host runs mad.so before the script: its options come with the spur_submit env
	spur_submit env MAD_FANOUT="$2" MAD_NNODES="$3" MAD_NPROC_PER_NODE=2 sbatch "$job.sh"
	wait_gone "$jobid"
	outs=("$MAD_CLUSTER_SHARED/$job"-*.out)
	cat "${outs[@]}"
}

@test "spur: launcher templates end to end: vLLM on Ray (nodes fan-out, the start barrier) and accelerate (array fan-out)" {
	for gen in "${gens[@]}"; do
		use_gen "$gen"
		spur_launcher vllm-ray nodes 2 /models/m
		grep -q '^standin launcher=ray-head node_rank=0 nnodes=2 ' "${outs[@]}"
		grep -q '^standin launcher=ray-worker node_rank=1 nnodes=2 ' "${outs[@]}"
		grep -q '^standin launcher=vllm node_rank=0 nnodes=2 tp=2 pp=2 workers=1 model=/models/m ' "${outs[@]}"
		[[ -e $run_dir/$jobid/started_rank0 && -e $run_dir/$jobid/started_rank1 ]]
		spur_launcher accelerate array 2 train.py
		[[ $(cat "${outs[@]}" | grep -c '^standin launcher=accelerate node_rank=[01] nnodes=2 nproc=2 total=4 ') == 2 ]]
	done
}
