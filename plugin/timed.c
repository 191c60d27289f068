/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-timed.so: mad.c unchanged, each SPANK hook wrapped to log its wall
 * and CPU time in slurmd's log, for bench/plugin's per-hook profile.  Built
 * beside mad.so and never installed: the shipped mad.so carries no timing.
 * The hooks of mad.c are renamed as it is included, so any version of
 * mad.c (the one before a change, for a profile side by side) builds the
 * same way; a hook it does not define is weak here and logged as absent by
 * nothing at all (the bench shows it as "-").  One line a call, from
 * slurmstepd and from the task (task_init runs in the task's process):
 *   mad: hook NAME wall_us=W cpu_us=C step=S node=N task=T */
#include "config.h"

#include <slurm/spank.h>

#include <stdint.h>
#include <time.h>

#define MAD_TIMED_HOOKS(X)                          \
	X(init, slurm_spank_init)                   \
	X(init_post_opt, slurm_spank_init_post_opt) \
	X(user_init, slurm_spank_user_init)         \
	X(task_init, slurm_spank_task_init)         \
	X(task_exit, slurm_spank_task_exit)         \
	X(exit, slurm_spank_exit)

/* mad.c's hooks become mad_timed_<name>, weak where mad.c lacks them */
#define slurm_spank_init mad_timed_init
#define slurm_spank_init_post_opt mad_timed_init_post_opt
#define slurm_spank_user_init mad_timed_user_init
#define slurm_spank_task_init mad_timed_task_init
#define slurm_spank_task_exit mad_timed_task_exit
#define slurm_spank_exit mad_timed_exit
#define DECLARE(name, hook) __attribute__((weak)) int mad_timed_##name(spank_t, int, char **);
MAD_TIMED_HOOKS(DECLARE)
#include "mad.c"
#undef slurm_spank_init
#undef slurm_spank_init_post_opt
#undef slurm_spank_user_init
#undef slurm_spank_task_init
#undef slurm_spank_task_exit
#undef slurm_spank_exit

static long us_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000L;
}

static int timed(int (*hook)(spank_t, int, char **), const char *name, spank_t sp, int ac, char **av)
{
	struct timespec w0, w1, c0, c1;
	uint32_t step = 0, node = 0, task = 0;
	long t = -1;
	int rc;

	if (!hook)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	rc = hook(sp, ac, av);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	if (!spank_context || spank_context() != S_CTX_REMOTE)
		return rc;
	spank_get_item(sp, S_JOB_STEPID, &step);
	spank_get_item(sp, S_JOB_NODEID, &node);
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task) == ESPANK_SUCCESS)
		t = (long)task;
	log_info("hook %s wall_us=%ld cpu_us=%ld step=%u node=%u task=%ld", name,
		 us_between(&w0, &w1), us_between(&c0, &c1), (unsigned)step, (unsigned)node, t);
	return rc;
}

#define WRAP(name, hook)                                           \
	int hook(spank_t sp, int ac, char **av);                   \
	int hook(spank_t sp, int ac, char **av)                    \
	{                                                          \
		return timed(mad_timed_##name, #name, sp, ac, av); \
	}
MAD_TIMED_HOOKS(WRAP)
