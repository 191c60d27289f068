# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# t/spur/launch.sh: the body of every launcher t/spur/bin/sbatch writes (the values it
# needs are written above it).  Run by the real SLURM job: in the batch step it opens spur's
# output files and starts one launch per node; each launch does what spurd's launch_job does
# (crates/spurd/src/agent_server.rs, the same at v0.8.0 and 4cc3da8 but for the rows of the
# table in lib.sh), then runs spur's SPANK host, which runs the script.
# shellcheck disable=SC2154 # spur_lib, spur_id, tasks, ... come from the lines above
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$spur_lib"
export SPUR_EMU_VERSION=$spur_gen
scontrol=$(spur_real scontrol) || exit 1

# This job's spur ids: an array task k (in spur's order) of array J is job J+1+k.
array_task_id=''
if [[ $tasks != - ]]; then
	IFS=, read -ra task_list <<<"$tasks"
	for k in "${!task_list[@]}"; do
		if [[ ${task_list[k]} == "${SLURM_ARRAY_TASK_ID:-}" ]]; then
			job_id=$((spur_id + 1 + k))
			array_task_id=${task_list[k]}
		fi
	done
	[[ -n $array_task_id ]] || { echo "spur emulation: array task ${SLURM_ARRAY_TASK_ID:-?} is not in $tasks" >&2; exit 1; }
else
	job_id=$spur_id
fi

# crates/spur-core/src/job.rs expand_pattern_codes, anchored in the work dir.
expand_output() {
	local p=$1 out='' c
	while [[ -n $p ]]; do
		c=${p:0:1}
		p=${p:1}
		if [[ $c != % || -z $p ]]; then out+=$c; continue; fi
		c=${p:0:1}
		p=${p:1}
		case $c in
		j | J) out+=$job_id ;;
		x) out+=$job_name ;;
		u) out+=$(id -un) ;;
		a) if [[ -n $array_task_id ]]; then out+=$array_task_id; else out+=%a; fi ;;
		A) if [[ -n $array_task_id ]]; then out+=$spur_id; else out+=%A; fi ;;
		N) out+=$("$scontrol" show hostnames "$SLURM_JOB_NODELIST" | head -1) ;;
		*) out+=%$c ;;
		esac
	done
	[[ $out == /* ]] || out=$PWD/$out
	printf '%s\n' "$out"
}

if [[ ${1:-} != --node ]]; then
	# privdrop.rs check_root_execution_allowed: refused before anything is spawned
	if [[ $(id -u) == 0 && $(spur_fact root_jobs) == refused ]]; then
		echo "spurd: refusing to execute as uid 0: the job requested root and spurd is running as root, but [auth] allow_root_jobs is false." >&2
		exit 1
	fi
	out=$(expand_output "$out_pattern")
	err=$(expand_output "$err_pattern")
	if [[ $out == "$err" ]]; then exec >"$out" 2>&1; else exec >"$out" 2>"$err"; fi
	# one launch per node whatever the job's --ntasks-per-node (SLURM_NTASKS is inherited)
	launch=(--nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1
		--kill-on-bad-exit=0)
	((hold)) || exec "$(spur_real srun)" "${launch[@]}" "$0" --node
	# the hold scripts never end: the job ends with the first node's script, and spur decides
	# it by that node's exit (crates/spur-core/src/job.rs derived_completion: the batch node)
	launch+=(--wait=3)
	SPUR_EMU_EXIT=$(mktemp "$(spur_state_dir)/exit.XXXXXX") || exit 1
	export SPUR_EMU_EXIT
	"$(spur_real srun)" "${launch[@]}" "$0" --node
	status=$(cat "$SPUR_EMU_EXIT")
	rm -f "$SPUR_EMU_EXIT"
	exit "${status:-1}"
fi

# ---------------------------------------------------------------- one node: launch_job
mapfile -t nodes < <("$scontrol" show hostnames "$SLURM_JOB_NODELIST")
nnodes=${#nodes[@]}
rank=$SLURM_NODEID
tpn=${tpn_opt:-0}
ntasks=${ntasks_opt:-$((tpn > 0 ? nnodes * tpn : nnodes))}
((tpn > 0)) || tpn=$((ntasks / nnodes))
((tpn > 0)) || tpn=1
task_offset=$((rank * tpn))
node_rank=$((task_offset / tpn))
# task_launch.rs@4cc3da8:109-122 use_multi_task_launch, agent_server.rs:1170: --mpi=pmix
# (sbatch.rs --mpi, default none) with more than one task on the node and a script that
# launches no steps itself
pmix=0
((tpn > 1 && !hold)) && [[ $mpi == pmix ]] && pmix=1

mapfile -t -d '' job_env < <(spur_launch_env "$job_id" "$spur_id" "$array_task_id" "$node_rank" \
	"$task_offset" "$tpn" "$ntasks" "$(IFS=,; echo "${nodes[*]}")" "$job_name" \
	"${SLURM_JOB_PARTITION:-}" "$account" "$qos" "$cpus_per_task" "${SLURM_CPUS_ON_NODE:-1}" \
	"${SLURMD_NODENAME:-$(hostname)}" "$env_file" "$pmix" "${gpus:-0}")

# task_launch.rs: a script that launches steps itself runs on the first node only; the
# others run spur's hold script (SPANK runs there all the same)
run=(/bin/bash "$user_script" "${script_args[@]}")
if ((hold && task_offset > 0)); then
	run=(/bin/bash -c 'while true; do sleep 60; done')
fi
# A requeued job (scontrol requeue, lib.sh fact requeue) runs this again under the same spur
# id: SLURM's SLURM_RESTART_COUNT stays out (env -i), as spur's job env has no such variable.
# spurd's own environment, beneath the job env (executor.rs: no env_clear): spurd runs as
# root from its unit with SPUR_PLUGSTACK naming the plugstack it loaded.  SPUR_EMU_TRACE
# (given to sbatch) has the host say on stderr when the hooks ran.
if ((pmix)); then
	# no SPANK (executor.rs:642): the node's tasks, forked as lib.sh spur_pmix_tasks says
	exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		SPUR_PLUGSTACK="$plugstack" _TASKS_ON_NODE="$tpn" "${job_env[@]}" \
		/bin/bash -c "$(spur_pmix_tasks)" spur-pmix "${run[@]}"
fi
trace=()
[[ -z ${SPUR_EMU_TRACE:-} ]] || trace=(--trace)
spurd=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
	SPUR_PLUGSTACK="$plugstack" "$host" "${trace[@]}" "$plugstack" "${job_env[@]}" -- "${run[@]}")
((hold && task_offset == 0)) || exec "${spurd[@]}"
# the batch node of a job with holding nodes: its exit is the job's
status=0
"${spurd[@]}" || status=$?
echo "$status" >"$SPUR_EMU_EXIT"
exit "$status"
