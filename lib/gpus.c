/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpus.c: see gpus.h. */
#include "gpus.h"
#include "decimal.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Entries of a device list ("0,1,3", "GPU-uuid,..."), -1 when it is not a
 * list (SLURM's "NoDevFiles").  As the CUDA and ROCm runtimes read such a
 * list, an entry with a minus sign hides itself and every entry after it:
 * spur 0.12 denies GPUs to a job that asked for none with
 * ROCR/HIP/CUDA_VISIBLE_DEVICES=-1, which is 0 GPUs, not 1. */
static long list_count(const char *v)
{
	long n = 0;
	const char *p;

	if (!strcmp(v, "NoDevFiles"))
		return -1;
	for (p = v; *p && *p != '-'; n++) {
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return n;
}

static int exists(const char *root, const char *path)
{
	char full[4096];

	snprintf(full, sizeof(full), "%s%s", root, path);
	return access(full, F_OK) == 0;
}

/* KFD topology nodes with a non-zero gpu_id: the GPUs (CPUs have 0). */
static long amd_gpus(const char *root)
{
	char dir[4096], path[4400], buf[32];
	struct dirent *e;
	long n = 0;
	DIR *d;

	if (!exists(root, "/dev/kfd"))
		return -1;
	snprintf(dir, sizeof(dir), "%s/sys/class/kfd/kfd/topology/nodes", root);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/gpu_id", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0) {
			buf[len] = '\0';
			n += atol(buf) != 0;
		}
	}
	closedir(d);
	return n > 0 ? n : -1;
}

/* /dev/nvidia<N>, looked for only where /dev/nvidiactl or /dev/nvidia0 is:
 * NVIDIA's driver makes the control device with the GPUs' (its CUDA
 * installation guide, "Device Node Verification"; nvidia-modprobe(1)), and
 * a container is given it with them, so a node with neither has no NVIDIA
 * GPU a task can use.  That spares such a node the walk of /dev, which in a
 * task just forked from slurmstepd is mostly first touches (opendir's
 * buffer, the entries): 135 us of task_init's CPU on the 64-node harness,
 * where two access() calls cost a few (bench/README.md, issue 32). */
static long nvidia_gpus(const char *root)
{
	char dir[4096];
	struct dirent *e;
	long n = 0;
	DIR *d;

	if (!exists(root, "/dev/nvidiactl") && !exists(root, "/dev/nvidia0"))
		return -1;
	snprintf(dir, sizeof(dir), "%s/dev", root);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "nvidia", 6) && e->d_name[6] &&
		    strspn(e->d_name + 6, "0123456789") == strlen(e->d_name + 6))
			n++;
	closedir(d);
	return n > 0 ? n : -1;
}

static const struct {
	const char *var, *from;
} lists[] = {
	{ "ROCR_VISIBLE_DEVICES", "env (ROCR_VISIBLE_DEVICES)" },
	{ "HIP_VISIBLE_DEVICES", "env (HIP_VISIBLE_DEVICES)" },
	{ "CUDA_VISIBLE_DEVICES", "env (CUDA_VISIBLE_DEVICES)" },
};

long mad_gpus_visible(mad_getenv_fn getenv_fn, void *ctx, char *list, size_t size, const char **var)
{
	size_t i;
	long n;

	for (i = 0; i < sizeof(lists) / sizeof(*lists); i++)
		if (getenv_fn(ctx, lists[i].var, list, size) == 1 && (n = list_count(list)) >= 0) {
			*var = lists[i].var;
			return n;
		}
	*var = NULL;
	if (size)
		list[0] = '\0';
	return -1;
}

long mad_local_device(long visible, long step_gpus, long local_rank, long local_ntasks, const char **how)
{
	if (visible <= 0 || local_rank < 0) {
		*how = NULL;
		return -1;
	}
	if (step_gpus <= visible) {
		*how = local_rank < visible ? "LOCAL_RANK: the task sees every GPU of the node" :
					      "LOCAL_RANK mod the visible GPUs: more tasks than GPUs";
		return local_rank % visible;
	}
	/* SLURM bound a subset per task (gres_common.c common_gres_set_env:
	 * a task's list holds only its usable_gres) */
	if (visible == 1 || local_ntasks <= 0 || local_ntasks * visible <= step_gpus) {
		*how = visible == 1 ? "0: SLURM bound this task's own GPU" :
				      "0: the first of the GPUs SLURM bound to this task";
		return 0;
	}
	*how = "LOCAL_RANK mod the visible GPUs: SLURM bound them to several tasks";
	return local_rank % visible;
}

long mad_gpus_of_step(mad_getenv_fn getenv_fn, void *ctx, const char **from, const char **var)
{
	const char *unused;
	char buf[1024];
	long n;

	if (!var)
		var = &unused;
	if (getenv_fn(ctx, "SLURM_GPUS_ON_NODE", buf, sizeof(buf)) == 1 &&
	    !mad_decimal(buf, 0, LONG_MAX, &n)) {
		*from = "SLURM (SLURM_GPUS_ON_NODE)";
		*var = "SLURM_GPUS_ON_NODE";
		return n;
	}
	if (getenv_fn(ctx, "SPUR_JOB_GPUS", buf, sizeof(buf)) == 1 && (n = list_count(buf)) >= 0) {
		*from = "spur (SPUR_JOB_GPUS)";
		*var = "SPUR_JOB_GPUS";
		return n;
	}
	*from = *var = NULL;
	return -1;
}

long mad_gpus_detect(mad_getenv_fn getenv_fn, void *ctx, const char *root, const char **from)
{
	char buf[1024];
	long n;
	size_t i;

	if ((n = mad_gpus_of_step(getenv_fn, ctx, from, NULL)) >= 0)
		return n;
	for (i = 0; i < sizeof(lists) / sizeof(*lists); i++)
		if (getenv_fn(ctx, lists[i].var, buf, sizeof(buf)) == 1 && (n = list_count(buf)) >= 0) {
			*from = lists[i].from;
			return n;
		}
	if ((n = amd_gpus(root)) > 0) {
		*from = "computed (AMD devices: /dev/kfd, KFD topology)";
		return n;
	}
	if ((n = nvidia_gpus(root)) > 0) {
		*from = "computed (NVIDIA devices: /dev/nvidia*)";
		return n;
	}
	*from = NULL;
	return -1;
}
