/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fake-env.h: a fake job environment for the C unit tests, as a
 * mad_getenv_fn: NAME=VALUE strings, the first match wins, -1 when the
 * value does not fit (as SPANK's getenv says NOSPACE). */
#ifndef MAD_FAKE_ENV_H
#define MAD_FAKE_ENV_H

#include <string.h>

#define FAKE_ENV_MAX 24

struct env {
	const char *vars[FAKE_ENV_MAX];
};

static inline int env_get(void *ctx, const char *name, char *buf, size_t size)
{
	const struct env *e = ctx;
	size_t n = strlen(name);
	int i;

	for (i = 0; i < FAKE_ENV_MAX && e->vars[i]; i++)
		if (!strncmp(e->vars[i], name, n) && e->vars[i][n] == '=') {
			if (strlen(e->vars[i] + n + 1) >= size)
				return -1;
			strcpy(buf, e->vars[i] + n + 1);
			return 1;
		}
	return 0;
}

#endif
