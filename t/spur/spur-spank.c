/* spur-spank.c: the 15 functions spurd exports to SPANK plugins, as spur
 * implements them (crates/spur-spank/src/lib.rs; the export list is
 * crates/spurd/build.rs, mirrored in spank-host.syms).  Shared by
 * spank-host and the fuzz target. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spur-spank.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct spank_handle *spank_t;

int spank_getenv(spank_t sp, const char *var, char *buf, int len);
int spank_setenv(spank_t sp, const char *var, const char *val, int overwrite);
int spank_unsetenv(spank_t sp, const char *var);
int spank_get_item(spank_t sp, int item, ...);
int spank_job_control_setenv(spank_t sp, const char *var, const char *val, int overwrite);
int spank_job_control_getenv(spank_t sp, const char *var, char *buf, int len);
int spank_job_control_unsetenv(spank_t sp, const char *var);
const char *spank_strerror(int err);
void slurm_error(const char *fmt, ...);
void slurm_info(const char *fmt, ...);
void slurm_verbose(const char *fmt, ...);
void slurm_debug(const char *fmt, ...);
void slurm_debug2(const char *fmt, ...);
void slurm_debug3(const char *fmt, ...);
void slurm_spank_log(const char *fmt, ...);

enum { SP_SUCCESS = 0, SP_ERROR = 1, SP_BAD_ARG = 2, SP_NOT_TASK = 3,
       SP_ENV_EXISTS = 4, SP_ENV_NOEXIST = 5, SP_NOSPACE = 6, SP_NOT_REMOTE = 7,
       SP_NOEXIST = 8, SP_NOT_AVAIL = 10, SP_NOT_LOCAL = 11 };

/* ------------------------------------------------------ the 15 exports */

static char **find(spank_t sp, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < sp->n; i++)
		if (!strncmp(sp->env[i], name, len) && sp->env[i][len] == '=')
			return &sp->env[i];
	return NULL;
}

int spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	char **e;

	if (!sp || !var || !buf || len <= 0)
		return SP_BAD_ARG;
	e = find(sp, var);
	if (!e)
		return SP_ENV_NOEXIST;
	if (strlen(*e + strlen(var) + 1) >= (size_t)len)
		return SP_NOSPACE;
	strcpy(buf, *e + strlen(var) + 1);
	return SP_SUCCESS;
}

static int put(spank_t sp, const char *var, const char *val)
{
	char **e = find(sp, var), *s;

	if (asprintf(&s, "%s=%s", var, val) < 0)
		return SP_ERROR;
	if (e) {
		free(*e);
		*e = s;
		return SP_SUCCESS;
	}
	if (sp->n + 2 > sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 32;
		char **p = realloc(sp->env, cap * sizeof(*p));

		if (!p) {
			free(s);
			return SP_ERROR;
		}
		sp->env = p;
		sp->cap = cap;
	}
	sp->env[sp->n++] = s;
	sp->env[sp->n] = NULL;
	return SP_SUCCESS;
}

int spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	if (!sp || !var || !val)
		return SP_BAD_ARG;
	if (find(sp, var) && !overwrite)
		return SP_ENV_EXISTS;
	return put(sp, var, val);
}

int spank_unsetenv(spank_t sp, const char *var)
{
	char **e;

	if (!sp || !var)
		return SP_BAD_ARG;
	e = find(sp, var);
	if (e) {
		free(*e);
		*e = sp->env[--sp->n];
		sp->env[sp->n] = NULL;
	}
	return SP_SUCCESS;
}

int spank_get_item(spank_t sp, int item, ...)
{
	va_list ap;
	uint32_t *out;

	if (!sp)
		return SP_BAD_ARG;
	if (item >= 15)
		return SP_BAD_ARG;
	if (item == 8 || item == 9 || item == 10 || (item >= 11 && item <= 13))
		return SP_NOT_AVAIL;
	va_start(ap, item);
	out = va_arg(ap, uint32_t *); /* spur writes one u32, whatever the item */
	va_end(ap);
	*out = item == 0 ? sp->uid : item == 1 ? sp->gid : item == 2 ? sp->job_id : 0;
	return SP_SUCCESS;
}

int spank_job_control_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	(void)sp; (void)var; (void)val; (void)overwrite;
	return SP_NOT_LOCAL;
}

int spank_job_control_getenv(spank_t sp, const char *var, char *buf, int len)
{
	(void)sp; (void)var; (void)buf; (void)len;
	return SP_NOT_LOCAL;
}

int spank_job_control_unsetenv(spank_t sp, const char *var)
{
	(void)sp; (void)var;
	return SP_NOT_LOCAL;
}

const char *spank_strerror(int err)
{
	return err == SP_SUCCESS ? "Success" : "Error";
}

int spur_quiet;

/* spur logs the format verbatim: varargs are never expanded */
#define VERBATIM(fn, level) \
	void fn(const char *fmt, ...) { if (!spur_quiet) fprintf(stderr, "spurd: %s: %s\n", level, fmt); }
VERBATIM(slurm_error, "error")
VERBATIM(slurm_info, "info")
VERBATIM(slurm_verbose, "verbose")
VERBATIM(slurm_debug, "debug")
VERBATIM(slurm_debug2, "debug2")
VERBATIM(slurm_debug3, "debug3")
VERBATIM(slurm_spank_log, "log")


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
		if (name)
			put(sp, name, eq + 1);
		free(name);
	}
	if (spank_getenv(sp, "SLURM_JOB_ID", buf, sizeof(buf)) == SP_SUCCESS)
		sp->job_id = (uint32_t)atol(buf);
}

void spur_handle_free(struct spank_handle *sp)
{
	size_t i;

	for (i = 0; i < sp->n; i++)
		free(sp->env[i]);
	free(sp->env);
	sp->env = NULL;
	sp->n = sp->cap = 0;
}

int spur_getenv(struct spank_handle *sp, const char *var, char *buf, int len)
{
	return spank_getenv(sp, var, buf, len);
}
