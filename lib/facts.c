/* SPDX-License-Identifier: GPL-2.0-or-later */
/* facts.c: the facts of the allocation from the job environment (see
 * contract.h, mad_facts_from_env). */
#include "contract.h"
#include "decimal.h"
#include "gpus.h"
#include "ncclconf.h"

#include <limits.h>
#include <string.h>

void mad_facts_init(struct mad_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->job_id = f->array_job_id = f->array_task_id = MAD_NONE;
	f->array_task_min = f->array_task_count = MAD_NONE;
	f->node_id = f->nnodes = f->job_nnodes = f->restart_count = MAD_NONE;
	f->step_id = f->task_id = f->ntasks = f->local_id = f->local_ntasks = MAD_NONE;
	f->node_tasks = f->inherited_nproc = f->resv_port = MAD_NONE;
	f->uid = MAD_NONE;
	f->gpus = -1;
	f->gres_gpus = f->visible_gpus = -1;
}

/* Whether NAME is set by the user or the site: present, and not the value
 * an enclosing mad job set (MAD_ENV_FROM set and equal to its MAD_IFNAME:
 * --mad-socket-ifname=auto in the batch step, inherited by its srun steps, must
 * not stop each node choosing its own). */
static int user_ifname(mad_getenv_fn getenv_fn, void *ctx, const char *name)
{
	char v[256], mad[256], from[16];

	if (getenv_fn(ctx, name, v, sizeof(v)) == 0)
		return 0;
	return getenv_fn(ctx, "MAD_ENV_FROM", from, sizeof(from)) == 0 ||
	       getenv_fn(ctx, "MAD_IFNAME", mad, sizeof(mad)) != 1 || strcmp(v, mad);
}

void mad_facts_nccl_conf(struct mad_facts *f, const struct mad_options *o, mad_getenv_fn getenv_fn,
			 void *ctx, int etc_only)
{
	struct mad_ncclconf_files files = { NULL, NULL, NULL, f->uid, etc_only };
	char conf[1024], home[1024], value[8];

	f->nccl_conf[0] = '\0';
	if (!strcmp(o->value[MAD_OPT_SOCKET_IFNAME], "keep") || f->user_nccl_ifname)
		return;
	if (getenv_fn(ctx, "NCCL_CONF_FILE", conf, sizeof(conf)) == 1)
		files.conf_file = conf;
	if (getenv_fn(ctx, "HOME", home, sizeof(home)) == 1)
		files.home = home;
	if (mad_ncclconf_lookup(&files, "NCCL_SOCKET_IFNAME", value, sizeof(value), f->nccl_conf,
				sizeof(f->nccl_conf)) != 1 ||
	    strlen(value) <= 1)
		f->nccl_conf[0] = '\0';
}

long mad_parse_long(const char *s)
{
	long n;

	return mad_decimal(s, 0, LONG_MAX, &n) ? MAD_NONE : n;
}

long mad_tasks_on_node(const char *spec, long index)
{
	const char *p = spec;

	if (!spec || index < 0)
		return MAD_NONE;
	while (*p) {
		uint64_t count, repeat = 1;
		size_t n = mad_decimal_len(p);

		if (mad_decimal_span(p, n, 0, LONG_MAX, &count))
			return MAD_NONE;
		p += n;
		if (*p == '(') {
			if (p[1] != 'x')
				return MAD_NONE;
			n = mad_decimal_len(p + 2);
			if (mad_decimal_span(p + 2, n, 1, LONG_MAX, &repeat) || p[2 + n] != ')')
				return MAD_NONE;
			p += 2 + n + 1;
		}
		if ((uint64_t)index < repeat)
			return (long)count;
		index -= (long)repeat;
		if (*p == ',')
			p++;
		else if (*p)
			return MAD_NONE;
	}
	return MAD_NONE;
}

static long env_long(mad_getenv_fn getenv_fn, void *ctx, const char *name)
{
	char buf[32];

	return getenv_fn(ctx, name, buf, sizeof(buf)) == 1 ? mad_parse_long(buf) : MAD_NONE;
}

/* NAME, or spur's SPUR_NAME where NAME is absent: spur's multi-task --mpi=pmix launch unsets
 * SLURM's per-task names in each task and keeps spur's (design.md §9) */
static long env_long_or_spur(mad_getenv_fn getenv_fn, void *ctx, const char *name, const char *spur_name)
{
	long n = env_long(getenv_fn, ctx, name);

	return n == MAD_NONE ? env_long(getenv_fn, ctx, spur_name) : n;
}

/* This node's count in a tasks-per-node variable. */
static long env_tasks_on_node(mad_getenv_fn getenv_fn, void *ctx, const char *name, long index)
{
	char buf[1024];

	if (getenv_fn(ctx, name, buf, sizeof(buf)) != 1)
		return MAD_NONE;
	return mad_tasks_on_node(buf, index);
}

/* A spur step's tasks on this node.  spur names no per-node count for a
 * step: its multi-task wrapper keeps it in an unexported shell variable
 * (crates/spur-core/src/task_launch.rs@4cc3da8 build_multi_task_wrapper,
 * _TASKS_ON_NODE), and SPUR_TASKS_PER_NODE is the batch script's, which
 * its steps inherit (spurd agent_server.rs launch_job).  The controller
 * plans a step's tasks by block (crates/spur-core/src/step.rs
 * distribute_tasks: N tasks over M nodes, N/M each and one more on the
 * first N%M), so the count follows from the step's tasks and nodes; the
 * inherited count only where those are unknown. */
static long spur_step_tasks_here(const struct mad_facts *f, mad_getenv_fn getenv_fn, void *ctx, long here)
{
	if (f->ntasks > 0 && f->nnodes > 0 && here >= 0 && here < f->nnodes)
		return f->ntasks / f->nnodes + (here < f->ntasks % f->nnodes);
	return env_long(getenv_fn, ctx, "SPUR_TASKS_PER_NODE");
}

void mad_facts_from_env(struct mad_facts *f, mad_getenv_fn getenv_fn, void *ctx, char *nodelist,
			size_t size)
{
	char buf[64];
	long here, nnodes;

	mad_facts_init(f);
	f->has_spur_job_id = getenv_fn(ctx, "SPUR_JOB_ID", buf, sizeof(buf)) != 0;
	f->step_id = env_long(getenv_fn, ctx, "SLURM_STEP_ID");
	f->job_id = env_long(getenv_fn, ctx, "SLURM_JOB_ID");
	f->node_id = env_long_or_spur(getenv_fn, ctx, "SLURM_NODEID", "SPUR_NODEID");
	if (f->node_id == MAD_NONE)
		f->node_id = env_long(getenv_fn, ctx, "SPUR_NODE_RANK");
	f->nnodes = env_long(getenv_fn, ctx, "SLURM_NNODES");
	f->job_nnodes = env_long(getenv_fn, ctx, "SLURM_JOB_NUM_NODES");
	/* SLURM runs a batch script on the first node only; spur on each node */
	f->batch_step = f->step_id == MAD_NONE && !f->has_spur_job_id;
	f->array_job_id = env_long(getenv_fn, ctx, "SLURM_ARRAY_JOB_ID");
	f->array_task_id = env_long(getenv_fn, ctx, "SLURM_ARRAY_TASK_ID");
	f->array_task_min = env_long(getenv_fn, ctx, "SLURM_ARRAY_TASK_MIN");
	f->array_task_count = env_long(getenv_fn, ctx, "SLURM_ARRAY_TASK_COUNT");
	f->restart_count = env_long(getenv_fn, ctx, "SLURM_RESTART_COUNT");
	if (getenv_fn(ctx, "SLURM_CLUSTER_NAME", f->cluster, sizeof(f->cluster)) != 1)
		f->cluster[0] = '\0';
	here = f->node_id == MAD_NONE || f->batch_step ? 0 : f->node_id;
	if (f->step_id != MAD_NONE) {
		/* in an srun step the task env is the step's, but srun -E keeps
		 * the job's SLURM_NNODES and SLURM_NTASKS: the STEP_ names are
		 * always the step's (slurmstepd sets them from its layout) */
		nnodes = env_long(getenv_fn, ctx, "SLURM_STEP_NUM_NODES");
		if (nnodes != MAD_NONE)
			f->nnodes = nnodes;
		f->task_id = env_long_or_spur(getenv_fn, ctx, "SLURM_PROCID", "SPUR_PROCID");
		f->ntasks = env_long(getenv_fn, ctx, "SLURM_STEP_NUM_TASKS");
		if (f->ntasks == MAD_NONE)
			f->ntasks = env_long(getenv_fn, ctx, "SLURM_NTASKS");
		f->local_id = env_long_or_spur(getenv_fn, ctx, "SLURM_LOCALID", "SPUR_LOCALID");
		f->local_ntasks = env_tasks_on_node(getenv_fn, ctx, "SLURM_STEP_TASKS_PER_NODE", here);
		if (f->local_ntasks == MAD_NONE && f->has_spur_job_id)
			f->local_ntasks = spur_step_tasks_here(f, getenv_fn, ctx, here);
		if (getenv_fn(ctx, "SLURM_STEP_RESV_PORTS", buf, sizeof(buf)) == 1)
			f->resv_port = mad_resv_ports_first(buf);
		f->node_tasks = f->local_ntasks;
		if (getenv_fn(ctx, "SLURM_DISTRIBUTION", f->layout, sizeof(f->layout)) != 1)
			f->layout[0] = '\0';
		f->layout_arbitrary = strncmp(f->layout, "arbitrary", 9) == 0;
	} else {
		/* the batch script (or spur's per-node one): the allocation's */
		f->node_tasks = env_tasks_on_node(getenv_fn, ctx, "SLURM_TASKS_PER_NODE", here);
	}
	if (mad_env_origin(getenv_fn, ctx) == MAD_ENV_OWN_JOB)
		f->inherited_nproc = env_long(getenv_fn, ctx, "MAD_NPROC_PER_NODE");
	f->gpus = mad_gpus_detect(getenv_fn, ctx, "", &f->gpus_from);
	if (getenv_fn(ctx, "NCCL_SOCKET_IFNAME", f->nccl_ifnames, sizeof(f->nccl_ifnames)) != 1)
		f->nccl_ifnames[0] = '\0';
	f->user_nccl_ifname = user_ifname(getenv_fn, ctx, "NCCL_SOCKET_IFNAME");
	f->user_gloo_ifname = user_ifname(getenv_fn, ctx, "GLOO_SOCKET_IFNAME");
	/* a task's own devices, after SLURM's per-task binding: slurmstepd's
	 * exec_task (src/slurmd/slurmstepd/task.c) calls gres_g_task_set_env
	 * before spank_user_task, so SPANK's task_init reads them too */
	f->gres_gpus = mad_gpus_of_step(getenv_fn, ctx, &(const char *){ NULL }, &f->gres_var);
	f->visible_gpus = mad_gpus_visible(getenv_fn, ctx, f->visible_list, sizeof(f->visible_list),
					   &f->visible_var);
	if ((f->batch_step || getenv_fn(ctx, "SLURM_STEP_NODELIST", nodelist, size) != 1) &&
	    getenv_fn(ctx, "SLURM_JOB_NODELIST", nodelist, size) != 1)
		nodelist[0] = '\0';
	f->nodelist = nodelist;
}
