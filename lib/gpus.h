/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpus.h: how many GPUs this node's tasks may use (MAD_GPUS_PER_NODE).
 * Order: SLURM_GPUS_ON_NODE (GRES), else the visible-device lists
 * (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES), else
 * the devices present: AMD (/dev/kfd and the KFD topology nodes whose
 * gpu_id is not 0) or NVIDIA (/dev/nvidia0, /dev/nvidia1, ...).  Many
 * clusters configure no GRES, so the later sources matter. */
#ifndef MAD_GPUS_H
#define MAD_GPUS_H

#include "options.h"

/* The count, or -1 when nothing tells (no GPU found is "unknown", not 0:
 * a node may have GPUs this code cannot see).  *FROM names the source.
 * ROOT prefixes /dev and /sys ("" on a real node; a test's fake tree). */
long mad_gpus_detect(mad_getenv_fn getenv_fn, void *ctx, const char *root, const char **from);

#endif
