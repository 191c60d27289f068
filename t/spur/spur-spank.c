/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spur-spank.c: the 15 functions spurd exports to SPANK plugins, answering as spur's do
 * (crates/spur-spank/src/lib.rs, unchanged from v0.5.0 to main 4cc3da8, #429; the export
 * list is crates/spurd/build.rs).  The tests load mad.so in spur's own host, built from its
 * source (t/spur/host); this C copy of its API serves the fuzz target, which links mad.so's
 * code statically.  Written from the source, not copied:
 *  - spank_getenv: BAD_ARG for a NULL handle, name or buffer or len < 0 (len 0 is allowed
 *    and, for a variable that exists, gives NOSPACE); ENV_NOEXIST for a missing variable;
 *    NOSPACE when value + NUL does not fit (nothing written).
 *  - spank_job_control_*: SUCCESS, kept in a map of the handle under "SPANK_"+name that
 *    nothing reads; getenv there is BAD_ARG for len <= 0 (spank.h's asymmetry, kept).
 *  - spank_get_item: one u32 out pointer; NULL handle or pointer BAD_ARG; items 0-7 and 14
 *    answer (uid, gid, job id, then zeros: step id, nnodes, nodeid, task counts, task pid);
 *    8-13 NOT_AVAIL; every other number BAD_ARG.
 *  - the log functions take the format only and log it verbatim (tracing levels:
 *    slurm_verbose and slurm_spank_log at info, debug2/3 at debug, hidden by default). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spur-spank.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	SP_SUCCESS = 0,
	SP_ERROR = 1,
	SP_BAD_ARG = 2,
	SP_NOT_TASK = 3,
	SP_ENV_EXISTS = 4,
	SP_ENV_NOEXIST = 5,
	SP_NOSPACE = 6,
	SP_NOT_REMOTE = 7,
	SP_NOEXIST = 8,
	SP_NOT_AVAIL = 10,
	SP_NOT_LOCAL = 11
};

/* ------------------------------------------------------------ the env maps */

static char **env_find(struct spur_env *e, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, len) && e->v[i][len] == '=')
			return &e->v[i];
	return NULL;
}

/* NAME=VALUE into E, replacing NAME's entry; 0, or -1 out of memory. */
static int env_put(struct spur_env *e, const char *name, const char *val)
{
	char **old = env_find(e, name), *s;

	if (asprintf(&s, "%s=%s", name, val) < 0)
		return -1;
	if (old) {
		free(*old);
		*old = s;
		return 0;
	}
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		char **p = realloc(e->v, cap * sizeof(*p));

		if (!p) {
			free(s);
			return -1;
		}
		e->v = p;
		e->cap = cap;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	return 0;
}

static void env_del(struct spur_env *e, const char *name)
{
	char **old = env_find(e, name);

	if (old) {
		free(*old);
		*old = e->v[--e->n];
		e->v[e->n] = NULL;
	}
}

static void env_free(struct spur_env *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* copy_env_value: the value and its NUL into BUF of LEN bytes, or NOSPACE */
static int env_copy(struct spur_env *e, const char *name, char *buf, int len)
{
	char **found = env_find(e, name);
	const char *val;

	if (!found)
		return SP_ENV_NOEXIST;
	val = *found + strlen(name) + 1;
	if (strlen(val) + 1 > (size_t)len)
		return SP_NOSPACE;
	memcpy(buf, val, strlen(val) + 1);
	return SP_SUCCESS;
}

/* ------------------------------------------------------------ the 15 exports */

int spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	if (!sp || !var || !buf || len < 0)
		return SP_BAD_ARG;
	return env_copy(&sp->env, var, buf, len);
}

int spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	if (!sp || !var || !val)
		return SP_BAD_ARG;
	if (!overwrite && env_find(&sp->env, var))
		return SP_ENV_EXISTS;
	/* spur's HashMap insert cannot fail; ours can only run out of memory */
	return env_put(&sp->env, var, val) ? SP_ERROR : SP_SUCCESS;
}

int spank_unsetenv(spank_t sp, const char *var)
{
	if (!sp || !var)
		return SP_BAD_ARG;
	env_del(&sp->env, var);
	return SP_SUCCESS;
}

int spank_get_item(spank_t sp, int item, ...)
{
	va_list ap;
	uint32_t *out;

	va_start(ap, item);
	out = va_arg(ap, uint32_t *); /* spur takes one pointer and writes a u32 */
	va_end(ap);
	if (!sp || !out)
		return SP_BAD_ARG;
	switch (item) {
	case 0:
		*out = sp->uid;
		break;
	case 1:
		*out = sp->gid;
		break;
	case 2:
		*out = sp->job_id;
		break;
	case 3:
	case 4:
	case 5:
	case 6:
	case 7:
	case 14:
		*out = 0; /* SpankContext's ..Default::default() in executor.rs */
		break;
	case 8:
	case 9:
	case 10:
	case 11:
	case 12:
	case 13:
		return SP_NOT_AVAIL;
	default:
		return SP_BAD_ARG;
	}
	return SP_SUCCESS;
}

/* The job-control map's key: "SPANK_" + NAME (freed by the caller), or NULL. */
static char *jc_key(const char *name)
{
	char *key;

	return asprintf(&key, "SPANK_%s", name) < 0 ? NULL : key;
}

int spank_job_control_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	char *key;
	int rc;

	if (!sp || !var || !val)
		return SP_BAD_ARG;
	if (!(key = jc_key(var)))
		return SP_ERROR;
	if (!overwrite && env_find(&sp->job_control, key))
		rc = SP_ENV_EXISTS;
	else
		rc = env_put(&sp->job_control, key, val) ? SP_ERROR : SP_SUCCESS;
	free(key);
	return rc;
}

int spank_job_control_getenv(spank_t sp, const char *var, char *buf, int len)
{
	char *key;
	int rc;

	if (!sp || !var || !buf || len <= 0)
		return SP_BAD_ARG;
	if (!(key = jc_key(var)))
		return SP_ERROR;
	rc = env_copy(&sp->job_control, key, buf, len);
	free(key);
	return rc;
}

int spank_job_control_unsetenv(spank_t sp, const char *var)
{
	char *key;

	if (!sp || !var)
		return SP_BAD_ARG;
	if (!(key = jc_key(var)))
		return SP_ERROR;
	env_del(&sp->job_control, key);
	free(key);
	return SP_SUCCESS;
}

const char *spank_strerror(int err)
{
	switch (err) {
	case SP_SUCCESS:
		return "Success";
	case SP_BAD_ARG:
		return "Bad argument";
	case SP_NOT_TASK:
		return "Not in task context";
	case SP_ENV_EXISTS:
		return "Environment variable exists";
	case SP_ENV_NOEXIST:
		return "No such environment variable";
	case SP_NOSPACE:
		return "Buffer too small";
	case SP_NOT_REMOTE:
		return "Valid only in remote context";
	case SP_NOEXIST:
		return "Id/pid does not exist on this node";
	case SP_NOT_AVAIL:
		return "Item not available from this callback";
	case SP_NOT_LOCAL:
		return "Valid only in local or allocator context";
	default:
		return "Generic error";
	}
}

int spur_quiet;

static void log_verbatim(const char *level, const char *fmt)
{
	if (spur_quiet || !fmt)
		return;
	/* tracing's default filter hides debug; SPUR_EMU_DEBUG shows it */
	if (!strcmp(level, "debug") && !getenv("SPUR_EMU_DEBUG"))
		return;
	fprintf(stderr, "spurd: %s: %s\n", level, fmt);
}

/* spur logs the format verbatim: varargs are never expanded */
#define VERBATIM(fn, level)               \
	void fn(const char *fmt, ...)     \
	{                                 \
		log_verbatim(level, fmt); \
	}
VERBATIM(slurm_error, "error")
VERBATIM(slurm_info, "info")
VERBATIM(slurm_verbose, "info")
VERBATIM(slurm_debug, "debug")
VERBATIM(slurm_debug2, "debug")
VERBATIM(slurm_debug3, "debug")
VERBATIM(slurm_spank_log, "info")

/* ------------------------------------------------------------ for the host */

void spur_handle_seed(struct spank_handle *sp, char **vars, int n)
{
	char buf[32];
	int i;

	memset(sp, 0, sizeof(*sp));
	sp->uid = getuid();
	sp->gid = getgid();
	for (i = 0; i < n; i++) {
		char *eq = strchr(vars[i], '='), *name;

		if (!eq || eq == vars[i])
			continue;
		name = strndup(vars[i], (size_t)(eq - vars[i]));
		/* an entry that does not fit in memory is dropped, as a job env cannot hold it */
		if (name)
			(void)env_put(&sp->env, name, eq + 1);
		free(name);
	}
	if (spank_getenv(sp, "SLURM_JOB_ID", buf, sizeof(buf)) == SP_SUCCESS)
		sp->job_id = (uint32_t)strtoul(buf, NULL, 10);
}

void spur_handle_free(struct spank_handle *sp)
{
	env_free(&sp->env);
	env_free(&sp->job_control);
}

int spur_getenv(struct spank_handle *sp, const char *var, char *buf, int len)
{
	return spank_getenv(sp, var, buf, len);
}
