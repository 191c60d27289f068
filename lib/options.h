/* SPDX-License-Identifier: GPL-2.0-or-later */
/* options.h: the --mad-* options, their validation, and where each value
 * comes from.  design.md §4 order, first present wins:
 *   1. the command line / #SBATCH (--mad-X=V)
 *   2. SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_X (SLURM's env form)
 *   3. MAD_X in the job environment (and, for master-port only, the user's
 *      own MASTER_PORT: source "user")
 *   4. X=V on the plugin's plugstack.conf line (site default)
 *   5. the built-in default
 * A value is checked wherever it comes from; a bad one is an error that
 * names the option and the source, never silently replaced by a default. */
#ifndef MAD_OPTIONS_H
#define MAD_OPTIONS_H

#include <stddef.h>

enum mad_opt {
	MAD_OPT_MODEL,
	MAD_OPT_SCHEDULER,
	MAD_OPT_FANOUT,
	MAD_OPT_NNODES,
	MAD_OPT_MASTER_PORT,
	MAD_OPT_IFACE,
	MAD_OPT_ADDR_SUFFIX,
	MAD_OPT_NPROC_PER_NODE,
	MAD_OPT_RUN_DIR,
	MAD_OPT_TIMEOUT,
	MAD_OPT_GPU_BIND,
	MAD_OPT_SOCKET_IFNAME,
	MAD_OPT_COUNT
};

enum mad_source {
	MAD_SRC_NONE, /* not given: the default applies */
	MAD_SRC_CLI,
	MAD_SRC_SPANK_ENV,
	MAD_SRC_ENV,
	MAD_SRC_USER, /* MASTER_PORT from the submit environment */
	MAD_SRC_PLUGSTACK,
	MAD_SRC_DEFAULT,
};

/* --mad-scheduler and --mad-fanout as the code compares them; their names
 * ("auto", "slurm", ...) are only parsed and printed. */
enum mad_scheduler { MAD_SCHED_AUTO, MAD_SCHED_SLURM, MAD_SCHED_SPUR };
enum mad_fanout { MAD_FANOUT_AUTO, MAD_FANOUT_NODES, MAD_FANOUT_ARRAY };

#define MAD_VALUE_MAX 4096

/* The most nodes a job may have (--mad-nnodes, mad-wait --nnodes). */
#define MAD_NNODES_MAX 65536

/* The values point into TEXT, one after another: mad.so resolves them in
 * each task SLURM has just forked, where every page first written costs a
 * fault, and 12 arrays of MAD_VALUE_MAX would be 12 pages where the values
 * fill one (bench/README.md, the task_init split).  So a mad_options is
 * never copied, and only mad_options_resolve fills TEXT (a unit test may point
 * a value at a literal instead). */
struct mad_options {
	const char *value[MAD_OPT_COUNT]; /* "" when unset and no default */
	enum mad_source source[MAD_OPT_COUNT];
	enum mad_scheduler scheduler; /* value[MAD_OPT_SCHEDULER], parsed */
	enum mad_fanout fanout;       /* value[MAD_OPT_FANOUT], parsed */
	size_t used;                  /* of text */
	char text[MAD_OPT_COUNT * MAD_VALUE_MAX];
};

/* "auto", "slurm", "spur"; "auto", "nodes", "array". */
const char *mad_scheduler_name(enum mad_scheduler sched);
const char *mad_fanout_name(enum mad_fanout fanout);

/* "model", "master-port", ... */
const char *mad_opt_name(enum mad_opt opt);
/* "--mad-model": the command-line option */
const char *mad_opt_flag(enum mad_opt opt);
/* "MAD_MODEL", "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_model": into BUF */
void mad_opt_env_name(enum mad_opt opt, char *buf, size_t size);
void mad_opt_spank_env_name(enum mad_opt opt, char *buf, size_t size);
const char *mad_source_name(enum mad_source src);
/* Looks NAME up as a plugstack key ("master-port") or -1. */
int mad_opt_by_name(const char *name, size_t len);
/* The usage line shown by sbatch --help. */
const char *mad_opt_usage(enum mad_opt opt);
const char *mad_opt_arginfo(enum mad_opt opt);

/* Checks VALUE for OPT; 0, or -1 with ERR set to e.g.
 * "--mad-nnodes: 'x' is not a number between 1 and 65536". */
int mad_opt_check(enum mad_opt opt, const char *value, char *err, size_t size);
/* The same for a value from SRC, which ERR names as mad_options_resolve
 * does: "--mad-run-dir: 'x' is not an absolute path (from MAD_RUN_DIR)". */
int mad_opt_check_from(enum mad_opt opt, const char *value, enum mad_source src, char *err,
		       size_t size);

/* Reads one environment variable: 1 found (copied into BUF), 0 absent,
 * -1 longer than SIZE.  The plugin passes spank_getenv, tools getenv. */
typedef int (*mad_getenv_fn)(void *ctx, const char *name, char *buf, size_t size);

/* Whether the environment comes from inside a mad job: MAD_ENV_FROM is
 * absent (FRESH), or set by this very job (OWN_JOB: mad-env in a job the
 * plugin set up, or an srun step under its batch script), or by another
 * job (OTHER_JOB: a job submitted from inside a mad job).  This job is
 * MAD_COLLECT_JOB_ID against SLURM_ARRAY_JOB_ID or SLURM_JOB_ID. */
enum mad_env_origin { MAD_ENV_FRESH, MAD_ENV_OWN_JOB, MAD_ENV_OTHER_JOB };
enum mad_env_origin mad_env_origin(mad_getenv_fn getenv_fn, void *ctx);

/* Fills OPTS from the five sources.  CLI[i] is the command-line value of
 * option i or NULL; PLUGSTACK is the plugin's argv (AC entries).  Returns 0,
 * or -1 with ERR naming the option, the source and the problem.  When the
 * environment carries MAD_ENV_FROM of another job (a job submitted from
 * inside a mad job: MAD_COLLECT_JOB_ID is not this job's), only MAD_MODEL
 * and MAD_RUN_DIR are read from MAD_*: the rest describe the parent job.
 * The user's own MASTER_PORT counts (MAD_SRC_USER, after MAD_MASTER_PORT) only
 * in a FRESH environment, and not on a multi-node spur job, where spur
 * itself sets MASTER_PORT=29500 (spur-core spur_env.rs). */
int mad_options_resolve(struct mad_options *opts, const char *const cli[MAD_OPT_COUNT],
			mad_getenv_fn getenv_fn, void *ctx, int ac, char *const av[], char *err,
			size_t size);

/* Whether the job asked for mad anywhere (a model on the command line, in
 * SLURM's option env, in MAD_MODEL, or on the plugstack line), whatever the
 * other values are: a bad value then fails the job; without a model the job
 * is left alone. */
int mad_options_model_asked(const char *const cli[MAD_OPT_COUNT], mad_getenv_fn getenv_fn,
			    void *ctx, int ac, char *const av[]);

/* Checks the plugstack arguments alone: unknown keys and bad values. */
int mad_plugstack_check(int ac, char *const av[], char *err, size_t size);

#endif
