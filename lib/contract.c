/* contract.c: see contract.h. */
#include "contract.h"
#include "hostlist.h"
#include "netaddr.h"
#include "rendezvous.h"

#include <unistd.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mad_facts_init(struct mad_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->job_id = f->array_job_id = f->array_task_id = MAD_NONE;
	f->array_task_min = f->array_task_count = MAD_NONE;
	f->node_id = f->nnodes = f->job_nnodes = f->restart_count = MAD_NONE;
}

static long env_long(mad_getenv_fn getenv_fn, void *ctx, const char *name)
{
	char buf[32];

	return getenv_fn(ctx, name, buf, sizeof(buf)) == 1 ? mad_parse_long(buf) : MAD_NONE;
}

void mad_facts_from_env(struct mad_facts *f, mad_getenv_fn getenv_fn, void *ctx,
			char *nodelist, size_t size)
{
	char buf[32];
	int in_step;

	mad_facts_init(f);
	f->has_spur_job_id = getenv_fn(ctx, "SPUR_JOB_ID", buf, sizeof(buf)) != 0;
	in_step = getenv_fn(ctx, "SLURM_STEP_ID", buf, sizeof(buf)) != 0;
	f->job_id = env_long(getenv_fn, ctx, "SLURM_JOB_ID");
	f->node_id = env_long(getenv_fn, ctx, "SLURM_NODEID");
	if (f->node_id == MAD_NONE)
		f->node_id = env_long(getenv_fn, ctx, "SPUR_NODE_RANK");
	f->nnodes = env_long(getenv_fn, ctx, "SLURM_NNODES");
	f->job_nnodes = env_long(getenv_fn, ctx, "SLURM_JOB_NUM_NODES");
	/* SLURM runs a batch script on the first node only; spur on each node */
	f->batch_step = !in_step && !f->has_spur_job_id;
	f->array_job_id = env_long(getenv_fn, ctx, "SLURM_ARRAY_JOB_ID");
	f->array_task_id = env_long(getenv_fn, ctx, "SLURM_ARRAY_TASK_ID");
	f->array_task_min = env_long(getenv_fn, ctx, "SLURM_ARRAY_TASK_MIN");
	f->array_task_count = env_long(getenv_fn, ctx, "SLURM_ARRAY_TASK_COUNT");
	f->restart_count = env_long(getenv_fn, ctx, "SLURM_RESTART_COUNT");
	if ((f->batch_step || getenv_fn(ctx, "SLURM_STEP_NODELIST", nodelist, size) != 1) &&
	    getenv_fn(ctx, "SLURM_JOB_NODELIST", nodelist, size) != 1)
		nodelist[0] = '\0';
	f->nodelist = nodelist;
}

int mad_process_getenv(void *ctx, const char *name, char *buf, size_t size)
{
	const char *v = getenv(name);

	(void)ctx;
	if (!v)
		return 0;
	if (strlen(v) >= size)
		return -1;
	strcpy(buf, v);
	return 1;
}

int mad_job_from_env(struct mad_options *opts, struct mad_facts *facts,
		     struct mad_contract *c, char *nodelist, size_t nsize,
		     int ac, char *const av[], char *err, size_t size)
{
	int bad = mad_options_resolve(opts, NULL, mad_process_getenv, NULL, ac, av, err, size);

	if (bad && mad_options_model_asked(NULL, mad_process_getenv, NULL, ac, av))
		return -1;
	if (bad || !*opts->value[OPT_MODEL]) {
		snprintf(err, size, "no model: this is not a mad job (set MAD_MODEL or --mad-model)");
		return 1;
	}
	mad_facts_from_env(facts, mad_process_getenv, NULL, nodelist, nsize);
	return mad_contract_compute(opts, facts, c, err, size) ? -1 : 0;
}

long mad_parse_long(const char *s)
{
	char *end;
	long n;

	if (!s || *s < '0' || *s > '9')
		return MAD_NONE;
	errno = 0;
	n = strtol(s, &end, 10);
	return errno || *end ? MAD_NONE : n;
}

static int explicit(const struct mad_options *o, enum mad_opt opt)
{
	return o->source[opt] != SRC_DEFAULT && o->source[opt] != SRC_NONE &&
	       strcmp(o->value[opt], "auto") != 0;
}

/* Rank 0's node: the first of the node list, resolved to an address. */
static int nodes_master(const struct mad_facts *f, struct mad_contract *c,
			char *err, size_t size)
{
	struct hostlist *hl;
	struct hl_error herr = { "", 0 };

	if (!f->nodelist || !*f->nodelist) {
		snprintf(err, size, "no node list in the job environment (SLURM_JOB_NODELIST): cannot tell rank 0's node");
		return -1;
	}
	if (hostlist_parse(f->nodelist, strlen(f->nodelist), &hl, &herr)) {
		snprintf(err, size, "bad node list in the job environment: %s", herr.msg);
		return -1;
	}
	if (hostlist_nth(hl, 0, c->master_host, sizeof(c->master_host)) < 0) {
		hostlist_free(hl);
		snprintf(err, size, "rank 0's node name is too long");
		return -1;
	}
	hostlist_free(hl);
	return mad_resolve_ipv4(c->master_host, c->master_addr,
				sizeof(c->master_addr), err, size);
}

static int nodes_fanout(const struct mad_facts *f, struct mad_contract *c,
			char *err, size_t size)
{
	if (f->job_id == MAD_NONE) {
		snprintf(err, size, "no job id (SLURM_JOB_ID) in the job environment");
		return -1;
	}
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
	if (c->rank == MAD_NONE || c->nnodes == MAD_NONE || c->nnodes < 1) {
		snprintf(err, size, "cannot tell this node's rank and the node count from the job environment (SLURM_NODEID, SLURM_JOB_NUM_NODES)");
		return -1;
	}
	if (c->rank >= c->nnodes) {
		snprintf(err, size, "node rank %ld is not below the node count %ld", c->rank, c->nnodes);
		return -1;
	}
	/* SLURM runs the batch script on the first node only; spur on all. */
	c->markers_expected = strcmp(c->scheduler, "spur") == 0 ? c->nnodes : 1;
	return nodes_master(f, c, err, size);
}

static int array_fanout(const struct mad_options *o, const struct mad_facts *f,
			struct mad_contract *c, char *err, size_t size)
{
	if (f->array_task_id == MAD_NONE || f->array_job_id == MAD_NONE) {
		snprintf(err, size, "--mad-fanout=array: this job is not a job array task (no SLURM_ARRAY_TASK_ID)");
		return -1;
	}
	if (!*o->value[OPT_RUN_DIR]) {
		snprintf(err, size, "--mad-fanout=array needs --mad-run-dir, a folder all nodes share, for rank 0 to publish its address");
		return -1;
	}
	c->collect_job_id = f->array_job_id;
	c->rank = f->array_task_id - (f->array_task_min == MAD_NONE ? 0 : f->array_task_min);
	c->nnodes = *o->value[OPT_NNODES] ? atol(o->value[OPT_NNODES]) : f->array_task_count;
	if (c->nnodes == MAD_NONE) {
		snprintf(err, size, "--mad-fanout=array: the node count is unknown: give --mad-nnodes (no SLURM_ARRAY_TASK_COUNT)");
		return -1;
	}
	if (c->rank < 0 || c->rank >= c->nnodes) {
		snprintf(err, size, "array task %ld is rank %ld, outside 0..%ld (--mad-nnodes or the array size)",
			 f->array_task_id, c->rank, c->nnodes - 1);
		return -1;
	}
	c->markers_expected = c->nnodes;
	return 0;
}

int mad_contract_compute(const struct mad_options *o,
			 const struct mad_facts *f, struct mad_contract *c,
			 char *err, size_t size)
{
	memset(c, 0, sizeof(*c));
	if (explicit(o, OPT_SCHEDULER))
		c->scheduler = strcmp(o->value[OPT_SCHEDULER], "spur") ? "slurm" : "spur";
	else
		c->scheduler = f->host_lacks_options || f->has_spur_job_id ? "spur" : "slurm";
	if (explicit(o, OPT_FANOUT))
		c->fanout = strcmp(o->value[OPT_FANOUT], "array") ? "nodes" : "array";
	else
		c->fanout = strcmp(c->scheduler, "spur") == 0 &&
			    f->array_task_id != MAD_NONE ? "array" : "nodes";
	c->timeout = atol(o->value[OPT_TIMEOUT]);
	snprintf(c->run_dir, sizeof(c->run_dir), "%s", o->value[OPT_RUN_DIR]);

	if (strcmp(c->fanout, "array") == 0 ? array_fanout(o, f, c, err, size) :
	    nodes_fanout(f, c, err, size))
		return -1;

	if (strcmp(o->value[OPT_MASTER_PORT], "auto") == 0)
		c->master_port = 20000 + c->collect_job_id % 10000; /* below the ephemeral range */
	else
		c->master_port = atol(o->value[OPT_MASTER_PORT]);
	if (*c->run_dir) {
		if (f->restart_count > 0)
			snprintf(c->job_dir, sizeof(c->job_dir), "%s/%ld.%ld", c->run_dir,
				 c->collect_job_id, f->restart_count);
		else
			snprintf(c->job_dir, sizeof(c->job_dir), "%s/%ld", c->run_dir,
				 c->collect_job_id);
	}
	return 0;
}

int mad_contract_rendezvous(const struct mad_options *o, struct mad_contract *c,
			    const char *nccl_ifnames, int wait, char *err,
			    size_t size)
{
	struct mad_rdzv r;
	int rc;

	if (mad_job_dir_make(c->run_dir, c->job_dir, err, size))
		return -1;
	if (c->rank == 0) {
		memset(&r, 0, sizeof(r));
		if (mad_local_ipv4(o->value[OPT_IFACE], nccl_ifnames, r.addr,
				   sizeof(r.addr), err, size))
			return -1;
		gethostname(r.host, sizeof(r.host) - 1);
		r.port = c->master_port;
		r.job_id = c->collect_job_id;
		r.nnodes = c->nnodes;
		if (mad_rdzv_publish(c->job_dir, &r, err, size))
			return -1;
	} else if (!wait) {
		rc = mad_rdzv_read(c->job_dir, &r, err, size);
		if (rc < 0)
			return -1;
		if (rc == 0 || r.job_id != c->collect_job_id)
			return 1;
	} else if (mad_rdzv_wait(c->job_dir, c->collect_job_id, c->rank, c->timeout,
				 &r, err, size)) {
		return -1;
	}
	snprintf(c->master_addr, sizeof(c->master_addr), "%s", r.addr);
	return 0;
}

int mad_contract_export(const struct mad_options *o,
			const struct mad_contract *c, const char *env_from,
			mad_setenv_fn set, void *ctx)
{
	char rank[24], nnodes[24], port[24], collect[24];
	int rc = 0;

	snprintf(rank, sizeof(rank), "%ld", c->rank);
	snprintf(nnodes, sizeof(nnodes), "%ld", c->nnodes);
	snprintf(port, sizeof(port), "%ld", c->master_port);
	snprintf(collect, sizeof(collect), "%ld", c->collect_job_id);
	rc |= set(ctx, "MAD_MODEL", o->value[OPT_MODEL]);
	rc |= set(ctx, "MAD_SCHEDULER", c->scheduler);
	rc |= set(ctx, "MAD_FANOUT", c->fanout);
	rc |= set(ctx, "NODE_RANK", rank);
	rc |= set(ctx, "MAD_NODE_RANK", rank);
	rc |= set(ctx, "RANK", rank);
	rc |= set(ctx, "NNODES", nnodes);
	rc |= set(ctx, "MAD_TOTAL_NODES", nnodes);
	rc |= set(ctx, "WORLD_SIZE", nnodes);
	if (*c->master_addr)
		rc |= set(ctx, "MASTER_ADDR", c->master_addr);
	rc |= set(ctx, "MASTER_PORT", port);
	rc |= set(ctx, "MAD_COLLECT_JOB_ID", collect);
	if (*c->run_dir) {
		rc |= set(ctx, "MAD_RUN_DIR", c->run_dir);
		rc |= set(ctx, "MAD_JOB_DIR", c->job_dir);
	}
	rc |= set(ctx, "MAD_ENV_FROM", env_from);
	return rc ? -1 : 0;
}
