/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job.c: see job.h. */
#include "job.h"
#include "marker.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

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

int mad_job_from_env(struct mad_options *opts, struct mad_facts *facts, struct mad_contract *c,
		     char *nodelist, size_t nsize, int ac, char *const av[], char *err, size_t size)
{
	int bad = mad_options_resolve(opts, NULL, mad_process_getenv, NULL, ac, av, err, size);

	if (bad && mad_options_model_asked(NULL, mad_process_getenv, NULL, ac, av))
		return -1;
	if (bad || !*opts->value[MAD_OPT_MODEL]) {
		char name[32];

		mad_opt_env_name(MAD_OPT_MODEL, name, sizeof(name));
		mad_error(err, size, "no model: this is not a mad job (set %s or %s)", name,
			  mad_opt_flag(MAD_OPT_MODEL));
		return 1;
	}
	mad_facts_from_env(facts, mad_process_getenv, NULL, nodelist, nsize);
	mad_facts_nccl_conf(facts, opts, mad_process_getenv, NULL, 0);
	return mad_contract_compute(opts, facts, c, err, size) ? -1 : 0;
}
