/* SPDX-License-Identifier: GPL-2.0-or-later */
/* api-probe: a SPANK plugin for spur-host.bats that asks spur's host the questions whose
 * answers spur's lib.rs fixes, and leaves each answer in the job env as PROBE_*=<code>
 * (PROBE_V=abc is the value it reads).  It also unsets PROBE_SPURD_VAR, which survives
 * when the host itself has it.  With PROBE_LEAK in the job env it is a bad plugin
 * instead: it keeps the first job's id in a static and gives it to every later job that
 * asks for mad.  With PROBE_LOG it logs one printf-style line with arguments: spur's
 * slurm_* take the format only and print it as it is.  With PROBE_RACE it counts its calls
 * in a static from a thread of its own and from the hook at once, without a lock: a data
 * race in the plugin's code (valgrind.bats: helgrind must still see a race in a plugin
 * through the suppressions of the host's own code). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "spur-spank.h"

int slurm_spank_task_init(spank_t sp, int ac, char **av);

static void put(spank_t sp, const char *name, int rc)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", rc);
	spank_setenv(sp, name, v, 1);
}

static char first_job[32];
static unsigned calls;

static void *bump(void *arg)
{
	(void)arg;
	calls++;
	return NULL;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char buf[64];
	uint32_t u = 7;

	(void)ac;
	(void)av;
	if (spank_getenv(sp, "PROBE_LEAK", buf, sizeof(buf)) == 0) {
		if (!first_job[0])
			spank_getenv(sp, "SLURM_JOB_ID", first_job, sizeof(first_job));
		if (spank_getenv(sp, "MAD_MODEL", buf, sizeof(buf)) == 0) {
			spank_setenv(sp, "MAD_COLLECT_JOB_ID", first_job, 1);
			spank_setenv(sp, "MAD_ENV_FROM", "spank", 1);
		}
		return 0;
	}
	if (spank_getenv(sp, "PROBE_RACE", buf, sizeof(buf)) == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, bump, NULL) == 0) {
			put(sp, "PROBE_CALLS", (int)++calls);
			pthread_join(t, NULL);
		}
		return 0;
	}
	if (spank_getenv(sp, "PROBE_LOG", buf, sizeof(buf)) == 0)
		slurm_error("probe %s %d%% 100%", "x", 7);
	put(sp, "PROBE_GETENV_LEN0", spank_getenv(sp, "PROBE_V", buf, 0));
	put(sp, "PROBE_GETENV_LEN0_MISSING", spank_getenv(sp, "NO_SUCH_VAR", buf, 0));
	put(sp, "PROBE_GETENV_NEG", spank_getenv(sp, "PROBE_V", buf, -1));
	put(sp, "PROBE_GETENV_NULLBUF", spank_getenv(sp, "PROBE_V", NULL, 64));
	put(sp, "PROBE_GETENV_SHORT", spank_getenv(sp, "PROBE_V", buf, 3));
	put(sp, "PROBE_GETENV_EXACT", spank_getenv(sp, "PROBE_V", buf, 4));
	put(sp, "PROBE_GETENV_MISSING", spank_getenv(sp, "NO_SUCH_VAR", buf, 64));
	put(sp, "PROBE_SETENV_EXISTS", spank_setenv(sp, "SLURM_JOB_ID", "1", 0));
	put(sp, "PROBE_JC_SET", spank_job_control_setenv(sp, "K", "v", 0));
	put(sp, "PROBE_JC_SET_AGAIN", spank_job_control_setenv(sp, "K", "w", 0));
	put(sp, "PROBE_JC_GET", spank_job_control_getenv(sp, "K", buf, sizeof(buf)));
	spank_setenv(sp, "PROBE_JC_VALUE", buf, 1);
	put(sp, "PROBE_JC_GET_LEN0", spank_job_control_getenv(sp, "K", buf, 0));
	put(sp, "PROBE_JC_UNSET", spank_job_control_unsetenv(sp, "K"));
	put(sp, "PROBE_JC_GET_GONE", spank_job_control_getenv(sp, "K", buf, sizeof(buf)));
	put(sp, "PROBE_JC_IN_JOB_ENV", spank_getenv(sp, "SPANK_K", buf, sizeof(buf)));
	put(sp, "PROBE_ITEM_JOBID", spank_get_item(sp, 2, &u));
	put(sp, "PROBE_ITEM_JOBID_VALUE", (int)u);
	put(sp, "PROBE_ITEM_NODEID", spank_get_item(sp, 5, &u));
	put(sp, "PROBE_ITEM_NODEID_VALUE", (int)u);
	put(sp, "PROBE_ITEM_ARGV", spank_get_item(sp, 9, &u));
	put(sp, "PROBE_ITEM_ARRAY_ID", spank_get_item(sp, 30, &u));
	put(sp, "PROBE_ITEM_NULL", spank_get_item(sp, 2, (uint32_t *)NULL));
	spank_setenv(sp, "PROBE_STRERROR_6", spank_strerror(6), 1);
	put(sp, "PROBE_UNSET_RC", spank_unsetenv(sp, "PROBE_SPURD_VAR"));
	return 0;
}
