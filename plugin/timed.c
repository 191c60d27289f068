/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-timed.so: mad.c unchanged, each SPANK hook wrapped to log its wall
 * and CPU time in slurmd's log, for bench/plugin's per-hook profile.  Built
 * beside mad.so and never installed: the shipped mad.so carries no timing.
 * The hooks of mad.c are renamed as it is included, so any version of
 * mad.c (the one before a change, for a profile side by side) builds the
 * same way; a hook it does not define is weak here and logged as absent by
 * nothing at all (the bench shows it as "-").  One line a call, from
 * slurmstepd and from the task (task_init runs in the task's process):
 *   mad: hook NAME wall_us=W cpu_us=C step=S node=N task=T [phases=P:C,...
 *        spank=CALL:N:C,...] minflt=F
 * and minflt the page faults the call took (a task's first write to a page
 * of the slurmstepd it was forked from copies the page).
 * task_init's and task_exit's lines add the CPU time (us) of each phase (the
 * lib calls mad.c makes, wrapped by name as it is included, so mad.c stays
 * unchanged; a phase the hook does not run is 0, "other" is the rest), and
 * the count and CPU time of the SPANK calls made within them. */
#include "config.h"

#include "child.h"
#include "contract.h"
#include "error.h"
#include "marker.h"
#include "netaddr.h"
#include "options.h"
#include "jobdir.h"
#include "rendezvous.h"
#include "version.h"

#include <slurm/spank.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <spawn.h> /* posix_spawn's and fork's declarations, before the macros that time them */
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* task_init's phases, in the order it runs them, then task_exit's own
 * (it runs options and facts too) */
#define MAD_TIMED_PHASES(X) \
	X(options)          \
	X(facts)            \
	X(nccl_conf)        \
	X(compute)          \
	X(job_dir)          \
	X(device)           \
	X(rendezvous)       \
	X(ifname)           \
	X(port)             \
	X(expected)         \
	X(export)           \
	X(release)          \
	X(ids)              \
	X(jobdir_name)      \
	X(spawn)            \
	X(fork)             \
	X(reap)
#define PHASE_ENUM(name) PHASE_##name,
enum { MAD_TIMED_PHASES(PHASE_ENUM) PHASE_COUNT };
#define PHASE_NAME(name) #name,
static const char *const phase_names[PHASE_COUNT] = { MAD_TIMED_PHASES(PHASE_NAME) };
static long phase_ns[PHASE_COUNT];

static long cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* The headers above are in: from here a call by these names in mad.c is
 * timed into its phase (a macro does not expand inside itself). */
#define CPU_ADD(acc, call)                          \
	__extension__({                             \
		long timed_t0_ = cpu_ns();          \
		__typeof__(call) timed_r_ = (call); \
		(acc) += cpu_ns() - timed_t0_;      \
		timed_r_;                           \
	})
#define TIMED(phase, call) CPU_ADD(phase_ns[PHASE_##phase], call)
#define TIMED_VOID(phase, call)                                  \
	do {                                                     \
		long timed_t0_ = cpu_ns();                       \
		call;                                            \
		phase_ns[PHASE_##phase] += cpu_ns() - timed_t0_; \
	} while (0)
/* SPANK's calls, within those phases (and in "other"): how many, and
 * their CPU time */
#define MAD_TIMED_CALLS(X) \
	X(getenv)          \
	X(setenv)          \
	X(getopt)
#define CALL_ENUM(name) CALL_##name,
enum { MAD_TIMED_CALLS(CALL_ENUM) CALL_COUNT };
#define CALL_NAME(name) #name,
static const char *const call_names[CALL_COUNT] = { MAD_TIMED_CALLS(CALL_NAME) };
static long call_n[CALL_COUNT], call_ns[CALL_COUNT];
#define COUNTED(name, call) (call_n[CALL_##name]++, CPU_ADD(call_ns[CALL_##name], call))
#define spank_getenv(...) COUNTED(getenv, spank_getenv(__VA_ARGS__))
#define spank_setenv(...) COUNTED(setenv, spank_setenv(__VA_ARGS__))
#define spank_option_getopt(...) COUNTED(getopt, spank_option_getopt(__VA_ARGS__))

#define mad_options_resolve(...) TIMED(options, mad_options_resolve(__VA_ARGS__))
#define mad_facts_from_env(...) TIMED_VOID(facts, mad_facts_from_env(__VA_ARGS__))
#define mad_facts_nccl_conf(...) TIMED_VOID(nccl_conf, mad_facts_nccl_conf(__VA_ARGS__))
#define mad_contract_compute(...) TIMED(compute, mad_contract_compute(__VA_ARGS__))
#define mad_contract_job_dir(...) TIMED(job_dir, mad_contract_job_dir(__VA_ARGS__))
#define mad_contract_device_mismatch(...) TIMED(device, mad_contract_device_mismatch(__VA_ARGS__))
#define mad_contract_rendezvous(...) TIMED(rendezvous, mad_contract_rendezvous(__VA_ARGS__))
#define mad_contract_ifname(...) TIMED(ifname, mad_contract_ifname(__VA_ARGS__))
#define mad_contract_check_port(...) TIMED(port, mad_contract_check_port(__VA_ARGS__))
#define mad_expected_write(...) TIMED(expected, mad_expected_write(__VA_ARGS__))
#define mad_contract_export(...) TIMED(export, mad_contract_export(__VA_ARGS__))
#define mad_contract_release(...) TIMED_VOID(release, mad_contract_release(__VA_ARGS__))
#define mad_contract_ids(...) TIMED(ids, mad_contract_ids(__VA_ARGS__))
#define mad_contract_jobdir(...) TIMED(jobdir_name, mad_contract_jobdir(__VA_ARGS__))
#define mad_child_reap(...) TIMED(reap, mad_child_reap(__VA_ARGS__))
/* the marker writer's start in slurmstepd, mad-writer's spawn or a fork (the
 * child's share is the child's) */
#define posix_spawn(...) TIMED(spawn, posix_spawn(__VA_ARGS__))
#define fork() TIMED(fork, fork())

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
#undef spank_getenv
#undef spank_setenv
#undef spank_option_getopt

static long us_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000L;
}

static int timed(int (*hook)(spank_t, int, char **), const char *name, spank_t sp, int ac, char **av)
{
	struct timespec w0, w1, c0, c1;
	struct rusage r0, r1;
	uint32_t step = 0, node = 0, task = 0;
	long t = -1, phased = 0;
	char phases[640] = "";
	size_t len = 0;
	int rc, i;

	if (!hook)
		return 0;
	memset(phase_ns, 0, sizeof(phase_ns));
	memset(call_n, 0, sizeof(call_n));
	memset(call_ns, 0, sizeof(call_ns));
	getrusage(RUSAGE_THREAD, &r0);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	rc = hook(sp, ac, av);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	getrusage(RUSAGE_THREAD, &r1);
	if (!spank_context || spank_context() != S_CTX_REMOTE)
		return rc;
	spank_get_item(sp, S_JOB_STEPID, &step);
	spank_get_item(sp, S_JOB_NODEID, &node);
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task) == ESPANK_SUCCESS)
		t = (long)task;
	if (strcmp(name, "task_init") == 0 || strcmp(name, "task_exit") == 0) {
		for (i = 0; i < PHASE_COUNT; i++) {
			len += (size_t)snprintf(phases + len, sizeof(phases) - len, "%s%s:%ld",
						i ? "," : " phases=", phase_names[i],
						phase_ns[i] / 1000);
			phased += phase_ns[i] / 1000;
		}
		len += (size_t)snprintf(phases + len, sizeof(phases) - len, ",other:%ld",
					us_between(&c0, &c1) - phased);
		for (i = 0; i < CALL_COUNT; i++)
			len += (size_t)snprintf(phases + len, sizeof(phases) - len, "%s%s:%ld:%ld",
						i ? "," : " spank=", call_names[i], call_n[i],
						call_ns[i] / 1000);
	}
	log_info("hook %s wall_us=%ld cpu_us=%ld step=%u node=%u task=%ld%s minflt=%ld", name,
		 us_between(&w0, &w1), us_between(&c0, &c1), (unsigned)step, (unsigned)node, t,
		 phases, r1.ru_minflt - r0.ru_minflt);
	return rc;
}

#define WRAP(name, hook)                                           \
	int hook(spank_t sp, int ac, char **av);                   \
	int hook(spank_t sp, int ac, char **av)                    \
	{                                                          \
		return timed(mad_timed_##name, #name, sp, ac, av); \
	}
MAD_TIMED_HOOKS(WRAP)
