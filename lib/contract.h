/* SPDX-License-Identifier: GPL-2.0-or-later */
/* contract.h: the environment every task of a mad job sees (design.md §3),
 * computed from the options and the facts of the allocation.  The plugin
 * and mad-env gather the facts their own way and share everything else.
 *
 * Two levels, right in every launch shape:
 *  - node level (NODE_RANK, NNODES, MASTER_ADDR, MASTER_PORT,
 *    MAD_GPUS_PER_NODE, MAD_NPROC_PER_NODE): the same in every task of a
 *    node, for one agent per node (torchrun, deepspeed, ...);
 *  - process level (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE): this
 *    task among all tasks of its step, for one task per process (srun
 *    --ntasks-per-node=G with torch's env://).  With one task per node the
 *    two are equal.
 * Facts (ranks, counts, rank 0's address) replace inherited values; the
 * choices (port, interface) follow the option order of options.h. */
#ifndef MAD_CONTRACT_H
#define MAD_CONTRACT_H

#include "jobdir.h"
#include "netaddr.h"
#include "run.h"
#include "options.h"

#include <stddef.h>

#define MAD_NONE (-1L)

/* What the scheduler says about this task; MAD_NONE where unknown. */
struct mad_facts {
	int host_lacks_options; /* SPANK host without spank_option_register */
	int has_spur_job_id;    /* SPUR_JOB_ID in the job env */
	long job_id;            /* SLURM_JOB_ID */
	long array_job_id, array_task_id, array_task_min, array_task_count;
	int batch_step;       /* SLURM's batch script, not an srun step */
	long step_id;         /* srun step id; MAD_NONE outside a step */
	long node_id, nnodes; /* step-relative; batch: none */
	long job_nnodes;      /* SLURM_JOB_NUM_NODES */
	const char *nodelist; /* the step's list, else the job's */
	long restart_count;
	char cluster[64]; /* SLURM_CLUSTER_NAME, "" unknown */
	long uid;         /* the job's user; MAD_NONE: the caller */
	/* this task in its step (srun steps only) */
	long task_id, ntasks;        /* SLURM_PROCID, the step's task count */
	long local_id, local_ntasks; /* SLURM_LOCALID, tasks of the step here */
	long node_tasks;             /* tasks per node of the allocation here */
	long inherited_nproc;        /* MAD_NPROC_PER_NODE this job's batch step set */
	long resv_port;              /* first of SLURM_STEP_RESV_PORTS */
	int layout_arbitrary; /* SLURM_DISTRIBUTION=arbitrary: task 0 where srun's host list says */
	char layout[32];      /* SLURM_DISTRIBUTION, "" unknown */
	long gpus;            /* mad_gpus_detect(), -1 unknown */
	const char *gpus_from;
	char nccl_ifnames[256]; /* NCCL_SOCKET_IFNAME */
	long gres_gpus;         /* mad_gpus_of_step(), -1 unset */
	const char *gres_var;   /* ... its variable */
	long visible_gpus;      /* mad_gpus_visible(), -1 no list */
	const char *visible_var;
	char visible_list[1024]; /* a list of GPU UUIDs is 41 bytes an entry */
	/* NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME set by the user or the site
	 * (a value equal to the MAD_IFNAME of the mad job it came from is
	 * mad's own, design.md §5) */
	int user_nccl_ifname, user_gloo_ifname;
	/* the file of NCCL's that names NCCL_SOCKET_IFNAME (ncclconf.h), ""
	 * none: mad_facts_nccl_conf */
	char nccl_conf[256];
};

void mad_facts_init(struct mad_facts *f);

/* Fills F from the job environment alone (what mad-env has, and what the
 * plugin starts from before it asks SPANK): SLURM_JOB_ID, SLURM_NODEID or
 * SPUR_NODE_RANK, SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_ARRAY_*,
 * SLURM_RESTART_COUNT, SLURM_CLUSTER_NAME, SPUR_JOB_ID, in an srun step SLURM_STEP_ID,
 * SLURM_PROCID, SLURM_LOCALID, SLURM_STEP_NUM_TASKS,
 * SLURM_STEP_TASKS_PER_NODE and SLURM_DISTRIBUTION, the GPUs (gpus.h), and the step's node list,
 * else the job's, copied into NODELIST.  A batch script is told by the
 * absence of SLURM_STEP_ID; on spur it runs on every node and has its
 * node's rank. */
void mad_facts_from_env(struct mad_facts *f, mad_getenv_fn getenv_fn, void *ctx, char *nodelist,
			size_t size);

/* Where --mad-socket-ifname would set NCCL_SOCKET_IFNAME (not keep, no
 * user's value), whether one of NCCL's own files names it (NCCL_CONF_FILE
 * or HOME's .nccl.conf, then /etc/nccl.conf, as the job's environment
 * names them; only /etc's with ETC_ONLY, inside spur's node daemon): its
 * path into F->nccl_conf, then NCCL takes the value from there and mad
 * leaves it (design.md §5).  A value NCCL would not use (one byte or none,
 * ncclconf.h) does not count.  Reads files: the front-ends call it. */
void mad_facts_nccl_conf(struct mad_facts *f, const struct mad_options *opts,
			 mad_getenv_fn getenv_fn, void *ctx, int etc_only);

/* The count for node INDEX in a SLURM tasks-per-node list ("2(x3),1"), or
 * MAD_NONE when SPEC is malformed or too short. */
long mad_tasks_on_node(const char *spec, long index);

struct mad_contract {
	enum mad_scheduler scheduler; /* MAD_SCHED_SLURM or MAD_SCHED_SPUR */
	enum mad_fanout fanout;       /* MAD_FANOUT_NODES or MAD_FANOUT_ARRAY */
	const char *facts_from;       /* "SLURM" or "spur": who told the ranks */
	long rank, nnodes;            /* node level */
	long task_rank, world_size;   /* process level */
	long local_rank, local_world_size;
	int task_facts;    /* process level from the scheduler's task ids */
	int process_level; /* 0: exported unset (a multi-node batch step) */
	long collect_job_id;
	long step_id; /* MAD_NONE: the batch script (or spur's) */
	long master_port;
	char port_from[96];
	char master_host[256];          /* rank 0's node name (nodes fan-out) */
	char master_addr[MAD_ADDR_MAX]; /* "" until known (rendezvous) */
	char addr_from[512];
	int needs_rendezvous;   /* rank 0's address comes by the run folder */
	int task0_publishes;    /* ... published by task 0's node, not node 0's */
	char nccl_ifnames[256]; /* NCCL_SOCKET_IFNAME, for rank 0's address */
	long gpus;              /* -1 unknown */
	const char *gpus_from;
	long device; /* MAD_LOCAL_DEVICE, -1 unset (design.md §7) */
	char device_from[384];
	long visible;           /* the devices this task sees, -1 unknown */
	char visible_desc[192]; /* "CUDA_VISIBLE_DEVICES=1" */
	int gpu_strict;         /* --mad-gpu-bind=strict */
	char ifname[32];        /* MAD_IFNAME, "" unknown (mad_contract_ifname) */
	char ifname_from[192];
	char set_nccl_ifname[32]; /* NCCL_SOCKET_IFNAME to set, "" none */
	char set_gloo_ifname[32]; /* GLOO_SOCKET_IFNAME to set, "" none */
	char nccl_conf[256];      /* NCCL_SOCKET_IFNAME left to this file of NCCL's */
	long nproc;
	char nproc_from[64];
	char run_dir[MAD_VALUE_MAX];   /* "" without a run folder */
	char job_dir[MAD_JOBDIR_PATH]; /* the attempt's folder (jobdir.h), for messages */
	int job_dir_fd;                /* it, opened (-1: not yet): its files go through it */
	int job_dir_waited;            /* waited for the founder's folder already */
	double job_dir_wait_s;         /* ... that long, of the timeout */
	char job_dir_notes[1024];      /* the folders passed over, for messages and --explain */
	char cluster[64];              /* the attempt's identity (jobdir.h) */
	long restart;
	uid_t uid;
	char record[32];       /* the step's rendezvous record in job_dir */
	long markers_expected; /* done_rank files the job will leave */
	long timeout;
	struct mad_run run; /* this run, where a re-run shares the folder (run.h) */
};

/* mad_contract_compute() without MASTER_ADDR: scheduler, fan-out, both
 * levels, ids, port, folders, GPUs; no name lookup, no file, no wait.  For
 * what needs only who and where (task_exit's markers, in slurmstepd's
 * task-reaping loop, where a lookup on a dead DNS would stall every task).
 * 0, or -1 with ERR. */
int mad_contract_ids(const struct mad_options *opts, const struct mad_facts *facts,
		     struct mad_contract *c, char *err, size_t size);
/* Everything that needs no waiting: scheduler, fan-out, both levels,
 * ids, port, folders, GPUs, and MASTER_ADDR in nodes fan-out (rank 0's
 * node, resolved; never loopback in a multi-node job).
 * 0, or -1 with ERR saying what is missing or wrong.  Both fill C afresh,
 * its job folder not yet open (c->job_dir_fd -1), even when they fail:
 * mad_contract_release() then releases it either way. */
int mad_contract_compute(const struct mad_options *opts, const struct mad_facts *facts,
			 struct mad_contract *c, char *err, size_t size);

/* When c->needs_rendezvous: rank 0's node finds its own address (iface,
 * addr-suffix, NCCL_SOCKET_IFNAME, default route) and its first task
 * publishes it in the job folder; the other nodes read it, waiting up to
 * the timeout when WAIT (else a missing record leaves them pending).
 * 0 with c->master_addr set, 1 pending, -1 with ERR. */
int mad_contract_rendezvous(const struct mad_options *opts, struct mad_contract *c, int wait,
			    char *err, size_t size);

/* Whether set_device(LOCAL_RANK), the line nearly every training script
 * has, cannot work here: LOCAL_RANK at or past the devices this task sees
 * (SLURM bound GPUs per task, or fewer GPUs than tasks).  1 with MSG, one
 * line naming the variables and the fix (MAD_LOCAL_DEVICE); 0 when it can
 * work or the task sees no GPU. */
int mad_contract_device_mismatch(const struct mad_contract *c, char *msg, size_t size);

/* Once c->master_addr is known: MAD_IFNAME, the interface this node
 * reaches rank 0's address through (never loopback, never down; rank 0's
 * node: the one holding its address), and with --mad-socket-ifname=auto or NAME
 * the NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME to set where the user and
 * the site set none (design.md §5).  0, or -1 with ERR (NAME loopback,
 * down or absent here). */
int mad_contract_ifname(const struct mad_options *opts, const struct mad_facts *facts,
			struct mad_contract *c, char *err, size_t size);

/* Opens this attempt's job folder below c->run_dir (jobdir.h) in MODE, as
 * c->uid: c->job_dir_fd becomes the opened folder (one held before is
 * closed), c->job_dir its path, for messages only, and c->job_dir_notes
 * names what was passed over.  Every file of the folder is then read and
 * written relative to c->job_dir_fd, never by the path, which may name
 * another folder by then.  JOIN in a task that does not found the folder
 * (all but the first task of the attempt, design.md §15) first waits for
 * the founder's, within c->timeout, which it spends.  0 opened, 1 none yet
 * (MAD_JOBDIR_FIND), -1 with ERR. */
int mad_contract_job_dir(struct mad_contract *c, enum mad_jobdir_mode mode, char *err, size_t size);
/* Closes what C holds (its job folder's descriptor).  Whoever computed C
 * calls it once done with it (the plugin in each hook: nothing may stay
 * open across hooks or jobs in spurd); C may be computed again after. */
void mad_contract_release(struct mad_contract *c);
/* spur's per-node job script in nodes fan-out, on more than one node: it
 * leaves script_rank<N> as it starts (mad-wait expects no marker of a node
 * that never wrote it, design.md §10), and a re-run in the folder of the
 * earlier run (spur #629) learns from it what is this run's (run.h).
 * Elsewhere there is no rule.  Once the job folder is open: 0, or -1 with
 * ERR. */
int mad_contract_run_begin(struct mad_contract *c, char *err, size_t size);
/* D for this attempt's job folder, for a caller that opens it later (a
 * forked child).  0, or -1 with ERR. */
int mad_contract_jobdir(const struct mad_contract *c, struct mad_jobdir *d, char *err, size_t size);

/* Process rank 0 checks that MASTER_PORT can be bound on its node now, so
 * a busy port fails at once, naming port and node, instead of a launcher
 * timing out.  0 (also on every other rank), or -1 with ERR. */
int mad_contract_check_port(const struct mad_contract *c, char *err, size_t size);

/* Calls SET(name, value, source) for every variable of the contract;
 * SOURCE says where the value came from (option, env, user, site,
 * default, SLURM, spur, rendezvous, computed), for mad-env --explain.
 * VALUE NULL: the variable must be unset (the process level of a
 * multi-node batch step, design §3). */
typedef int (*mad_setenv_fn)(void *ctx, const char *name, const char *value, const char *source);
int mad_contract_export(const struct mad_options *opts, const struct mad_contract *c,
			const char *env_from, mad_setenv_fn set, void *ctx);

/* Reads a decimal environment value into *OUT (MAD_NONE if absent or not
 * a number); a helper for the front-ends gathering facts. */
long mad_parse_long(const char *s);

#endif
