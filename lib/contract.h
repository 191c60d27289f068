/* contract.h: the environment every task of a mad job sees (SPEC §3),
 * computed from the options and the facts of the allocation.  The plugin
 * and mad-env gather the facts their own way and share everything else. */
#ifndef MAD_CONTRACT_H
#define MAD_CONTRACT_H

#include "options.h"

#include <stddef.h>

#define MAD_NONE (-1L)

/* What the scheduler says about this task; MAD_NONE where unknown. */
struct mad_facts {
	int host_lacks_options;     /* SPANK host without spank_option_register */
	int has_spur_job_id;        /* SPUR_JOB_ID in the job env */
	long job_id;                /* SLURM_JOB_ID */
	long array_job_id, array_task_id, array_task_min, array_task_count;
	int batch_step;             /* the batch script, not an srun step */
	long node_id, nnodes;       /* step-relative; batch: none */
	long job_nnodes;            /* SLURM_JOB_NUM_NODES */
	const char *nodelist;       /* the step's list, else the job's */
	long restart_count;
};

void mad_facts_init(struct mad_facts *f);

/* Fills F from the job environment alone (what mad-env has, and what the
 * plugin starts from before it asks SPANK): SLURM_JOB_ID, SLURM_NODEID or
 * SPUR_NODE_RANK, SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_ARRAY_*,
 * SLURM_RESTART_COUNT, SPUR_JOB_ID, and the step's node list, else the
 * job's, copied into NODELIST.  A batch script is told by the absence of
 * SLURM_STEP_ID; on spur it runs on every node and has its node's rank. */
void mad_facts_from_env(struct mad_facts *f, mad_getenv_fn getenv_fn, void *ctx,
			char *nodelist, size_t size);

struct mad_contract {
	const char *scheduler;      /* "slurm" or "spur" */
	const char *fanout;         /* "nodes" or "array" */
	long rank, nnodes;
	long collect_job_id;
	long master_port;
	char master_host[256];      /* rank 0's node name (nodes fan-out) */
	char master_addr[64];       /* "" until known (array: rendezvous) */
	char run_dir[MAD_VALUE_MAX]; /* "" without a run folder */
	char job_dir[MAD_VALUE_MAX + 48];
	long markers_expected;      /* done_rank files the job will leave */
	long timeout;
};

/* Everything that needs no waiting: scheduler, fan-out, rank, counts, ids,
 * port, folders, and MASTER_ADDR in nodes fan-out (rank 0's node, resolved).
 * 0, or -1 with ERR saying what is missing or wrong. */
int mad_contract_compute(const struct mad_options *opts,
			 const struct mad_facts *facts, struct mad_contract *c,
			 char *err, size_t size);

/* Array fan-out: rank 0 publishes its own address in the job folder; the
 * other ranks read it, waiting up to the timeout when WAIT (else a missing
 * record leaves them pending).  NCCL_IFNAMES is NCCL_SOCKET_IFNAME's value.
 * 0 with c->master_addr set, 1 pending, -1 with ERR. */
int mad_contract_rendezvous(const struct mad_options *opts, struct mad_contract *c,
			    const char *nccl_ifnames, int wait, char *err,
			    size_t size);

/* Calls SET(name, value) for every variable of the contract. */
typedef int (*mad_setenv_fn)(void *ctx, const char *name, const char *value);
int mad_contract_export(const struct mad_options *opts,
			const struct mad_contract *c, const char *env_from,
			mad_setenv_fn set, void *ctx);

/* getenv(3) as mad_getenv_fn, for the tools (CTX unused). */
int mad_process_getenv(void *ctx, const char *name, char *buf, size_t size);

/* What a job script has: options from the environment (and AC/AV, the
 * site's plugstack arguments, as the plugin gets them), facts from the
 * environment, and the contract computed from both (mad-env, mad-mark).
 * 0, 1 (ERR says so) when no model is set anywhere, -1 with ERR: the same
 * rule as the plugin, through mad_options_model_asked(). */
int mad_job_from_env(struct mad_options *opts, struct mad_facts *facts,
		     struct mad_contract *c, char *nodelist, size_t nsize,
		     int ac, char *const av[], char *err, size_t size);

/* Reads a decimal environment value into *OUT (MAD_NONE if absent or not
 * a number); a helper for the front-ends gathering facts. */
long mad_parse_long(const char *s);

#endif
