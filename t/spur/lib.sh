# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# t/spur/lib.sh: shared by the spur emulation's commands in t/spur/bin (and by the tests).
#
# SPUR_EMU_VERSION picks the spur generation the emulation behaves as: 0.8 (the source at tag
# v0.8.0, 2026-08-11) or 0.12 (the default: production spur 0.12.0, 2026-09, spur #882; its
# facts come from main 4cc3da8 of 2026-08-22, from later commits where named (e.g. fba350d, the
# merge of #793, released in 0.11.0 of 2026-09-08 per spur's CHANGELOG.md) and from the issue
# threads named in the table).  Paths are ROCm/spur's.  Its SPANK host is spur's own code,
# built from source (t/spur/host/build); the rest of spur cannot be built here (its 439
# crates: Cargo.lock at 4cc3da8, many absent from Debian 12), so every behaviour below is
# written from its source, never copied from it.

# The generation table: one row per behaviour, its value in each generation, and the source.
# Rows whose values are equal are kept too, so the table is the whole list of CLI and launch
# facts the emulation relies on.  Values are single words; spur_fact reads them.
spur_fact_table() {
	cat <<'TABLE'
# fact                  0.8        0.12       source
rank_world_size         multinode  never      0.8: crates/spurd/src/agent_server.rs@v0.8.0 launch_job sets RANK=node rank, WORLD_SIZE=peer count when >1 peer; 0.12: spur #783, fixed by #793 (merged 2026-09-02, in 0.11.0): RANK/WORLD_SIZE are no longer injected
torch_env               injected   none       0.8: crates/spurd/src/agent_server.rs@v0.8.0 and @4cc3da8 launch_job sets NODE_RANK always, LOCAL_RANK/LOCAL_WORLD_SIZE/NPROC_PER_NODE (spur_env.rs apply_task_rank), MASTER_ADDR and MASTER_PORT=29500 when >1 peer, over the user's (#783); 0.12: #793 (fba350d, CHANGELOG 0.11.0 "stop injecting torch rendezvous env vars"): crates/spur-core/src/spur_env.rs@fba350d apply_task_rank sets only SPUR_TASK_OFFSET and the LOCALID/PROCID twins (its test apply_task_rank_omits_torchrun_names), so none of the eight is set and the user's survive
spank_process           spurd      spurstepd  0.8: crates/spurd/src/agent_server.rs@v0.8.0 loads the plugstack once into the long-lived spurd (t/spur/spurd-spank --jobs runs many jobs through one load); 0.12: #754 (merged 2026-09, after 0.11.0, whose CHANGELOG lacks it) crates/spurd/src/stepd.rs load_runtime_spank: each job's and numbered step's root supervisor, keyed (job, run attempt, step), loads the plugstack again and runs Init/TaskInit (executor::launch_job) and, after the exit, TaskExit/JobEpilog on a fresh handle with an empty env, in that process; the plugin writes nothing at task exit either way (the job's mad-mark does): t/spur/launch.sh runs one host per launch, as spurstepd
gpu_job_env             no         yes        0.12: crates/spur-devices/src/inject.rs@4cc3da8 apply_spur_job_device_env sets SPUR_JOB_GPUS to the node's allocated ids ("0,1"), and the AMD registry's visibility variable, ROCR_VISIBLE_DEVICES only (gpu_visibility_for_vendor; spurd agent_server.rs test run_command_injects_gpu_env_from_tracked_job: ROCR=0,1, no CUDA=); a step of several tasks a node then gives each task its slice in ROCR_, CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL, keeping SPUR_JOB_GPUS whole (crates/spur-core/src/task_launch.rs build_multi_task_wrapper: _GPUS_PER_TASK = entries / tasks on the node, task L from L x that); 0.8: v0.8.0's device code is not stored here, so the emulation gives 0.8 jobs no GPUs (the GPU tests run on 0.12)
gpu_deny_zero_gpu       no         yes        0.12: crates/spurd/src/agent_server.rs@4cc3da8 maybe_deny_gpu_env + crates/spur-core/src/task_launch.rs gpu_deny_visibility (#648): a job without GPUs gets ROCR/HIP/CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK = -1, NVIDIA_VISIBLE_DEVICES=void, SPUR_JOB_GPUS empty; absent at v0.8.0
root_jobs               allowed    refused    0.12: crates/spurd/src/privdrop.rs@4cc3da8 check_root_execution_allowed with [auth] allow_root_jobs = false (crates/spur-core/src/config.rs, #637); v0.8.0 has no such check
squeue_own_jobs_only    no         yes        0.12: crates/spurctld/src/server.rs@4cc3da8 get_jobs calls authoritative_user (an identified caller sees only its own jobs), crates/spur-cli/src/authclient.rs; v0.8.0 has no auth on get_jobs
squeue_nodelist_flag    no         yes        0.12: crates/spur-cli/src/squeue.rs@4cc3da8 -w/--nodelist (#628); absent at v0.8.0
sacct_job_filter        ignored    applied    0.8: crates/spur-cli/src/sacct.rs@v0.8.0 (GetJobHistoryRequest carries no job ids; docs/migration-from-slurm.rst); 0.12: fixed by #703 (after 4cc3da8, which still drops -j; its source is not stored, we followed the issue thread)
squeue_literals         kept       kept       crates/spur-cli/src/format_engine.rs@v0.8.0 and @4cc3da8 parse_format keeps literal text (#443, since v0.5.0)
squeue_sort             yes        yes        crates/spur-cli/src/squeue.rs@v0.8.0 and @4cc3da8 parse_sort_arg, sort_jobs (#524, since v0.7.0); a bad spec is an error
squeue_array_task_ids   numeric    numeric    crates/spur-cli/src/squeue.rs resolve_job_field: %i and %A are job_id; crates/spurctld/src/cluster.rs get_jobs synthesizes the parent row for -j J (aggregate state: PENDING until every task ended, crates/spur-core/src/array.rs)
squeue_bad_jobid        dropped    dropped    crates/spur-cli/src/squeue.rs: -j ids that are not u32 (J_k) are filtered out, so an empty filter lists every job
sbatch_parsable         bare       bare       crates/spur-cli/src/sbatch.rs@v0.8.0 and @4cc3da8: --parsable prints the job id alone (#443, since v0.5.0)
sbatch_export           exact      slurm      0.8: crates/spur-cli/src/sbatch.rs@v0.8.0: ALL = the whole submit env, NONE = empty, else only variables named exactly (ALL,VAR=v exports nothing); 0.12: spur #795 (fixes #794, merged 2026-09-02, CHANGELOG 0.11.0) resolve_export_env: a leading ALL seeds the submit env, NONE or any other token an empty one, then each token VAR copies the submit value, VAR=value sets it (the value may hold '=')
sacct_from_running      yes        yes        crates/spurctld/src/accounting/db.rs record_job_start: a job's record is written when it starts; no -P, no -X (crates/spur-cli/src/sacct.rs; -X still fails on 0.12.0, #886)
step_launch_detect      plain      quotes-comments  0.8: crates/spur-core/src/task_launch.rs@v0.8.0 batch_script_uses_step_launch matches the trimmed line as it is; 0.12: @4cc3da8 sanitize_shell_line_for_step_launch first drops quoted spans and trailing comments (#627)
batch_hold_companions   yes        yes        crates/spur-core/src/task_launch.rs batch_script_uses_step_launch (#627 at 4cc3da8: quotes and comments ignored) + batch_companion_hold_script, crates/spurd/src/agent_server.rs launch_job
requeue                 cancel     repend     0.8: crates/spur-cli/src/scontrol.rs@v0.8.0 requeue was a cancel-only stub (kills the job, leaves it gone, prints "requeued"; spur #629); 0.12: #629 (merged 2026-08-13) crates/spurctld/src/cluster.rs@4cc3da8 JobUserRequeue: a live or ended job goes back to PENDING with the same id and spec (job.rs requeue_to_pending; REQUEUED/RQ is the finalized run's accounting state), clear_run_state_for_requeue clears start_time but keeps submit_time; run_attempt stays in the controller and agent (agent_server.rs), no variable of the job env carries it (spur_env.rs: no SLURM_RESTART_COUNT)
spurd_restart           orphans    orphans    spur #803 (open, reported on 0.11/0.12; 4cc3da8 and v0.8.0 have no re-adoption: agent_server.rs keeps running jobs in memory only): a job whose node's spurd restarted stays RUNNING in the controller after it ends, until the node fails or its time limit plus 30 s (TIMEOUT, scheduler_loop.rs enforce_time_limits); spur_spurd_restart below
step_nodes              all        subset     0.8: crates/spur-cli/src/srun.rs@v0.8.0 and @4cc3da8 dispatch_step sends an empty node and crates/spurctld/src/server.rs create_job_step copies job.allocated_nodes, so -w and -N are not applied to steps (#597, #875 on 0.11.0); 0.12: #868 (merged 2026-09-11, fixes #597 and #875) -w picks an exact allocated subset and -N the first N, the controller plans the tasks over them (step.nodes), an oversize -N or a node not allocated is an error; bin/srun and spur_step_node
array_task_ids          parent+1   parent+1   crates/spurctld/src/cluster.rs: the parent id J is reserved, tasks are jobs J+1..J+n with only SLURM_ARRAY_JOB_ID/TASK_ID
TABLE
}

# The value of fact NAME for $SPUR_EMU_VERSION; an unknown version or fact is an error.
spur_fact() {
	local name=$1 col
	case ${SPUR_EMU_VERSION:-0.12} in
	0.8) col=2 ;;
	0.12) col=3 ;;
	*) echo "spur emulation: SPUR_EMU_VERSION='$SPUR_EMU_VERSION' is not 0.8 or 0.12" >&2; return 2 ;;
	esac
	spur_fact_table | awk -v n="$name" -v c="$col" '$1 == n { print $c; found = 1 } END { exit !found }' ||
		{ echo "spur emulation: no fact '$name'" >&2; return 2; }
}

# The real SLURM client NAME: the first on PATH that is not this emulation, so the shims
# work over whichever SLURM release the test cluster runs (its clients must match its
# controller). Prints the path, or fails with a message.
spur_real() {
	local name=$1 dir here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/bin" && pwd -P)
	local IFS=:
	for dir in $PATH; do
		[[ -n $dir && -x $dir/$name && ! $dir -ef $here ]] || continue
		printf '%s\n' "$dir/$name"
		return 0
	done
	echo "spur emulation: no real $name on PATH (besides $here)" >&2
	return 1
}

# ---------------------------------------------------------------- job ids
# spur numbers jobs itself: an array job J reserves J and its tasks are jobs J+1..J+n, so
# the next job is J+n+1.  The emulation runs over real SLURM, whose ids differ, so it keeps
# its own ids and a map, one line per spur job:  SPURID REALID TASKS SUBMITTED
# (TASKS: "-" for a plain job, else the array's task ids in order, comma-separated;
# SUBMITTED: seconds since the epoch).  The
# map lives with the submitting user (SPUR_EMU_STATE, default: a folder in the cluster's
# shared folder); the job itself never reads it (its launcher carries its ids).
spur_state_dir() {
	local d=${SPUR_EMU_STATE:-${MAD_CLUSTER_SHARED:-${TMPDIR:-/tmp}}/.spur-emu-$(id -u)}
	mkdir -p "$d" && printf '%s\n' "$d"
}

# First spur id: far from the test cluster's own ids, so a real id used as a spur id (or
# the reverse) finds nothing instead of another job.
SPUR_FIRST_ID=500000

# Reserves ids for a job of NTASKS array tasks (0: not an array); prints the first (J).
spur_alloc_ids() {
	local n=$1 dir next
	dir=$(spur_state_dir) || return 1
	(
		flock 9
		next=$(cat "$dir/next" 2>/dev/null || echo "$SPUR_FIRST_ID")
		echo $((next + n + 1)) >"$dir/next"
		echo "$next"
	) 9>>"$dir/lock"
}

# Records spur job SPURID as real job REALID with TASKS (see above).
spur_map_add() {
	local dir
	dir=$(spur_state_dir) || return 1
	(
		flock 9
		# a restarted cluster numbers again from 1: the newest line for a real id wins
		{ if [[ -e $dir/jobs ]]; then awk -v r="$2" '$2 != r' "$dir/jobs"; fi; echo "$1 $2 $3 $(date +%s)"; } >"$dir/jobs.new"
		mv "$dir/jobs.new" "$dir/jobs"
	) 9>>"$dir/lock"
}

# The map as awk reads it (empty when nothing was submitted).
spur_map() {
	local dir
	dir=$(spur_state_dir) || return 1
	cat "$dir/jobs" 2>/dev/null || true
}

# The real id(s) for spur id ID: "R" (plain job), "A_t" (array task), "A" (array parent).
# Prints nothing for an id the emulation never gave out.
spur_to_real() {
	spur_map | awk -v id="$1" '
	$3 == "-" && $1 == id { print $2; exit }
	$3 != "-" {
		if ($1 == id) { print $2; exit }
		n = split($3, t, ",")
		if (id > $1 && id <= $1 + n) { print $2 "_" t[id - $1]; exit }
	}'
}

# Reads rows whose first word is a real SLURM id ("R" or "A_t") and prints them with spur's
# id instead; rows of jobs spur never submitted are dropped (spur does not know them).
spur_rows_to_spur() {
	awk 'NR == FNR {
		if ($3 == "-") plain[$2] = $1
		else { n = split($3, t, ","); for (i = 1; i <= n; i++) task[$2 "_" t[i]] = $1 + i }
		next
	}
	{
		id = $1
		if (id in plain) s = plain[id]; else if (id in task) s = task[id]; else next
		sub(/^[^ ]+/, s); print
	}' <(spur_map) -
}

# ---------------------------------------------------------------- spurd restarted (#803)
# spur #803 (open, 2026-09): a restart of spurd while a job runs leaves the job's processes
# running in their own cgroup, untracked: the new spurd starts with no job (agent_server.rs
# @4cc3da8 run_command: "a spurd restart mid-job, which starts `running` empty"), so nothing
# reports the job's end, and the controller lists it RUNNING (six and a half hours in the
# report) until its node fails, or, with a time limit, until its watchdog signals it at the
# limit and ends it TIMEOUT GRACE_PERIOD_SECS (30 s) later (crates/spurctld/src/
# scheduler_loop.rs@4cc3da8 enforce_time_limits, cluster.rs complete_job).  spur's default
# is no limit (crates/spur-core/src/config.rs default_time_limit_minutes = 0).
# The fields bin/squeue asks the real cluster for, one row a job (squeue.awk reads them).
SPUR_SQUEUE_FIELDS='%i|%T|%u|%P|%j|%a|%q|%D|%N|%M|%l|%V|%S|%e|%r|%C|%Q|%Z|%k'

# Restarts spurd on the nodes of running spur job SPURID: from now on the controller lists it
# as it was then, whatever the job does (the emulation keeps the row it had, under the spur id:
# a restarted test cluster numbers its jobs from 1 again, spur never).
spur_spurd_restart() {
	local rid dir row
	rid=$(spur_to_real "$1") || return 1
	[[ -n $rid && $rid != *_* ]] || { echo "spur emulation: $1 is not a plain spur job" >&2; return 1; }
	dir=$(spur_state_dir) || return 1
	row=$("$(spur_real squeue)" -r -h -j "$rid" -o "$SPUR_SQUEUE_FIELDS") || return 1
	[[ $row == "$rid|RUNNING|"* ]] || { echo "spur emulation: job $1 is not running: $row" >&2; return 1; }
	printf '%s\n' "$row" >"$dir/orphan.$1"
}

# The end #803 reports for such a job (its node rebooted, NODE_FAIL): the controller forgets
# it.  With no SPURID, every orphaned job's.
spur_orphan_end() {
	local dir
	dir=$(spur_state_dir) || return 1
	if [[ -n ${1:-} ]]; then rm -f "$dir/orphan.$1"; else rm -f "$dir"/orphan.*; fi
}

# A time limit as squeue prints it (M:S, H:M:S, D-H:M:S) in seconds; fails for UNLIMITED.
spur_limit_seconds() {
	local days=0 rest=$1 part
	if [[ $rest == *-* ]]; then days=${rest%%-*} rest=${rest#*-}; fi
	[[ $days =~ ^[0-9]+$ && $rest =~ ^[0-9]+(:[0-9]+){1,2}$ ]] || return 1
	IFS=: read -ra part <<<"$rest"
	if ((${#part[@]} == 3)); then
		echo $((10#$days * 86400 + 10#${part[0]} * 3600 + 10#${part[1]} * 60 + 10#${part[2]}))
	else
		echo $((10#$days * 86400 + 10#${part[0]} * 60 + 10#${part[1]}))
	fi
}

# spur keeps a job's time limit to the second (crates/spur-cli/src/sbatch.rs@4cc3da8 parses
# --time with config.rs parse_time_seconds: "0:00:20" is 20 s, "H:M" hours and minutes, "N"
# minutes, suffixed "30s", "2m"), where the real cluster rounds it up to whole minutes; squeue
# prints it as squeue.rs format_duration_hms does (M:SS, H:MM:SS, D-HH:MM:SS).  Prints spur's
# limit for sbatch's --time value, or fails for a form the emulation leaves to the real
# cluster's rounding.
spur_time_limit() {
	local v=$1 s d h m
	if [[ $v =~ ^([0-9]+)$ ]]; then s=$((10#$v * 60))
	elif [[ $v =~ ^([0-9]+):([0-9]+)$ ]]; then s=$((10#${BASH_REMATCH[1]} * 3600 + 10#${BASH_REMATCH[2]} * 60))
	elif [[ $v =~ ^([0-9]+):([0-9]+):([0-9]+)$ ]]; then
		s=$((10#${BASH_REMATCH[1]} * 3600 + 10#${BASH_REMATCH[2]} * 60 + 10#${BASH_REMATCH[3]}))
	elif [[ $v =~ ^([0-9]+)([smhd])$ ]]; then
		case ${BASH_REMATCH[2]} in s) s=1 ;; m) s=60 ;; h) s=3600 ;; d) s=86400 ;; esac
		s=$((10#${BASH_REMATCH[1]} * s))
	else
		return 1
	fi
	d=$((s / 86400)) h=$((s % 86400 / 3600)) m=$((s % 3600 / 60)) s=$((s % 60))
	if ((d)); then printf '%d-%02d:%02d:%02d\n' "$d" "$h" "$m" "$s"
	elif ((h)); then printf '%d:%02d:%02d\n' "$h" "$m" "$s"
	else printf '%d:%02d\n' "$m" "$s"; fi
}

# ROW (SPUR_SQUEUE_FIELDS) with LIMIT, spur's own time limit where sbatch kept one for its
# job (the file limit.<real id>), as its limit.
spur_row_limit() {
	local field
	[[ -n $2 ]] || { printf '%s\n' "$1"; return; }
	IFS='|' read -ra field <<<"$1"
	field[10]=$2
	(IFS='|'; printf '%s\n' "${field[*]}")
}

# ROW (SPUR_SQUEUE_FIELDS) of an orphaned job as the controller lists it at NOW.
spur_orphan_row() {
	local field limit start
	IFS='|' read -ra field <<<"$1"
	field[1]=RUNNING
	if limit=$(spur_limit_seconds "${field[10]}") && start=$(date -d "${field[12]}" +%s 2>/dev/null) &&
		(($2 >= start + limit + 30)); then
		field[1]=TIMEOUT
	fi
	(IFS='|'; printf '%s\n' "${field[*]}")
}

# Reads the real rows (SPUR_SQUEUE_FIELDS) and prints them, each orphaned job's as the
# controller lists it, and added where the real cluster forgot the job.
spur_rows_orphaned() {
	local dir f row id sid clock
	local -A orphan=() limits=()
	dir=$(spur_state_dir) || return 1
	clock=$(date +%s)
	for f in "$dir"/limit.*; do
		[[ -e $f ]] || continue
		IFS= read -r row <"$f"
		limits[${f##*/limit.}]=$row
	done
	for f in "$dir"/orphan.*; do
		[[ -e $f ]] || continue
		sid=${f##*/orphan.}
		id=$(spur_to_real "$sid")
		# a restarted cluster gave its real id to a newer job: long ended
		[[ -n $id ]] || { rm -f "$f"; continue; }
		IFS= read -r row <"$f"
		orphan[$id]=$(spur_row_limit "$row" "${limits[${id%%_*}]:-}")
	done
	while IFS= read -r row; do
		id=${row%%|*}
		if [[ -v orphan[$id] ]]; then
			spur_orphan_row "${orphan[$id]}" "$clock"
			unset "orphan[$id]"
		else
			spur_row_limit "$row" "${limits[${id%%_*}]:-}"
		fi
	done
	for id in "${!orphan[@]}"; do spur_orphan_row "${orphan[$id]}" "$clock"; done
}

# ---------------------------------------------------------------- steps (bin/srun)
# One node of a spur step, run there by bin/srun: what spurd's run_command does
# (crates/spurd/src/agent_server.rs@4cc3da8 run_command).  No SPANK plugin runs.  The env: the
# request's (the srun client's, CLIENT_ENV, NUL-separated) over spurd's own; then the job's
# node list, and the node's id and count as its place in the JOB's list ("tracked.nodelist",
# whatever nodes the step runs on; #868 changes only the controller's plan); the step's
# (spur_env.rs apply_step_scope: STEP_ID, STEPID, STEP_NUM_TASKS, NTASKS, NPROCS, NODEID,
# NNODES, JOB_NUM_NODES, twins); per task LOCALID and PROCID = the node's task offset + local
# rank (one task: apply_task_rank, which on 0.8 also sets LOCAL_RANK, LOCAL_WORLD_SIZE and
# NPROC_PER_NODE, #793; more: build_multi_task_wrapper, per_task_bash_exports, LOCAL_RANK).
# PLAN: NODE:TASK_OFFSET:TASKS_ON_NODE,... (bin/srun); NTASKS; then the command.  Exits with
# the worst task status.
spur_step_node() {
	local client_env=$1 plan=$2 ntasks=$3 me entry node='' offset=0 count=0 id=-1 i k rc=0 st
	local -a E job_nodes pids
	shift 3
	me=${SLURMD_NODENAME:-$(hostname -s)}
	for entry in ${plan//,/ }; do
		[[ ${entry%%:*} == "$me" ]] && IFS=: read -r node offset count <<<"$entry"
	done
	[[ -n $node ]] || { echo "spur emulation: node $me has no task in plan $plan" >&2; return 1; }
	mapfile -t -d '' E <"$client_env"
	for entry in "${E[@]}"; do
		[[ $entry == SPUR_JOB_NODELIST=* ]] && IFS=, read -ra job_nodes <<<"${entry#*=}"
	done
	for i in "${!job_nodes[@]}"; do [[ ${job_nodes[i]} == "$me" ]] && id=$i; done
	((id >= 0)) || id=0 # run_command: position(...).unwrap_or(0)
	local step=${SLURM_STEP_ID:-0} n=${#job_nodes[@]}
	local -a base=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
		"${E[@]}"
		SPUR_STEP_ID="$step" SLURM_STEP_ID="$step" SPUR_STEPID="$step" SLURM_STEPID="$step"
		SPUR_STEP_NUM_TASKS="$ntasks" SLURM_STEP_NUM_TASKS="$ntasks" SPUR_NTASKS="$ntasks"
		SLURM_NTASKS="$ntasks" SPUR_NPROCS="$ntasks" SLURM_NPROCS="$ntasks"
		SPUR_NODEID="$id" SLURM_NODEID="$id" SPUR_NNODES="$n" SLURM_NNODES="$n"
		SPUR_JOB_NUM_NODES="$n" SLURM_JOB_NUM_NODES="$n" SPUR_TASK_OFFSET="$offset")
	for ((k = 0; k < count; k++)); do
		local -a task=(SPUR_LOCALID="$k" SLURM_LOCALID="$k" SPUR_PROCID=$((offset + k))
			SLURM_PROCID=$((offset + k)))
		if ((count > 1)); then
			task+=(LOCAL_RANK="$k")
			# build_multi_task_wrapper: task k's slice of SPUR_JOB_GPUS (fact gpu_job_env)
			local all_gpus='' per=0 entry2
			for entry2 in "${E[@]}"; do [[ $entry2 == SPUR_JOB_GPUS=* ]] && all_gpus=${entry2#*=}; done
			if [[ -n $all_gpus ]]; then
				local -a gl
				IFS=, read -ra gl <<<"$all_gpus"
				per=$((${#gl[@]} / count))
				if ((per > 0)); then
					local slice
					slice=$(IFS=,; echo "${gl[*]:k*per:per}")
					task+=(ROCR_VISIBLE_DEVICES="$slice" CUDA_VISIBLE_DEVICES="$slice" GPU_DEVICE_ORDINAL="$slice")
				fi
			fi
		elif [[ $(spur_fact torch_env) == injected ]]; then
			task+=(LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 NPROC_PER_NODE=1)
		fi
		"${base[@]}" "${task[@]}" "$@" &
		pids+=($!)
	done
	for k in "${pids[@]}"; do
		st=0
		wait "$k" || st=$?
		((st > rc)) && rc=$st
	done
	return "$rc"
}

# ---------------------------------------------------------------- the job env
# The environment spurd gives a job on one node (crates/spurd/src/agent_server.rs launch_job,
# crates/spur-core/src/spur_env.rs, crates/spurd/src/executor.rs), as NUL-terminated
# NAME=VALUE: the submitted env (ENV_FILE, NUL-separated, as sbatch sent it), then spur's
# variables over it.  Arguments: JOB_ID ARRAY_JOB_ID ARRAY_TASK_ID (both empty: not an array
# task) NODE_RANK TASK_OFFSET TASKS_PER_NODE NTASKS NODES (comma-separated) NAME PARTITION
# ACCOUNT QOS CPUS_PER_TASK CPUS_ON_NODE NODENAME ENV_FILE [PMIX] [GPUS] (PMIX 1: a multi-task
# --mpi=pmix launch, agent_server.rs pmix_multi_task; see spur_pmix_tasks; GPUS: the job's
# GPUs a node, sbatch --gres=gpu:N, fact gpu_job_env).  Each node's registered comm
# address is NODE.spur.test:6818, an FQDN every node of the test cluster resolves
# (t/cluster/config.sh), spurd's default agent port (crates/spur-core/src/config.rs).
# NAME=VALUE into spur_launch_env's E and order (bash's dynamic scope), keeping first places.
spur_put() {
	[[ -v E[$1] ]] || order+=("$1")
	E[$1]=$2
}
# spur_env.rs set_with_slurm_twin: SPUR_X and SLURM_X (SPURD_X and SLURMD_X)
spur_twin() {
	spur_put "$1" "$2"
	spur_put "SLURM${1#SPUR}" "$2"
}

spur_launch_env() {
	local job_id=$1 array_job_id=$2 array_task_id=$3 node_rank=$4 task_offset=$5 tpn=$6
	local ntasks=$7 nodelist=$8 job_name=$9 partition=${10} account=${11} qos=${12}
	local cpus_per_task=${13} cpus_on_node=${14} nodename=${15} env_file=${16} pmix=${17:-0}
	local gpus=${18:-0}
	local -a nodes peers=() order=()
	local -A E=()
	local n kv k v bin_dir base first torch
	IFS=, read -ra nodes <<<"$nodelist"
	for n in "${nodes[@]}"; do peers+=("$n.spur.test:6818"); done
	# spec.environment: what spur's sbatch sent
	while IFS= read -r -d '' kv; do
		[[ $kv == [!=]*=* ]] || continue
		spur_put "${kv%%=*}" "${kv#*=}"
	done <"$env_file"
	bin_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/bin" && pwd -P)
	base=${E[PATH]:-/usr/local/bin:/usr/bin:/bin}
	[[ :$base: == *":$bin_dir:"* ]] || spur_put PATH "$bin_dir:$base"
	spur_twin SPUR_JOB_ID "$job_id"
	spur_twin SPUR_JOBID "$job_id"
	spur_twin SPUR_JOB_NAME "$job_name"
	spur_twin SPUR_JOB_PARTITION "$partition"
	spur_twin SPUR_JOB_ACCOUNT "$account"
	spur_twin SPUR_JOB_QOS "$qos"
	spur_twin SPUR_SUBMIT_DIR "$PWD"
	spur_twin SPUR_NNODES "${#nodes[@]}"
	spur_twin SPUR_JOB_NUM_NODES "${#nodes[@]}"
	spur_twin SPUR_NTASKS "$ntasks"
	spur_twin SPUR_NPROCS "$ntasks"
	spur_twin SPUR_CPUS_PER_TASK "$cpus_per_task"
	spur_twin SPUR_TASKS_PER_NODE "$tpn"
	spur_twin SPUR_NODEID "$node_rank"
	# crates/spurctld/src/scheduler_loop.rs: all_nodes.join(","), never compressed
	spur_twin SPUR_NODELIST "$nodelist"
	spur_twin SPUR_JOB_NODELIST "$nodelist"
	# hostname::get() of the node
	spur_twin SPURD_NODENAME "$nodename"
	spur_twin SPUR_CPUS_ON_NODE "$((tpn * (cpus_per_task > 1 ? cpus_per_task : 1)))"
	if [[ -n $array_task_id ]]; then
		spur_twin SPUR_ARRAY_JOB_ID "$array_job_id"
		spur_twin SPUR_ARRAY_TASK_ID "$array_task_id"
	fi
	spur_put SPUR_NODE_RANK "$node_rank"
	spur_put SPUR_TASK_OFFSET "$task_offset"
	torch=$(spur_fact torch_env)
	if ((pmix)); then
		# agent_server.rs@4cc3da8:1175-1180: step 0 of the allocation (spur_env.rs
		# apply_step_scope, :69-87), the MPI type, and none of the torch variables (:1200)
		spur_twin SPUR_STEP_ID 0
		spur_twin SPUR_STEPID 0
		spur_twin SPUR_STEP_NUM_TASKS "$ntasks"
		spur_twin SPUR_NTASKS "$ntasks"
		spur_twin SPUR_NPROCS "$ntasks"
		spur_twin SPUR_NODEID "$node_rank"
		spur_twin SPUR_NNODES "${#nodes[@]}"
		spur_twin SPUR_JOB_NUM_NODES "${#nodes[@]}"
		spur_twin SPUR_JOB_ID "$job_id"
		spur_twin SPUR_JOBID "$job_id"
		spur_twin SPUR_MPI_TYPE pmix
		torch=none
	fi
	if [[ $torch == injected ]]; then
		spur_put LOCAL_RANK 0
		spur_put LOCAL_WORLD_SIZE "$tpn"
		spur_put NPROC_PER_NODE "$tpn"
	fi
	if ((tpn == 1 && !pmix)); then
		spur_twin SPUR_LOCALID 0
		spur_twin SPUR_PROCID "$task_offset"
	fi
	spur_put SPUR_PEER_NODES "$(IFS=,; echo "${peers[*]}")"
	[[ $torch == injected ]] && spur_put NODE_RANK "$node_rank"
	if ((${#nodes[@]} > 1)) && [[ $torch == injected ]]; then
		first=${peers[0]}
		spur_put MASTER_ADDR "${first%:*}"
		spur_put MASTER_PORT 29500
		if [[ $(spur_fact rank_world_size) == multinode ]]; then
			spur_put WORLD_SIZE "${#nodes[@]}"
			spur_put RANK "$node_rank"
		fi
	fi
	# the node's GPUs 0..N-1 (the test cluster's GRES, 4 a node, no GPU behind them)
	if ((gpus > 0)) && [[ $(spur_fact gpu_job_env) == yes ]]; then
		spur_put SPUR_JOB_GPUS "$(seq -s, 0 $((gpus - 1)))"
		spur_put ROCR_VISIBLE_DEVICES "${E[SPUR_JOB_GPUS]}"
	elif [[ $(spur_fact gpu_deny_zero_gpu) == yes ]]; then
		for v in ROCR_VISIBLE_DEVICES HIP_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ZE_AFFINITY_MASK; do
			spur_put "$v" -1
		done
		spur_put NVIDIA_VISIBLE_DEVICES void
		spur_put SPUR_JOB_GPUS ''
	fi
	if ((pmix)); then
		# executor.rs@4cc3da8:617-619, mpi_plugin.rs:758-779 strip_launcher_mpi_env: no PMI*,
		# PMIX_*, OMPI_MCA_ess*, torch variable, SPUR_NODE_RANK or SPUR_PEER_NODES is left
		# (the user's MASTER_PORT neither); and no thread limits (executor.rs:630)
		for k in "${order[@]}"; do
			case $k in
			PMI* | OMPI_MCA_ess* | LOCAL_RANK | LOCAL_WORLD_SIZE | NPROC_PER_NODE | NODE_RANK | \
				SPUR_NODE_RANK | WORLD_SIZE | RANK | MASTER_ADDR | MASTER_PORT | SPUR_PEER_NODES)
				unset "E[$k]" ;;
			esac
		done
	else
		# crates/spurd/src/executor.rs: thread limits from the node's CPUs, before SPANK runs
		for v in OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS VECLIB_MAXIMUM_THREADS NUMEXPR_NUM_THREADS; do
			spur_put "$v" "$cpus_on_node"
		done
	fi
	for k in "${order[@]}"; do [[ ! -v E[$k] ]] || printf '%s=%s\0' "$k" "${E[$k]}"; done
}

# The body of a multi-task --mpi=pmix launch on one node, for bash -c with the task's command
# as "$@" and _TASKS_ON_NODE set (task_launch.rs@4cc3da8:545-610
# build_multi_task_pmix_wrapper, chosen at agent_server.rs:1340-1364; SPANK does not run,
# executor.rs:642).  Each of the node's tasks is forked with LOCAL_RANK, SPUR_LOCALID and
# SPUR_PROCID = SPUR_TASK_OFFSET + LOCAL_RANK (spur_env.rs:59-66 per_task_bash_exports, with
# SLURM twins); its preamble (task_launch.rs:519-534) then unsets SLURM_PROCID, SLURM_LOCALID,
# SLURM_NODEID and SLURM_TASKS_PER_NODE and keeps SLURM_STEP_ID (0).  The per-rank PMIx env
# (mpi_plugin.rs normalize_pmix_fork_env: PMIX_RANK, PMIX_SIZE, ...) is not modelled.  v0.8.0
# is the same (executor.rs@v0.8.0:642 skips SPANK, task_launch.rs@v0.8.0:43-56 chooses the
# launch and :432 unsets the same four names, agent_server.rs@v0.8.0:1036 pmix_multi_task), so
# both generations run it.
spur_pmix_tasks() {
	cat <<'BODY'
rank=0
while ((rank < _TASKS_ON_NODE)); do
	(
		export LOCAL_RANK=$rank SPUR_LOCALID=$rank SPUR_PROCID=$((SPUR_TASK_OFFSET + rank))
		unset SLURM_PROCID SLURM_LOCALID SLURM_NODEID SLURM_TASKS_PER_NODE _TASKS_ON_NODE
		export SLURM_STEP_ID=${SLURM_STEP_ID:-0} SLURM_STEPID=${SLURM_STEPID:-0}
		exec "$@"
	) &
	rank=$((rank + 1))
done
wait
BODY
}
