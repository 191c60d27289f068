/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpus.h: how many GPUs this node's tasks may use (MAD_GPUS_PER_NODE).
 * Order: SLURM_GPUS_ON_NODE (GRES), else spur's SPUR_JOB_GPUS, else the visible-device lists
 * (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES), else
 * the devices present: AMD (/dev/kfd and the KFD topology nodes whose
 * gpu_id is not 0) or NVIDIA (/dev/nvidia0, /dev/nvidia1, ..., looked for
 * only where /dev/nvidiactl or /dev/nvidia0 is).  Many
 * clusters configure no GRES, so the later sources matter. */
#ifndef MAD_GPUS_H
#define MAD_GPUS_H

#include "options.h"

/* The step's GPUs on this node, as the scheduler says: SLURM_GPUS_ON_NODE,
 * else spur's SPUR_JOB_GPUS, the node's allocated list, which spur keeps
 * whole in every task while it gives each task of a multi-task step its
 * slice in ROCR/CUDA_VISIBLE_DEVICES (ROCm/spur crates/spur-core/src/
 * task_launch.rs@4cc3da8: gpu env injection sets SPUR_JOB_GPUS with the
 * visible lists; build_multi_task_wrapper slices _ALL_GPUS per LOCAL_RANK;
 * a job without GPUs gets it empty, gpu_deny_visibility).  -1 when neither
 * says; *FROM names the source, *VAR the variable (VAR may be NULL). */
long mad_gpus_of_step(mad_getenv_fn getenv_fn, void *ctx, const char **from, const char **var);

/* The count, or -1 when nothing tells (no GPU found is "unknown", not 0:
 * a node may have GPUs this code cannot see).  *FROM names the source.
 * ROOT prefixes /dev and /sys ("" on a real node; a test's fake tree). */
long mad_gpus_detect(mad_getenv_fn getenv_fn, void *ctx, const char *root, const char **from);

/* The devices this process's GPU runtime will show it: the entries of the
 * first of ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES
 * that holds a list (as mad_gpus_detect counts one), its name in *VAR and
 * its value in LIST (SIZE bytes); -1 when none does. */
long mad_gpus_visible(mad_getenv_fn getenv_fn, void *ctx, char *list, size_t size, const char **var);

/* MAD_LOCAL_DEVICE (design.md §7): the index, among the VISIBLE devices
 * this process sees, that it should use, or -1 when it sees none.
 * STEP_GPUS is mad_gpus_of_step() (-1 unset): in a task's environment the
 * step's GPUs on this node, while the visible list is the task's own after
 * SLURM's per-task binding (src/interfaces/gres.c gres_g_task_set_env,
 * src/plugins/gres/common/gres_common.c gres_common_gpu_set_env).  So a
 * task sees fewer than STEP_GPUS exactly when SLURM bound GPUs per task:
 *  - all visible (VISIBLE >= STEP_GPUS, or no STEP_GPUS): LOCAL_RANK, or
 *    LOCAL_RANK mod VISIBLE when the node has more tasks than GPUs;
 *  - bound, each task's devices its own (LOCAL_NTASKS x VISIBLE at most
 *    STEP_GPUS: --gpus-per-task, map_gpu, single:1, --ntasks-per-gpu,
 *    where one device is all a task sees): 0, its first;
 *  - bound, the VISIBLE devices shared by several tasks (LOCAL_NTASKS x
 *    VISIBLE / STEP_GPUS of them: --gpu-bind=closest): LOCAL_RANK mod
 *    VISIBLE, one each.
 * *HOW says which, for mad-env --explain. */
long mad_local_device(long visible, long step_gpus, long local_rank, long local_ntasks,
		      const char **how);

#endif
