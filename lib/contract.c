/* SPDX-License-Identifier: GPL-2.0-or-later */
/* contract.c: see contract.h. */
#include "contract.h"
#include "clock.h"
#include "error.h"
#include "gpus.h"
#include "hostlist.h"
#include "netaddr.h"
#include "rendezvous.h"
#include "run.h"

#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int given(const struct mad_options *o, enum mad_opt opt)
{
	return o->source[opt] != MAD_SRC_DEFAULT && o->source[opt] != MAD_SRC_NONE;
}

static void this_host(char *out, size_t size)
{
	if (gethostname(out, size - 1))
		snprintf(out, size, "this node");
	out[size - 1] = '\0';
}

/* Rank 0's node: the first of the node list (plus --mad-addr-suffix),
 * resolved.  A loopback answer (Debian's "127.0.1.1 host" line) would send
 * every peer to itself: rank 0's own node then gives its own address, and
 * any other node fails, naming what the name resolved to. */
static int nodes_master(const struct mad_options *o, const struct mad_facts *f,
			struct mad_contract *c, char *err, size_t size)
{
	struct hostlist *hl;
	struct hl_error herr = { "", 0 };
	char name[320], here[256];

	if (!f->nodelist || !*f->nodelist)
		return mad_error(err, size,
				 "no node list in the job environment (SLURM_JOB_NODELIST): cannot tell rank 0's node");
	if (hostlist_parse(f->nodelist, strlen(f->nodelist), &hl, &herr))
		return mad_error(err, size, "bad node list in the job environment: %s", herr.msg);
	if (hostlist_nth(hl, 0, c->master_host, sizeof(c->master_host)) < 0) {
		hostlist_free(hl);
		return mad_error(err, size, "rank 0's node name is too long");
	}
	hostlist_free(hl);
	if (snprintf(name, sizeof(name), "%s%s", c->master_host, o->value[MAD_OPT_ADDR_SUFFIX]) >=
	    (int)sizeof(name))
		return mad_error(err, size, "rank 0's node name and --mad-addr-suffix are too long");
	if (mad_resolve_addr(name, c->master_addr, sizeof(c->master_addr), err, size))
		return -1;
	snprintf(c->addr_from, sizeof(c->addr_from), "%s (rank 0's node %s, resolved)",
		 c->facts_from, name);
	if (!mad_addr_is_loopback(c->master_addr) || c->nnodes == 1)
		return 0;
	if (c->rank == 0) {
		char loop[MAD_ADDR_MAX];

		snprintf(loop, sizeof(loop), "%s", c->master_addr);
		if (mad_local_addr(NULL, f->nccl_ifnames, c->master_addr, sizeof(c->master_addr),
				   err, size))
			return -1;
		snprintf(c->addr_from, sizeof(c->addr_from),
			 "computed (rank 0's own address: %s resolves to loopback %s here)", name,
			 loop);
		return 0;
	}
	this_host(here, sizeof(here));
	return mad_error(err, size,
			 "rank 0's node '%s' resolves to the loopback address %s on %s (node rank %ld): peers cannot reach rank 0 there; fix the name service (/etc/hosts), or set --mad-addr-suffix or --mad-iface",
			 name, c->master_addr, here, c->rank);
}

static int nodes_fanout(const struct mad_facts *f, struct mad_contract *c, char *err, size_t size)
{
	if (f->job_id == MAD_NONE)
		return mad_error(err, size, "no job id (SLURM_JOB_ID) in the job environment");
	c->collect_job_id = f->job_id;
	if (f->batch_step || f->node_id == MAD_NONE || f->nnodes <= 0) {
		/* SLURM's batch step reports 0 nodes: the script runs on the
		 * job's first node, rank 0 of SLURM_JOB_NUM_NODES. */
		c->rank = f->batch_step ? 0 : f->node_id;
		c->nnodes = f->job_nnodes;
	} else {
		c->rank = f->node_id;
		c->nnodes = f->nnodes;
	}
	if (c->rank == MAD_NONE || c->nnodes == MAD_NONE || c->nnodes < 1)
		return mad_error(err, size,
				 "cannot tell this node's rank and the node count from the job environment (SLURM_NODEID, SLURM_JOB_NUM_NODES)");
	if (c->rank >= c->nnodes)
		return mad_error(err, size, "node rank %ld is not below the node count %ld",
				 c->rank, c->nnodes);
	/* SLURM runs the batch script on the first node only; spur on all. */
	c->markers_expected = c->scheduler == MAD_SCHED_SPUR ? c->nnodes : 1;
	/* Every task of an srun step knows its global id: tasks per node
	 * may differ between nodes. */
	if (!f->batch_step && f->task_id != MAD_NONE && f->ntasks > 0) {
		c->task_facts = 1;
		c->task_rank = f->task_id;
		c->world_size = f->ntasks;
		c->local_rank = f->local_id == MAD_NONE ? 0 : f->local_id;
		c->local_world_size = f->local_ntasks > 0 ? f->local_ntasks : 1;
	}
	return 0;
}

static int array_fanout(const struct mad_options *o, const struct mad_facts *f,
			struct mad_contract *c, char *err, size_t size)
{
	long tpn = 1, local = 0;

	if (f->array_task_id == MAD_NONE || f->array_job_id == MAD_NONE)
		return mad_error(err, size,
				 "--mad-fanout=array: this job is not a job array task (no SLURM_ARRAY_TASK_ID)");
	if (!*o->value[MAD_OPT_RUN_DIR])
		return mad_error(err, size,
				 "--mad-fanout=array needs --mad-run-dir, a folder all nodes share, for rank 0 to publish its address");
	c->collect_job_id = f->array_job_id;
	c->rank = f->array_task_id - (f->array_task_min == MAD_NONE ? 0 : f->array_task_min);
	c->nnodes = *o->value[MAD_OPT_NNODES] ? atol(o->value[MAD_OPT_NNODES]) : f->array_task_count;
	if (c->nnodes == MAD_NONE)
		return mad_error(err, size,
				 "--mad-fanout=array: the node count is unknown: give --mad-nnodes (no SLURM_ARRAY_TASK_COUNT)");
	if (c->rank < 0 || c->rank >= c->nnodes)
		return mad_error(err, size,
				 "array task %ld is rank %ld, outside 0..%ld (--mad-nnodes or the array size)",
				 f->array_task_id, c->rank, c->nnodes - 1);
	c->markers_expected = c->nnodes;
	c->needs_rendezvous = 1;
	/* An srun step inside an array task: its tasks are this node's
	 * processes, and every array task must have as many (the peers
	 * check rank 0's count in the rendezvous record). */
	if (!f->batch_step && f->task_id != MAD_NONE && f->local_ntasks > 0) {
		if (f->ntasks > 0 && f->ntasks != f->local_ntasks)
			return mad_error(err, size,
					 "--mad-fanout=array: this step has %ld tasks, %ld of them on this node: array fan-out wants each array task's step on one node (use --mad-fanout=nodes for a multi-node step)",
					 f->ntasks, f->local_ntasks);
		tpn = f->local_ntasks;
		local = f->local_id == MAD_NONE ? 0 : f->local_id;
		c->task_facts = 1;
	}
	c->task_rank = c->rank * tpn + local;
	c->world_size = c->nnodes * tpn;
	c->local_rank = local;
	c->local_world_size = tpn;
	return 0;
}

/* auto: the step's reserved port (MpiParams=ports= with --resv-ports),
 * else one derived from the job and step ids, in 20000..28999: below the
 * kernel's ephemeral ports (32768 up) and clear of torch's 29500, and
 * distinct for 64 steps of each of 140 consecutive jobs on a node. */
static void choose_port(const struct mad_options *o, const struct mad_facts *f, struct mad_contract *c)
{
	long slot;

	if (strcmp(o->value[MAD_OPT_MASTER_PORT], "auto")) {
		c->master_port = atol(o->value[MAD_OPT_MASTER_PORT]);
		snprintf(c->port_from, sizeof(c->port_from), "%s",
			 mad_source_name(o->source[MAD_OPT_MASTER_PORT]));
		return;
	}
	if (f->resv_port > 0) {
		c->master_port = f->resv_port;
		snprintf(c->port_from, sizeof(c->port_from), "SLURM (auto: SLURM_STEP_RESV_PORTS)");
		return;
	}
	slot = c->step_id == MAD_NONE ? 0 : (c->step_id + 1) % 64;
	c->master_port = 20000 + (c->collect_job_id % 100000 * 64 + slot) % 9000;
	if (c->step_id == MAD_NONE)
		snprintf(c->port_from, sizeof(c->port_from), "%s (auto: from job %ld)",
			 mad_source_name(o->source[MAD_OPT_MASTER_PORT]), c->collect_job_id);
	else
		snprintf(c->port_from, sizeof(c->port_from), "%s (auto: from job %ld, step %ld)",
			 mad_source_name(o->source[MAD_OPT_MASTER_PORT]), c->collect_job_id,
			 c->step_id);
}

static int choose_nproc(const struct mad_options *o, const struct mad_facts *f,
			struct mad_contract *c, char *err, size_t size)
{
	const char *v = o->value[MAD_OPT_NPROC_PER_NODE];

	if (strcmp(v, "auto") && strcmp(v, "gpu")) {
		c->nproc = atol(v);
		snprintf(c->nproc_from, sizeof(c->nproc_from), "%s",
			 mad_source_name(o->source[MAD_OPT_NPROC_PER_NODE]));
	} else if (!strcmp(v, "gpu") || (f->node_tasks <= 1 && f->inherited_nproc <= 0)) {
		if (c->gpus > 0) {
			c->nproc = c->gpus;
			snprintf(c->nproc_from, sizeof(c->nproc_from), "computed (GPUs per node)");
		} else if (!strcmp(v, "gpu")) {
			return mad_error(err, size,
					 "--mad-nproc-per-node=gpu: no GPUs found on this node (SLURM_GPUS_ON_NODE, ROCR_/HIP_/CUDA_VISIBLE_DEVICES, /dev/kfd, /dev/nvidia*)");
		} else {
			c->nproc = 1;
			snprintf(c->nproc_from, sizeof(c->nproc_from),
				 "default (one task, no GPU found)");
		}
	} else if (f->node_tasks > 1) {
		c->nproc = f->node_tasks;
		snprintf(c->nproc_from, sizeof(c->nproc_from), "computed (tasks per node)");
	} else {
		c->nproc = f->inherited_nproc;
		snprintf(c->nproc_from, sizeof(c->nproc_from), "computed (this job's batch step)");
	}
	return 0;
}

/* MAD_LOCAL_DEVICE (design.md §7): among the devices this task sees (its
 * visible list, else every GPU of the node when nothing hides any), the
 * one it should use: mad_local_device()'s rule. */
static void choose_device(const struct mad_options *o, const struct mad_facts *f,
			  struct mad_contract *c)
{
	const long step_gpus = f->visible_gpus >= 0 ? f->gres_gpus : -1;
	const char *how;
	char step[48] = "";

	c->gpu_strict = strcmp(o->value[MAD_OPT_GPU_BIND], "strict") == 0;
	c->device = c->visible = -1;
	if (f->visible_gpus >= 0) {
		c->visible = f->visible_gpus;
		snprintf(c->visible_desc, sizeof(c->visible_desc), "%s=%.120s", f->visible_var,
			 f->visible_list);
	} else if (f->gpus > 0) {
		c->visible = f->gpus;
		snprintf(c->visible_desc, sizeof(c->visible_desc),
			 "no visible-device list: %ld GPUs, %s", f->gpus, f->gpus_from);
	}
	c->device = mad_local_device(c->visible, step_gpus, c->local_rank, c->local_world_size, &how);
	if (c->device < 0) {
		snprintf(c->device_from, sizeof(c->device_from), "unset (this task sees no GPU)");
		return;
	}
	/* An agent's task (torchrun, deepspeed: one task starting the node's
	 * processes, each with its own LOCAL_RANK) hands its environment to
	 * all of them; one device there would put every worker on it.  It is
	 * an agent's when the node's processes outnumber its tasks and it
	 * sees a GPU for each of its share, and only its share: the node's
	 * one task, or SLURM bound each task its own (T x V at most the step's
	 * GPUs).  Then each worker's LOCAL_RANK is its device.  A task SLURM
	 * bound to fewer keeps its device, and its warning; several agents
	 * that all see every GPU would each put their workers on the first
	 * ones, so no rule of one task's is right there, and it keeps
	 * LOCAL_RANK's as before (design.md §7). */
	if (c->nproc > c->local_world_size && c->visible * c->local_world_size >= c->nproc &&
	    (c->local_world_size == 1 ||
	     (step_gpus >= 0 && c->visible * c->local_world_size <= step_gpus))) {
		snprintf(c->device_from, sizeof(c->device_from),
			 "unset (an agent's task: MAD_NPROC_PER_NODE=%ld processes on %ld task%s a node, %s; each takes its LOCAL_RANK)",
			 c->nproc, c->local_world_size, c->local_world_size == 1 ? "" : "s",
			 c->visible_desc);
		c->device = -1;
		return;
	}
	if (f->gres_gpus >= 0)
		snprintf(step, sizeof(step), ", %s=%ld",
			 f->gres_var ? f->gres_var : "SLURM_GPUS_ON_NODE", f->gres_gpus);
	snprintf(c->device_from, sizeof(c->device_from), "computed (%s; %s%s, LOCAL_RANK=%ld)", how,
		 c->visible_desc, step, c->local_rank);
}

int mad_contract_device_mismatch(const struct mad_contract *c, char *msg, size_t size)
{
	if (!c->process_level || c->device < 0 || c->local_rank < c->visible)
		return 0;
	snprintf(msg, size,
		 "%sLOCAL_RANK=%ld but this task sees %ld GPU%s (%s): set_device(LOCAL_RANK) fails with 'invalid device ordinal'; use MAD_LOCAL_DEVICE=%ld, e.g. torch.cuda.set_device(int(os.environ[\"MAD_LOCAL_DEVICE\"]))%s",
		 c->gpu_strict ? "" : "warning: ", c->local_rank, c->visible,
		 c->visible == 1 ? "" : "s", c->visible_desc, c->device,
		 c->gpu_strict ? " (--mad-gpu-bind=strict)" : "");
	return 1;
}

int mad_contract_ids(const struct mad_options *o, const struct mad_facts *f, struct mad_contract *c,
		     char *err, size_t size)
{
	memset(c, 0, sizeof(*c));
	c->job_dir_fd = -1;
	mad_run_none(&c->run);
	c->facts_from = f->host_lacks_options || f->has_spur_job_id ? "spur" : "SLURM";
	if (o->scheduler != MAD_SCHED_AUTO)
		c->scheduler = o->scheduler;
	else if (f->host_lacks_options || f->has_spur_job_id)
		c->scheduler = MAD_SCHED_SPUR;
	else
		c->scheduler = MAD_SCHED_SLURM;
	if (o->fanout != MAD_FANOUT_AUTO)
		c->fanout = o->fanout;
	else if (c->scheduler == MAD_SCHED_SPUR && f->array_task_id != MAD_NONE)
		c->fanout = MAD_FANOUT_ARRAY;
	else
		c->fanout = MAD_FANOUT_NODES;
	c->timeout = atol(o->value[MAD_OPT_TIMEOUT]);
	c->step_id = f->batch_step ? MAD_NONE : f->step_id;
	snprintf(c->run_dir, sizeof(c->run_dir), "%s", o->value[MAD_OPT_RUN_DIR]);
	c->task_rank = c->world_size = c->local_rank = c->local_world_size = MAD_NONE;

	if (c->fanout == MAD_FANOUT_ARRAY ? array_fanout(o, f, c, err, size) :
					    nodes_fanout(f, c, err, size))
		return -1;
	if (c->task_rank == MAD_NONE) {
		/* one task per node: the process level is the node level */
		c->task_rank = c->rank;
		c->world_size = c->nnodes;
		c->local_rank = 0;
		c->local_world_size = 1;
	}
	/* SLURM's batch script of a multi-node job is one process on the
	 * first node, no task of any world; its steps inherit its env, and on
	 * a node where mad.so did not load they would all be its RANK 0.
	 * Unset there, a consumer fails loudly instead (design §3). */
	c->process_level = !(f->batch_step && c->fanout == MAD_FANOUT_NODES && c->nnodes > 1);
	if (c->task_rank < 0 || c->task_rank >= c->world_size || c->local_rank < 0 ||
	    c->local_rank >= c->local_world_size)
		return mad_error(err, size, "task %ld of %ld (local %ld of %ld) is outside its step",
				 c->task_rank, c->world_size, c->local_rank, c->local_world_size);
	choose_port(o, f, c);
	snprintf(c->nccl_ifnames, sizeof(c->nccl_ifnames), "%s", f->nccl_ifnames);
	c->gpus = f->gpus;
	c->gpus_from = f->gpus_from;
	if (choose_nproc(o, f, c, err, size))
		return -1;
	choose_device(o, f, c);
	c->restart = f->restart_count > 0 ? f->restart_count : 0;
	c->uid = f->uid >= 0 ? (uid_t)f->uid : getuid();
	snprintf(c->cluster, sizeof(c->cluster), "%s", f->cluster);
	if (*c->run_dir) {
		/* the first of the attempt's names (jobdir.h): what it is once opened */
		struct mad_jobdir d;

		if (mad_contract_jobdir(c, &d, err, size))
			return -1;
		snprintf(c->job_dir, sizeof(c->job_dir), "%s", d.base);
	}
	/* one record per step: each step has its own port and task count */
	if (c->step_id == MAD_NONE)
		snprintf(c->record, sizeof(c->record), "rendezvous");
	else
		snprintf(c->record, sizeof(c->record), "rendezvous.%ld", c->step_id);
	if (c->fanout == MAD_FANOUT_NODES && given(o, MAD_OPT_IFACE)) {
		/* only rank 0's node knows its interface's address */
		if (!*c->run_dir)
			return mad_error(err, size,
					 "--mad-iface in nodes fan-out needs --mad-run-dir, a folder all nodes share, where rank 0 publishes its interface's address; or name the network by host name with --mad-addr-suffix");
		c->needs_rendezvous = 1;
	}
	/* srun -m arbitrary places task 0 where its host list says, not on the
	 * step's first node (26.05 src/common/slurm_step_layout.c,
	 * _task_layout_hostfile): task 0 publishes its node's address (§5) */
	if (c->fanout == MAD_FANOUT_NODES && f->layout_arbitrary && c->task_facts &&
	    c->nnodes > 1 && *c->run_dir) {
		c->needs_rendezvous = 1;
		c->task0_publishes = 1;
	}
	return 0;
}

/* The attempt's first name: <job> or, requeued, <job>.<restart>. */
static void base_name(const struct mad_contract *c, char *out, size_t size)
{
	if (c->restart > 0)
		snprintf(out, size, "%ld.%ld", c->collect_job_id, c->restart);
	else
		snprintf(out, size, "%ld", c->collect_job_id);
}

int mad_contract_jobdir(const struct mad_contract *c, struct mad_jobdir *d, char *err, size_t size)
{
	char name[64];

	base_name(c, name, sizeof(name));
	return mad_jobdir_init(d, c->run_dir, name, c->cluster, c->collect_job_id, c->restart,
			       c->uid, err, size);
}

/* Whether this task makes the attempt's folder when there is none yet: one
 * task per attempt does (design.md §15), so nodes that start together never
 * make two; SLURM's batch step in nodes fan-out founds it before anything
 * else runs (the plugin's MAD_JOBDIR_FOUND). */
static int founds_job_dir(const struct mad_contract *c)
{
	if (c->step_id == MAD_NONE)
		return c->rank == 0 && c->local_rank <= 0;
	return c->task_rank == 0;
}

int mad_contract_job_dir(struct mad_contract *c, enum mad_jobdir_mode mode, char *err, size_t size)
{
	struct mad_jobdir d;
	char path[MAD_JOBDIR_PATH];
	int rc, fd = -1;

	if (!*c->run_dir)
		return mad_error(err, size, "no run folder");
	if (mad_contract_jobdir(c, &d, err, size))
		return -1;
	if (mode == MAD_JOBDIR_JOIN && !founds_job_dir(c) && !c->job_dir_waited) {
		/* the founder's folder, waited for within the timeout, which
		 * the rendezvous and the barrier then share */
		double start = mad_monotonic(), delay = 0.02, waited = 0;

		for (;;) {
			rc = mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL,
					     c->job_dir_notes, sizeof(c->job_dir_notes), err, size);
			waited = mad_monotonic() - start;
			if (rc != 1 || waited >= (double)c->timeout)
				break;
			mad_sleep(delay < (double)c->timeout - waited ? delay :
									(double)c->timeout - waited);
			/* as the rendezvous polls: fast while a gang starts, then
			 * at most one look a second */
			delay = delay * 1.5 > (waited > 30 ? 1.0 : 0.2) ? (waited > 30 ? 1.0 : 0.2) :
									  delay * 1.5;
		}
		c->job_dir_waited = 1;
		c->job_dir_wait_s = waited;
		if (rc < 0)
			return -1;
		/* rc 1: the founder never came; a folder of this task's own
		 * keeps its failure (mad-wait reads every folder of the
		 * attempt's identity) */
	}
	rc = mad_jobdir_open(&d, mode, path, sizeof(path), &fd, c->job_dir_notes,
			     sizeof(c->job_dir_notes), err, size);
	if (rc == 0) {
		/* the folder as it was checked: every later file goes through it */
		mad_contract_release(c);
		c->job_dir_fd = fd;
		memcpy(c->job_dir, path, strlen(path) + 1);
	}
	return rc;
}

void mad_contract_release(struct mad_contract *c)
{
	if (c->job_dir_fd >= 0)
		close(c->job_dir_fd);
	c->job_dir_fd = -1;
}

int mad_contract_run_begin(struct mad_contract *c, char *err, size_t size)
{
	char host[256], key[64];
	long start;

	/* not a step's task (spur's steps and pmix launches have a step id) */
	if (c->job_dir_fd < 0 || c->scheduler != MAD_SCHED_SPUR || c->fanout != MAD_FANOUT_NODES ||
	    c->markers_expected < 2 || c->step_id != MAD_NONE)
		return 0;
	this_host(host, sizeof(host));
	if (mad_run_script(key, sizeof(key), &start))
		return mad_error(err, size, "cannot tell this run's job script");
	return mad_run_begin(c->job_dir_fd, c->job_dir, c->rank, c->uid, host, key, start, &c->run,
			     err, size);
}

/* MASTER_ADDR names the step's first node; block, cyclic and plane layouts
 * put task 0 there.  Where SLURM put it elsewhere (-m arbitrary without a
 * run folder, a topology-ordered layout: 26.05 _task_layout_topo), every
 * rank would dial a node where no store listens: task 0, the one task that
 * can tell, fails at once saying so (design §5). */
static int task0_on_master(const struct mad_facts *f, const struct mad_contract *c, char *err,
			   size_t size)
{
	char host[256];

	if (!c->task_facts || c->task_rank != 0 || c->rank == 0)
		return 0;
	this_host(host, sizeof(host));
	/* spur plans a step's tasks over the nodes srun -w/-N chose (spur
	 * #868) but gives each the job's node id, count and list (spurd's
	 * agent_server.rs run_command: its place in the job's list) */
	if (c->scheduler == MAD_SCHED_SPUR)
		return mad_error(err, size,
				 "task 0 runs on %s, node %ld of the job, not on its first node %s that MASTER_ADDR names: spur gives a step on some of the job's nodes (srun -w or -N, spur #868) the job's node ids, not the step's; run the step on every node of the job, or as a job of its own",
				 host, c->rank, c->master_host);
	return mad_error(err, size,
			 "task 0 runs on %s, node %ld of the step, not on its first node %s that MASTER_ADDR names (SLURM_DISTRIBUTION=%s): %s",
			 host, c->rank, c->master_host, *f->layout ? f->layout : "unset",
			 f->layout_arbitrary ?
				 "set --mad-run-dir, a folder all nodes share, where task 0 publishes its address" :
				 "SLURM ordered the nodes by topology; launch with -m cyclic or -m plane=N, or have the site set SelectTypeParameters=CR_NO_DIST_TOPO_BLOCK");
}

int mad_contract_compute(const struct mad_options *o, const struct mad_facts *f,
			 struct mad_contract *c, char *err, size_t size)
{
	if (mad_contract_ids(o, f, c, err, size))
		return -1;
	if (c->fanout == MAD_FANOUT_NODES && !c->needs_rendezvous)
		return nodes_master(o, f, c, err, size) || task0_on_master(f, c, err, size) ? -1 : 0;
	return 0;
}

/* Rank 0's node: its own address on the chosen network. */
static int own_address(const struct mad_options *o, const struct mad_contract *c, const char *nccl,
		       char *out, size_t osize, char *from, size_t fsize, char *err, size_t size)
{
	char host[256], name[320];

	if (*o->value[MAD_OPT_IFACE] || !*o->value[MAD_OPT_ADDR_SUFFIX]) {
		if (mad_local_addr(o->value[MAD_OPT_IFACE], nccl, out, osize, err, size))
			return -1;
		snprintf(from, fsize, "rendezvous (rank 0's %s)",
			 *o->value[MAD_OPT_IFACE] ? "--mad-iface" : "own address");
		return 0;
	}
	this_host(host, sizeof(host));
	if (snprintf(name, sizeof(name), "%s%s", host, o->value[MAD_OPT_ADDR_SUFFIX]) >=
	    (int)sizeof(name))
		return mad_error(err, size, "this host's name and --mad-addr-suffix are too long");
	if (mad_resolve_addr(name, out, osize, err, size))
		return -1;
	if (mad_addr_is_loopback(out) && c->nnodes > 1)
		return mad_error(err, size,
				 "rank 0's name '%s' (--mad-addr-suffix) resolves to the loopback address %s: peers cannot reach it",
				 name, out);
	snprintf(from, fsize, "rendezvous (rank 0's %s, resolved)", name);
	return 0;
}

int mad_contract_rendezvous(const struct mad_options *o, struct mad_contract *c, int wait,
			    char *err, size_t size)
{
	struct mad_rdzv r;
	int rc;

	if (c->job_dir_fd < 0) {
		/* without waiting, a peer only looks for the founder's folder */
		int publishes = c->task0_publishes ? c->task_rank == 0 : c->rank == 0;
		rc = mad_contract_job_dir(c, wait || publishes ? MAD_JOBDIR_JOIN : MAD_JOBDIR_FIND,
					  err, size);
		if (rc)
			return rc;
	}
	if (c->task0_publishes ? c->task_rank == 0 : c->rank == 0) {
		memset(&r, 0, sizeof(r));
		if (own_address(o, c, c->nccl_ifnames, r.addr, sizeof(r.addr), c->addr_from,
				sizeof(c->addr_from), err, size))
			return -1;
		snprintf(c->master_addr, sizeof(c->master_addr), "%s", r.addr);
		if (c->local_rank > 0 && !c->task0_publishes)
			return 0; /* the node's first task publishes */
		this_host(r.host, sizeof(r.host));
		r.port = c->master_port;
		r.job_id = c->collect_job_id;
		r.nnodes = c->nnodes;
		r.tasks_per_node = c->local_world_size;
		return mad_rdzv_publish(c->job_dir_fd, c->job_dir, c->record, &r, err, size);
	}
	if (!wait) {
		rc = mad_rdzv_read(c->job_dir_fd, c->job_dir, c->record, c->uid, &r, err, size);
		if (rc < 0)
			return -1;
		if (rc == 0 || r.job_id != c->collect_job_id)
			return 1;
	} else if (mad_rdzv_wait(c->job_dir_fd, c->job_dir, c->record, c->collect_job_id, c->uid,
				 c->task0_publishes ? c->task_rank : c->rank, c->timeout,
				 c->job_dir_wait_s, &c->run, &r, err, size)) {
		return -1;
	}
	if (c->fanout == MAD_FANOUT_ARRAY && r.tasks_per_node > 0 &&
	    r.tasks_per_node != c->local_world_size)
		return mad_error(err, size,
				 "--mad-fanout=array: this array task (rank %ld) has %ld tasks on its node and rank 0 has %ld: array fan-out needs the same number on every node (use --mad-fanout=nodes for uneven tasks)",
				 c->rank, c->local_world_size, r.tasks_per_node);
	snprintf(c->master_addr, sizeof(c->master_addr), "%s", r.addr);
	snprintf(c->addr_from, sizeof(c->addr_from), "rendezvous (published by %s 0 on %s)",
		 c->task0_publishes ? "task" : "rank", r.host);
	return 0;
}

/* Where an interface of this node stands: usable, or why not. */
static const char *iface_problem(int state)
{
	return state == MAD_IFACE_LOOPBACK ? "is the loopback interface" :
	       state == MAD_IFACE_DOWN     ? "is down" :
					     "is not an interface of this node";
}

int mad_contract_ifname(const struct mad_options *o, const struct mad_facts *f,
			struct mad_contract *c, char *err, size_t size)
{
	const char *opt = o->value[MAD_OPT_SOCKET_IFNAME], *set = NULL;
	char host[256];
	int state;

	c->ifname[0] = c->set_nccl_ifname[0] = c->set_gloo_ifname[0] = c->nccl_conf[0] = '\0';
	if (!*c->master_addr)
		return 0;
	state = mad_route_iface(c->master_addr, c->ifname, sizeof(c->ifname));
	if (state == MAD_IFACE_USABLE)
		snprintf(c->ifname_from, sizeof(c->ifname_from),
			 "computed (this node's route to MASTER_ADDR %s)", c->master_addr);
	else
		c->ifname[0] = '\0'; /* loopback (a one-node job), down, none */
	if (!strcmp(opt, "keep"))
		return 0;
	if (!strcmp(opt, "auto")) {
		set = c->ifname;
	} else {
		state = mad_iface_state(opt);
		if (state != MAD_IFACE_USABLE) {
			this_host(host, sizeof(host));
			return mad_error(err, size, "--mad-socket-ifname=%s: '%s' %s on %s", opt,
					 opt, iface_problem(state), host);
		}
		set = opt;
	}
	/* a value NCCL reads from its own file is the user's or the site's */
	snprintf(c->nccl_conf, sizeof(c->nccl_conf), "%s", f->nccl_conf);
	if (!f->user_nccl_ifname && !*c->nccl_conf)
		snprintf(c->set_nccl_ifname, sizeof(c->set_nccl_ifname), "%.31s", set);
	if (!f->user_gloo_ifname)
		snprintf(c->set_gloo_ifname, sizeof(c->set_gloo_ifname), "%.31s", set);
	return 0;
}

int mad_contract_check_port(const struct mad_contract *c, char *err, size_t size)
{
	char host[256];

	if (c->task_rank != 0)
		return 0;
	this_host(host, sizeof(host));
	return mad_port_check(c->master_port, host, err, size);
}

static const char *option_source(const struct mad_options *o, enum mad_opt opt)
{
	return mad_source_name(o->source[opt]);
}

int mad_contract_export(const struct mad_options *o, const struct mad_contract *c,
			const char *env_from, mad_setenv_fn set, void *ctx)
{
	char num[12][24], task_from[48];
	const long values[] = { c->rank,        c->nnodes,         c->task_rank,
				c->world_size,  c->local_rank,     c->local_world_size,
				c->master_port, c->collect_job_id, c->gpus,
				c->nproc };
	const char *sched_from = o->scheduler != MAD_SCHED_AUTO ? option_source(o, MAD_OPT_SCHEDULER) :
								  "computed (detected)";
	const char *fanout_from =
		o->fanout != MAD_FANOUT_AUTO ? option_source(o, MAD_OPT_FANOUT) : "computed (auto)";
	const char *nnodes_from = c->fanout == MAD_FANOUT_ARRAY && *o->value[MAD_OPT_NNODES] ?
					  option_source(o, MAD_OPT_NNODES) :
					  c->facts_from;
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof(values) / sizeof(*values); i++)
		snprintf(num[i], sizeof(num[i]), "%ld", values[i]);
	snprintf(task_from, sizeof(task_from), "%s", c->task_facts ? c->facts_from : "computed");
	rc |= set(ctx, "MAD_MODEL", o->value[MAD_OPT_MODEL], option_source(o, MAD_OPT_MODEL));
	rc |= set(ctx, "MAD_SCHEDULER", mad_scheduler_name(c->scheduler), sched_from);
	rc |= set(ctx, "MAD_FANOUT", mad_fanout_name(c->fanout), fanout_from);
	rc |= set(ctx, "NODE_RANK", num[0], c->facts_from);
	rc |= set(ctx, "MAD_NODE_RANK", num[0], c->facts_from);
	rc |= set(ctx, "NNODES", num[1], nnodes_from);
	rc |= set(ctx, "MAD_TOTAL_NODES", num[1], nnodes_from);
	if (!c->process_level)
		snprintf(task_from, sizeof(task_from), "unset (batch script of %ld nodes)", c->nnodes);
	rc |= set(ctx, "RANK", c->process_level ? num[2] : NULL, task_from);
	rc |= set(ctx, "WORLD_SIZE", c->process_level ? num[3] : NULL, task_from);
	rc |= set(ctx, "LOCAL_RANK", c->process_level ? num[4] : NULL, task_from);
	rc |= set(ctx, "LOCAL_WORLD_SIZE", c->process_level ? num[5] : NULL, task_from);
	if (*c->master_addr)
		rc |= set(ctx, "MASTER_ADDR", c->master_addr, c->addr_from);
	rc |= set(ctx, "MASTER_PORT", num[6], c->port_from);
	/* The port option, for this job's srun steps, whose environment then
	 * comes from inside a mad job: the user's own MASTER_PORT must reach
	 * them, and a parent job's (inherited by a nested job) must not. */
	rc |= set(ctx, "MAD_MASTER_PORT", o->value[MAD_OPT_MASTER_PORT],
		  option_source(o, MAD_OPT_MASTER_PORT));
	/* facts: where unknown here, unset, so no job or srun step keeps the
	 * value a parent job or its batch step computed on another node */
	rc |= set(ctx, "MAD_GPUS_PER_NODE", c->gpus >= 0 ? num[8] : NULL,
		  c->gpus >= 0 ? c->gpus_from : "unset (no GPU found on this node)");
	rc |= set(ctx, "MAD_NPROC_PER_NODE", num[9], c->nproc_from);
	snprintf(num[10], sizeof(num[10]), "%ld", c->device);
	if (c->device >= 0 && c->process_level)
		rc |= set(ctx, "MAD_LOCAL_DEVICE", num[10], c->device_from);
	else
		rc |= set(ctx, "MAD_LOCAL_DEVICE", NULL,
			  !c->process_level ? task_from : c->device_from);
	if (*c->ifname)
		rc |= set(ctx, "MAD_IFNAME", c->ifname, c->ifname_from);
	else
		rc |= set(ctx, "MAD_IFNAME", NULL,
			  *c->master_addr ?
				  "unset (no interface but loopback, or none up, routes to MASTER_ADDR here)" :
				  "unset (MASTER_ADDR not known yet)");
	{
		char from[96];

		snprintf(from, sizeof(from), "%s (--mad-socket-ifname=%.15s, unset before)",
			 option_source(o, MAD_OPT_SOCKET_IFNAME), o->value[MAD_OPT_SOCKET_IFNAME]);
		if (*c->set_nccl_ifname)
			rc |= set(ctx, "NCCL_SOCKET_IFNAME", c->set_nccl_ifname, from);
		/* the file's value reaches NCCL only with the variable unset: an
		 * enclosing step's own value (mad's, not the user's) gives way */
		if (*c->nccl_conf) {
			char left[sizeof(c->nccl_conf) + 48];

			snprintf(left, sizeof(left), "unset (NCCL reads it from %s)", c->nccl_conf);
			rc |= set(ctx, "NCCL_SOCKET_IFNAME", NULL, left);
		}
		if (*c->set_gloo_ifname)
			rc |= set(ctx, "GLOO_SOCKET_IFNAME", c->set_gloo_ifname, from);
	}
	rc |= set(ctx, "MAD_COLLECT_JOB_ID", num[7], c->facts_from);
	if (*c->run_dir) {
		rc |= set(ctx, "MAD_RUN_DIR", c->run_dir, option_source(o, MAD_OPT_RUN_DIR));
		char from[sizeof(c->job_dir_notes) + 16];

		snprintf(from, sizeof(from), "computed%s%s%s", *c->job_dir_notes ? " (" : "",
			 c->job_dir_notes, *c->job_dir_notes ? ")" : "");
		rc |= set(ctx, "MAD_JOB_DIR", c->job_dir, from);
	}
	rc |= set(ctx, "MAD_ENV_FROM", env_from, "computed");
	return rc ? -1 : 0;
}
