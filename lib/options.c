/* SPDX-License-Identifier: GPL-2.0-or-later */
/* options.c: see options.h. */
#include "options.h"
#include "decimal.h"
#include "error.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x) /* a number in a message */

struct opt_def {
	const char *name; /* "master-port": plugstack key, env names */
	const char *flag; /* "--mad-master-port" */
	const char *arginfo;
	const char *usage;
	const char *def; /* built-in default, or NULL */
};

/* Each option's name is written once: NAME gives its flag at compile time. */
#define NAME(n) n, "--mad-" n

static const struct opt_def defs[MAD_OPT_COUNT] = {
	[MAD_OPT_MODEL] = { NAME("model"), "NAME", "model name; turns the plugin on for this job", NULL },
	[MAD_OPT_SCHEDULER] = { NAME("scheduler"), "auto|slurm|spur",
				"scheduler (default: detected)", "auto" },
	[MAD_OPT_FANOUT] = { NAME("fanout"), "auto|nodes|array",
			     "one job over N nodes, or one array task per node", "auto" },
	[MAD_OPT_NNODES] = { NAME("nnodes"), "N",
			     "node count in array fan-out (default: the array size)", NULL },
	[MAD_OPT_MASTER_PORT] = { NAME("master-port"), "PORT|auto",
				  "MASTER_PORT (default auto: the step's reserved port, else from job and step id)",
				  "auto" },
	[MAD_OPT_IFACE] = { NAME("iface"), "IFACE",
			    "interface whose address rank 0 gives as MASTER_ADDR", NULL },
	[MAD_OPT_ADDR_SUFFIX] = { NAME("addr-suffix"), "SUFFIX",
				  "appended to rank 0's host name before resolving it (e.g. -ib)",
				  NULL },
	[MAD_OPT_NPROC_PER_NODE] = { NAME("nproc-per-node"), "N|gpu|auto",
				     "MAD_NPROC_PER_NODE (default auto: tasks per node, else GPUs, else 1)",
				     "auto" },
	[MAD_OPT_RUN_DIR] = { NAME("run-dir"), "DIR",
			      "shared folder for rendezvous and completion markers", NULL },
	[MAD_OPT_TIMEOUT] = { NAME("timeout"), "SECONDS",
			      "how long peers wait for rank 0 (default 900)", "900" },
	[MAD_OPT_GPU_BIND] = { NAME("gpu-bind"), "warn|strict",
			       "LOCAL_RANK past the task's visible GPUs: one line (warn), or the task fails (strict)",
			       "warn" },
	[MAD_OPT_SOCKET_IFNAME] = { NAME("socket-ifname"), "auto|NAME|keep",
				    "set NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME where unset: to MAD_IFNAME (auto), to NAME, or not (keep)",
				    "keep" },
};

#undef NAME

/* In enum order (options.h). */
static const char *const scheduler_names[] = { "auto", "slurm", "spur" };
static const char *const fanout_names[] = { "auto", "nodes", "array" };
static const char *const gpu_bind_names[] = { "warn", "strict" };

const char *mad_scheduler_name(enum mad_scheduler sched)
{
	return scheduler_names[sched];
}

const char *mad_fanout_name(enum mad_fanout fanout)
{
	return fanout_names[fanout];
}

/* The index of VALUE in NAMES (N of them), or -1. */
static int name_index(const char *const names[], int n, const char *value)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], value) == 0)
			return i;
	return -1;
}

#define NAME_INDEX(names, value) name_index(names, (int)(sizeof(names) / sizeof(*names)), value)

const char *mad_opt_name(enum mad_opt opt)
{
	return defs[opt].name;
}

const char *mad_opt_usage(enum mad_opt opt)
{
	return defs[opt].usage;
}

const char *mad_opt_arginfo(enum mad_opt opt)
{
	return defs[opt].arginfo;
}

const char *mad_opt_flag(enum mad_opt opt)
{
	return defs[opt].flag;
}

/* NAME with '-' as '_', upper-cased when UPPER. */
static void env_suffix(enum mad_opt opt, char *buf, size_t size, int upper)
{
	size_t i;

	for (i = 0; defs[opt].name[i] && i + 1 < size; i++) {
		char c = defs[opt].name[i];

		buf[i] = c == '-' ? '_' : upper ? (char)toupper((unsigned char)c) : c;
	}
	buf[i] = '\0';
}

void mad_opt_env_name(enum mad_opt opt, char *buf, size_t size)
{
	char suffix[32];

	env_suffix(opt, suffix, sizeof(suffix), 1);
	snprintf(buf, size, "MAD_%s", suffix);
}

void mad_opt_spank_env_name(enum mad_opt opt, char *buf, size_t size)
{
	char suffix[32];

	/* SLURM names it _SLURM_SPANK_OPTION_<plugin>_<option>, every
	 * non-alphanumeric as '_', and sbatch exports it with SLURM_SPANK_. */
	env_suffix(opt, suffix, sizeof(suffix), 0);
	snprintf(buf, size, "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_%s", suffix);
}

const char *mad_source_name(enum mad_source src)
{
	static const char *const names[] = {
		"unset", "option", "option (SLURM's env form)", "env", "user", "site", "default",
	};
	return names[src];
}

int mad_opt_by_name(const char *name, size_t len)
{
	int i;

	for (i = 0; i < MAD_OPT_COUNT; i++)
		if (strlen(defs[i].name) == len && !memcmp(defs[i].name, name, len))
			return i;
	return -1;
}

static int is_name_char(char c, const char *extra)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(extra, c));
}

int mad_opt_check(enum mad_opt opt, const char *value, char *err, size_t size)
{
	char v[MAD_PRINTABLE_SIZE];
	const char *why = NULL;
	long n;
	size_t i, len = strlen(value);

	mad_printable(v, sizeof(v), value, len);
	switch (opt) {
	case MAD_OPT_MODEL:
		if (len == 0 || len > 64 || !is_name_char(value[0], ""))
			why = "is not a model name (a letter or digit, then up to 63 of A-Z a-z 0-9 . _ -)";
		for (i = 1; !why && i < len; i++)
			if (!is_name_char(value[i], "._-"))
				why = "is not a model name (a letter or digit, then up to 63 of A-Z a-z 0-9 . _ -)";
		break;
	case MAD_OPT_SCHEDULER:
		if (NAME_INDEX(scheduler_names, value) < 0)
			why = "is not one of auto, slurm, spur";
		break;
	case MAD_OPT_FANOUT:
		if (NAME_INDEX(fanout_names, value) < 0)
			why = "is not one of auto, nodes, array";
		break;
	case MAD_OPT_NNODES:
		if (mad_decimal(value, 1, MAD_NNODES_MAX, &n))
			why = "is not a number between 1 and " STR(MAD_NNODES_MAX);
		break;
	case MAD_OPT_MASTER_PORT:
		if (strcmp(value, "auto") && mad_decimal(value, 1, 65535, &n))
			why = "is not a port number between 1 and 65535, nor auto";
		break;
	case MAD_OPT_GPU_BIND:
		if (NAME_INDEX(gpu_bind_names, value) < 0)
			why = "is not one of warn, strict";
		break;
	case MAD_OPT_SOCKET_IFNAME:
	case MAD_OPT_IFACE:
		/* --mad-socket-ifname: auto, keep, or a name as --mad-iface takes it */
		if (opt == MAD_OPT_SOCKET_IFNAME && (!strcmp(value, "auto") || !strcmp(value, "keep")))
			break;
		if (len == 0 || len > 15)
			why = "is not a network interface name (1 to 15 characters)";
		for (i = 0; !why && i < len; i++)
			if (!is_name_char(value[i], "._:-"))
				why = "is not a network interface name (A-Z a-z 0-9 . _ : -)";
		if (why && opt == MAD_OPT_SOCKET_IFNAME)
			why = "is not auto, keep, nor a network interface name (1 to 15 of A-Z a-z 0-9 . _ : -)";
		break;
	case MAD_OPT_ADDR_SUFFIX:
		if (len == 0 || len > 63)
			why = "is not a host name suffix (1 to 63 characters)";
		for (i = 0; !why && i < len; i++)
			if (!is_name_char(value[i], "._-"))
				why = "is not a host name suffix (A-Z a-z 0-9 . _ -)";
		break;
	case MAD_OPT_NPROC_PER_NODE:
		if (strcmp(value, "auto") && strcmp(value, "gpu") && mad_decimal(value, 1, 4096, &n))
			why = "is not a number between 1 and 4096, nor gpu or auto";
		break;
	case MAD_OPT_RUN_DIR:
		if (value[0] != '/')
			why = "is not an absolute path";
		else if (len > 1024)
			why = "is longer than 1024 bytes";
		for (i = 0; !why && i < len; i++)
			if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
				why = "holds a control character";
		break;
	case MAD_OPT_TIMEOUT:
		if (mad_decimal(value, 1, 604800, &n))
			why = "is not a number of seconds between 1 and 604800";
		break;
	default:
		why = "is not a known option";
	}
	if (!why)
		return 0;
	return mad_error(err, size, "%s: '%s' %s", mad_opt_flag(opt), v, why);
}

/* Splits "key=value"; -1 when there is no '='. */
static int split_arg(const char *arg, size_t *keylen, const char **value)
{
	const char *eq = strchr(arg, '=');

	if (!eq)
		return -1;
	*keylen = (size_t)(eq - arg);
	*value = eq + 1;
	return 0;
}

static int plugstack_known(char *err, size_t size, const char *arg)
{
	char v[MAD_PRINTABLE_SIZE], known[256];
	size_t n = 0;
	int i;

	mad_printable(v, sizeof(v), arg, strlen(arg));
	known[0] = '\0';
	for (i = 0; i < MAD_OPT_COUNT && n < sizeof(known); i++)
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "",
				      defs[i].name);
	return mad_error(err, size,
			 "plugstack.conf: unknown argument '%s' (known: %s, as key=value)", v, known);
}

int mad_plugstack_check(int ac, char *const av[], char *err, size_t size)
{
	char sub[MAD_VALUE_MAX + 64];
	const char *value;
	size_t keylen;
	int i, opt;

	for (i = 0; i < ac; i++) {
		if (split_arg(av[i], &keylen, &value) || (opt = mad_opt_by_name(av[i], keylen)) < 0)
			return plugstack_known(err, size, av[i]);
		if (mad_opt_check((enum mad_opt)opt, value, sub, sizeof(sub)))
			return mad_error(err, size, "plugstack.conf: %s", sub);
	}
	return 0;
}

int mad_opt_check_from(enum mad_opt opt, const char *value, enum mad_source src, char *err, size_t size)
{
	char sub[MAD_VALUE_MAX + 64];
	char name[64];

	if (mad_opt_check(opt, value, sub, sizeof(sub))) {
		if (src == MAD_SRC_CLI)
			return mad_error(err, size, "%s", sub);
		if (src == MAD_SRC_SPANK_ENV)
			mad_opt_spank_env_name(opt, name, sizeof(name));
		else if (src == MAD_SRC_ENV)
			mad_opt_env_name(opt, name, sizeof(name));
		else if (src == MAD_SRC_USER)
			snprintf(name, sizeof(name), "MASTER_PORT in the submit environment");
		else
			snprintf(name, sizeof(name), "plugstack.conf");
		return mad_error(err, size, "%s (from %s)", sub, name);
	}
	return 0;
}

/* VALUE (at most MAD_VALUE_MAX - 1 bytes of it) as OPT's, from SRC, at the
 * end of the text: each option is set once, so it fits. */
static void put(struct mad_options *opts, enum mad_opt opt, const char *value, enum mad_source src)
{
	char *to = opts->text + opts->used;
	size_t room = sizeof(opts->text) - opts->used;
	size_t len = strnlen(value, MAD_VALUE_MAX - 1);

	if (!room) /* text holds every option at its longest: only a second put of one */
		return;
	if (len >= room)
		len = room - 1;
	memcpy(to, value, len);
	to[len] = '\0';
	opts->used += len + 1;
	opts->value[opt] = to;
	opts->source[opt] = src;
}

static int take(struct mad_options *opts, enum mad_opt opt, const char *value, enum mad_source src,
		char *err, size_t size)
{
	if (mad_opt_check_from(opt, value, src, err, size))
		return -1;
	put(opts, opt, value, src);
	return 0;
}

int mad_options_model_asked(const char *const cli[MAD_OPT_COUNT], mad_getenv_fn getenv_fn,
			    void *ctx, int ac, char *const av[])
{
	char name[96], buf[MAD_VALUE_MAX];
	int i;

	if (cli && cli[MAD_OPT_MODEL])
		return 1;
	for (i = 0; i < ac; i++) {
		const char *value;
		size_t keylen;

		if (!split_arg(av[i], &keylen, &value) && mad_opt_by_name(av[i], keylen) == MAD_OPT_MODEL)
			return 1;
	}
	mad_opt_spank_env_name(MAD_OPT_MODEL, name, sizeof(name));
	if (getenv_fn(ctx, name, buf, sizeof(buf)))
		return 1;
	mad_opt_env_name(MAD_OPT_MODEL, name, sizeof(name));
	return getenv_fn(ctx, name, buf, sizeof(buf)) != 0;
}

/* Takes option OPT from environment variable NAME: 1 taken, 0 absent,
 * -1 (ERR) too long or a bad value. */
static int from_env(struct mad_options *opts, enum mad_opt opt, const char *name,
		    enum mad_source src, mad_getenv_fn getenv_fn, void *ctx, char *err, size_t size)
{
	char buf[MAD_VALUE_MAX];
	int rc = getenv_fn(ctx, name, buf, sizeof(buf));

	if (rc < 0)
		return mad_error(err, size, "%s: the value of %s is too long", mad_opt_flag(opt), name);
	if (rc == 0)
		return 0;
	return take(opts, opt, buf, src, err, size) ? -1 : 1;
}

enum mad_env_origin mad_env_origin(mad_getenv_fn getenv_fn, void *ctx)
{
	char from[16], collect[32], id[32];

	if (getenv_fn(ctx, "MAD_ENV_FROM", from, sizeof(from)) == 0)
		return MAD_ENV_FRESH;
	if (getenv_fn(ctx, "MAD_COLLECT_JOB_ID", collect, sizeof(collect)) != 1)
		return MAD_ENV_OTHER_JOB;
	if (getenv_fn(ctx, "SLURM_ARRAY_JOB_ID", id, sizeof(id)) == 1 && !strcmp(id, collect))
		return MAD_ENV_OWN_JOB;
	if (getenv_fn(ctx, "SLURM_JOB_ID", id, sizeof(id)) == 1 && !strcmp(id, collect))
		return MAD_ENV_OWN_JOB;
	return MAD_ENV_OTHER_JOB;
}

/* spur up to 0.10 set MASTER_PORT=29500 itself in every multi-node job, over
 * the user's (ROCm/spur crates/spurd/src/agent_server.rs@4cc3da8, spur #783),
 * together with NODE_RANK on every launch; from 0.11 it sets neither, and a
 * MASTER_PORT in the job env is the user's (spur #793, CHANGELOG 0.11.0).  So
 * it is spur's only as that pair: 29500 with NODE_RANK beside it. */
static int spur_set_master_port(mad_getenv_fn getenv_fn, void *ctx)
{
	char buf[32];

	if (getenv_fn(ctx, "SPUR_JOB_ID", buf, sizeof(buf)) == 0)
		return 0;
	if (getenv_fn(ctx, "MASTER_PORT", buf, sizeof(buf)) != 1 || strcmp(buf, "29500"))
		return 0;
	if (getenv_fn(ctx, "NODE_RANK", buf, sizeof(buf)) != 1)
		return 0;
	if (getenv_fn(ctx, "SLURM_JOB_NUM_NODES", buf, sizeof(buf)) != 1 &&
	    getenv_fn(ctx, "SLURM_NNODES", buf, sizeof(buf)) != 1)
		return 0;
	return atol(buf) > 1;
}

int mad_options_resolve(struct mad_options *opts, const char *const cli[MAD_OPT_COUNT],
			mad_getenv_fn getenv_fn, void *ctx, int ac, char *const av[], char *err,
			size_t size)
{
	char name[96];
	int i, k, rc, from_mad_job, fresh;
	enum mad_env_origin origin;

	/* not the text: the pages a task writes are the ones it uses */
	memset(opts, 0, offsetof(struct mad_options, text));
	for (i = 0; i < MAD_OPT_COUNT; i++)
		opts->value[i] = "";
	if (mad_plugstack_check(ac, av, err, size))
		return -1;
	origin = mad_env_origin(getenv_fn, ctx);
	from_mad_job = origin == MAD_ENV_OTHER_JOB;
	fresh = origin == MAD_ENV_FRESH;

	for (i = 0; i < MAD_OPT_COUNT; i++) {
		enum mad_opt opt = (enum mad_opt)i;

		if (cli && cli[i]) {
			if (take(opts, opt, cli[i], MAD_SRC_CLI, err, size))
				return -1;
			continue;
		}
		mad_opt_spank_env_name(opt, name, sizeof(name));
		rc = from_env(opts, opt, name, MAD_SRC_SPANK_ENV, getenv_fn, ctx, err, size);
		/* In this job's own srun steps MAD_NPROC_PER_NODE is what its
		 * batch step computed for its own layout, not an option: a step
		 * of another layout computes its own (contract.c choose_nproc),
		 * and the user's option reaches it in SLURM's SPANK form.  In
		 * the batch script (and spur's per-node one) it is the value
		 * mad.so took there, the option included. */
		if (rc == 0 && (!from_mad_job || opt == MAD_OPT_MODEL || opt == MAD_OPT_RUN_DIR) &&
		    !(opt == MAD_OPT_NPROC_PER_NODE && origin == MAD_ENV_OWN_JOB &&
		      getenv_fn(ctx, "SLURM_STEP_ID", name, sizeof(name)) == 1)) {
			mad_opt_env_name(opt, name, sizeof(name));
			rc = from_env(opts, opt, name, MAD_SRC_ENV, getenv_fn, ctx, err, size);
		}
		if (rc == 0 && opt == MAD_OPT_MASTER_PORT && fresh &&
		    !spur_set_master_port(getenv_fn, ctx))
			rc = from_env(opts, opt, "MASTER_PORT", MAD_SRC_USER, getenv_fn, ctx, err,
				      size);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		/* plugstack: the last key=value for this option wins */
		for (k = ac - 1; k >= 0; k--) {
			const char *value;
			size_t keylen;

			if (!split_arg(av[k], &keylen, &value) && mad_opt_by_name(av[k], keylen) == i)
				break;
		}
		if (k >= 0) {
			if (take(opts, opt, strchr(av[k], '=') + 1, MAD_SRC_PLUGSTACK, err, size))
				return -1;
		} else if (defs[i].def) {
			put(opts, opt, defs[i].def, MAD_SRC_DEFAULT);
		}
	}
	/* checked above: a name of the list, else unset ("auto") */
	k = NAME_INDEX(scheduler_names, opts->value[MAD_OPT_SCHEDULER]);
	opts->scheduler = k < 0 ? MAD_SCHED_AUTO : (enum mad_scheduler)k;
	k = NAME_INDEX(fanout_names, opts->value[MAD_OPT_FANOUT]);
	opts->fanout = k < 0 ? MAD_FANOUT_AUTO : (enum mad_fanout)k;
	return 0;
}
