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

/* Calls SET(name, value) for every variable of the contract. */
typedef int (*mad_setenv_fn)(void *ctx, const char *name, const char *value);
int mad_contract_export(const struct mad_options *opts,
			const struct mad_contract *c, const char *env_from,
			mad_setenv_fn set, void *ctx);

/* Reads a decimal environment value into *OUT (MAD_NONE if absent or not
 * a number); a helper for the front-ends gathering facts. */
long mad_parse_long(const char *s);

#endif
