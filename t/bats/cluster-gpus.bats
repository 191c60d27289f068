#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The device each task uses (MAD_LOCAL_DEVICE, doc/design.md §7) under SLURM's own GPU
# binding, on the test cluster's GRES GPUs (4 per node, no GPU behind them:
# t/cluster/config.sh MAD_CLUSTER_GPUS; t/suite and t/cluster/test give every cluster 4).
# Each task prints what it sees: the lists SLURM set, the contract's device, and what
# torch.cuda.set_device would do with MAD_LOCAL_DEVICE and with LOCAL_RANK, judged by
# t/helpers/set-device (torch's rules: an ordinal at or past the visible devices fails with
# "invalid device ordinal"; its header cites torch's source).
#
# What SLURM sets per task (TaskPlugin=task/none: the node's indices), SLURM 24.11
# src/plugins/gres/common/gres_common.c common_gres_set_env and gres_common_gpu_set_env:
# the visible lists hold the task's usable devices only, SLURM_GPUS_ON_NODE the step's GPUs
# on the node, and a step without GPUs gets no list (unset, not empty). --gpus-per-task
# binds each task its own (sbatch(1): it implies --gpu-bind=per_task:N), --ntasks-per-gpu
# gives several tasks one (implies --gpu-bind=single:N), --gpu-bind=map_gpu:L gives task I
# the I-th entry of L. Nodes have CPUs=2, so a node runs 2 tasks (4 with GPUs are refused:
# notes of the harness, "Requested node configuration is not available"). The cluster's last
# node (MAD_CLUSTER_AMD_NODE) has AMD's gres.conf flag, amd_gpu_env: only
# ROCR_VISIBLE_DEVICES is set there, as at AMD sites.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	# every test needs the GPUs; a cluster without them is the harness's fault, named
	if ((${MAD_CLUSTER_GPUS:-0} < 4)) || [[ ${MAD_CLUSTER_AMD_NODE:-0} -lt 3 ]]; then
		echo "the cluster has ${MAD_CLUSTER_GPUS:-0} GPUs per node and AMD node '${MAD_CLUSTER_AMD_NODE:-}': these tests need 4 and the AMD one past n2 (MAD_CLUSTER_GPUS=4 t/cluster/start, as t/cluster/test does)"
		return 1
	fi
	# and SLURM sees them: gpu:4 on every node
	local gres
	gres=$(sinfo -h -N -o '%N %G' | sort -u)
	if grep -vE ' gpu:4(\(S:[^)]*\))?$' <<<"$gres"; then
		echo "sinfo does not show gpu:4 on every node (above): is $MAD_CLUSTER_DIR/etc/gres.conf right?"
		return 1
	fi
	use_plugin run-gpus
	cp "$BATS_TEST_DIRNAME/../helpers/set-device" "$MAD_CLUSTER_SHARED/set-device"
	# one task's view; its arguments go to set-device (--rocm: a ROCm build of torch)
	cat >"$MAD_CLUSTER_SHARED/gpu-task.sh" <<-'TASK'
		#!/bin/bash
		t=t$SLURM_PROCID
		echo "$t node=$SLURMD_NODENAME local=${LOCAL_RANK-unset}"
		echo "$t lists cuda=${CUDA_VISIBLE_DEVICES-unset} rocr=${ROCR_VISIBLE_DEVICES-unset} gpus=${MAD_GPUS_PER_NODE-unset}"
		echo "$t device=${MAD_LOCAL_DEVICE-unset}"
		echo "$t nproc=${MAD_NPROC_PER_NODE-unset}"
		echo "$t set_device(MAD_LOCAL_DEVICE) $(./set-device "$@" "${MAD_LOCAL_DEVICE-}")"
		echo "$t set_device(LOCAL_RANK) $(./set-device "$@" "${LOCAL_RANK-}")"
	TASK
	# an agent's workers (torchrun's): each its own view, by the device the
	# contract documents for both shapes (mad.8, design.md §7)
	cat >"$MAD_CLUSTER_SHARED/gpu-worker.sh" <<-'TASK'
		#!/bin/bash
		echo "w$RANK local=$LOCAL_RANK device=${MAD_LOCAL_DEVICE-unset} gpus=${MAD_GPUS_PER_NODE-unset} $(./set-device "${MAD_LOCAL_DEVICE-$LOCAL_RANK}")"
	TASK
	# the agent: torchrun as one task of the node, from the contract alone
	cat >"$MAD_CLUSTER_SHARED/gpu-agent.sh" <<-'TASK'
		#!/bin/bash
		echo "agent device=${MAD_LOCAL_DEVICE-unset} nproc=${MAD_NPROC_PER_NODE-unset}"
		exec ./torchrun-compat --nnodes="$NNODES" --node_rank="$NODE_RANK" \
			--nproc_per_node="$MAD_NPROC_PER_NODE" --master_addr="$MASTER_ADDR" \
			--master_port="$MASTER_PORT" --no_python ./gpu-worker.sh
	TASK
	chmod 0755 "$MAD_CLUSTER_SHARED/set-device" "$MAD_CLUSTER_SHARED/gpu-task.sh" \
		"$MAD_CLUSTER_SHARED/gpu-worker.sh" "$MAD_CLUSTER_SHARED/gpu-agent.sh"
	copy_torch_helpers
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	amd=n$MAD_CLUSTER_AMD_NODE
}

submit_within=60 submit_time=1

# task T saw LINES (each "KEY..." after "tT ")
assert_task() { # T lines...
	local t=$1 l
	shift
	for l; do assert_line "t$t $l"; done
}

@test "gpus: --gpus-per-task=1, 2 nodes x 2 tasks: each task's own GPU is its device 0; LOCAL_RANK fails on task 1 of each node, said once as a warning" {
	submit -w n1,n2 -N2 --ntasks-per-node=2 --gpus-per-task=1 --mad-model=m \
		--wrap 'srun --gpus-per-task=1 ./gpu-task.sh'
	assert_success
	run cat "$out"
	for t in 0 1 2 3; do
		g=$((t % 2)) # task/none: the node's index of the task's own GPU
		assert_task "$t" "node=n$((t / 2 + 1)) local=$g" "lists cuda=$g rocr=$g gpus=2" device=0 \
			"set_device(MAD_LOCAL_DEVICE) ok: device $g of CUDA_VISIBLE_DEVICES=$g"
	done
	assert_task 0 'set_device(LOCAL_RANK) ok: device 0 of CUDA_VISIBLE_DEVICES=0'
	assert_task 1 'set_device(LOCAL_RANK) RuntimeError: CUDA error: invalid device ordinal'
	assert_task 3 'set_device(LOCAL_RANK) RuntimeError: CUDA error: invalid device ordinal'
	# the plugin's one line on each such task's stderr, a warning under the plugin's name
	run grep -c '^mad: warning: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1): set_device(LOCAL_RANK) fails' "$out"
	assert_output 2
	run grep -c 'error: mad: warning' "$out"
	assert_output 0
}

@test "gpus: --ntasks-per-gpu=2: two tasks share one GPU, both use device 0" {
	submit -w n1 -N1 -n2 --ntasks-per-gpu=2 --mad-model=m --wrap 'srun --ntasks-per-gpu=2 ./gpu-task.sh'
	assert_success
	run cat "$out"
	for t in 0 1; do
		assert_task "$t" "node=n1 local=$t" 'lists cuda=0 rocr=0 gpus=1' device=0 \
			'set_device(MAD_LOCAL_DEVICE) ok: device 0 of CUDA_VISIBLE_DEVICES=0'
	done
	assert_task 1 'set_device(LOCAL_RANK) RuntimeError: CUDA error: invalid device ordinal'
}

@test "gpus: --gpu-bind=map_gpu:3,2,1,0 over --gres=gpu:4: task 0 on GPU 3, task 1 on GPU 2, each its device 0" {
	submit -w n1 -N1 -n2 --gres=gpu:4 --mad-model=m --wrap 'srun --gpu-bind=map_gpu:3,2,1,0 ./gpu-task.sh'
	assert_success
	run cat "$out"
	assert_task 0 'lists cuda=3 rocr=3 gpus=4' device=0 'set_device(MAD_LOCAL_DEVICE) ok: device 3 of CUDA_VISIBLE_DEVICES=3'
	assert_task 1 'lists cuda=2 rocr=2 gpus=4' device=0 'set_device(MAD_LOCAL_DEVICE) ok: device 2 of CUDA_VISIBLE_DEVICES=2'
	assert_task 1 'set_device(LOCAL_RANK) RuntimeError: CUDA error: invalid device ordinal'
}

@test "gpus: --gres=gpu:4 unbound: every task sees the node's 4, its device is LOCAL_RANK; no warning" {
	submit -w n1 -N1 -n2 --gres=gpu:4 --mad-model=m --wrap 'srun ./gpu-task.sh'
	assert_success
	run cat "$out"
	for t in 0 1; do
		assert_task "$t" 'lists cuda=0,1,2,3 rocr=0,1,2,3 gpus=4' "device=$t" \
			"set_device(MAD_LOCAL_DEVICE) ok: device $t of CUDA_VISIBLE_DEVICES=0,1,2,3" \
			"set_device(LOCAL_RANK) ok: device $t of CUDA_VISIBLE_DEVICES=0,1,2,3"
	done
	refute_line --partial 'mad: warning'
}

@test "gpus: a job without GPUs: no list, no device, no GPU count, even where the submitter's environment (a GPU job's) had one" {
	# a job submitted from inside a GPU job's task inherits that task's variables
	submit -w n1 -N1 -n2 --export=ALL,MAD_LOCAL_DEVICE=1,MAD_GPUS_PER_NODE=4 --mad-model=m --wrap 'srun ./gpu-task.sh'
	assert_success
	run cat "$out"
	for t in 0 1; do
		assert_task "$t" 'lists cuda=unset rocr=unset gpus=unset' device=unset \
			"set_device(MAD_LOCAL_DEVICE) ValueError: invalid literal for int() with base 10: ''"
	done
	refute_line --partial 'mad: warning'
}

@test "gpus: --mad-gpu-bind=strict fails the task whose LOCAL_RANK names a GPU it cannot see, at its start; the other runs" {
	submit -w n1 -N1 -n2 --gpus-per-task=1 --mad-model=m --mad-gpu-bind=strict \
		--wrap 'srun --gpus-per-task=1 ./gpu-task.sh'
	assert_failure
	run cat "$out"
	assert_task 0 device=0 'set_device(MAD_LOCAL_DEVICE) ok: device 0 of CUDA_VISIBLE_DEVICES=0'
	refute_line --regexp '^t1 '
	run grep -c 'mad: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1): .*use MAD_LOCAL_DEVICE=0.* (--mad-gpu-bind=strict)$' "$out"
	assert_output 1
}

@test "gpus: an AMD node (ROCR_VISIBLE_DEVICES only), --gpus-per-task=1: a ROCm torch's device 0 is the task's own" {
	submit -w "$amd" -N1 -n2 --gpus-per-task=1 --mad-model=m --wrap 'srun --gpus-per-task=1 ./gpu-task.sh --rocm'
	assert_success
	run cat "$out"
	for t in 0 1; do
		assert_task "$t" "node=$amd local=$t" "lists cuda=unset rocr=$t gpus=2" device=0 \
			"set_device(MAD_LOCAL_DEVICE) ok: device $t of ROCR_VISIBLE_DEVICES=$t"
	done
	assert_task 1 'set_device(LOCAL_RANK) RuntimeError: HIP error: invalid device ordinal'
}

@test "gpus: an agent's task (srun -n1 --gres=gpu:4 torchrun --nproc_per_node=4, real torchrun): no device of its own; each worker takes its LOCAL_RANK, GPU 0..3" {
	require_torch
	local submit_within=150 submit_time=2 # torch's start on a loaded machine, as the torch files allow
	submit -w n1 -N1 -n1 -c2 --gres=gpu:4 --mad-model=m --wrap 'srun ./gpu-agent.sh'
	assert_success
	run cat "$out"
	assert_line 'agent device=unset nproc=4'
	for w in 0 1 2 3; do
		assert_line "w$w local=$w device=unset gpus=4 ok: device $w of CUDA_VISIBLE_DEVICES=0,1,2,3"
	done
	refute_line --partial 'mad: warning'
}

@test "gpus: a step of 2 tasks under a batch step of 1 (sbatch -n1 -c2 --gres=gpu:4, srun -n2 -c1): 2 processes a node, each task LOCAL_RANK's device" {
	submit -w n1 -N1 -n1 -c2 --gres=gpu:4 --mad-model=m \
		--wrap 'echo "batch nproc=$MAD_NPROC_PER_NODE device=${MAD_LOCAL_DEVICE-unset}"; srun -n2 -c1 ./gpu-task.sh'
	assert_success
	run cat "$out"
	# the batch script of a one-node job is an agent's task of the node's 4
	assert_line 'batch nproc=4 device=unset'
	for t in 0 1; do
		assert_task "$t" "node=n1 local=$t" 'lists cuda=0,1,2,3 rocr=0,1,2,3 gpus=4' "device=$t" nproc=2 \
			"set_device(MAD_LOCAL_DEVICE) ok: device $t of CUDA_VISIBLE_DEVICES=0,1,2,3"
	done
}
