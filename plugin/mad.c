/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad.so: the SPANK front-end of mad-spank.  It adapts SPANK to lib/:
 * options in, job facts in, environment out.  Rules that keep slurmstepd
 * and spurd alive (design.md §9):
 *  - user errors fail the task in task_init (return -1), never init in a
 *    remote context (a failing batch-step init drains the node);
 *  - no per-job state in globals, no setenv/chdir/seteuid in the host;
 *  - SPANK functions spur lacks are weak references, tested before use;
 *  - messages are formatted here and passed with no live '%';
 *  - files are written as the job's user, never as root. */
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
#include "writer.h"

#include <slurm/spank.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

SPANK_PLUGIN(mad, 1);

#if HAVE_DECL_ESPANK_JOB_FAILURE
/* SLURM >= 25.05 reads this only when slurm_spank_init of a `required`
 * plugstack line fails: the value replaces init's return code, so the job
 * fails instead of the node draining.  On an `optional` line (ours) a failed
 * init is ignored anyway, and mad.so never fails a remote init. */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

/* Absent on spur (and so NULL there): see design.md §9. */
#pragma weak spank_option_register
#pragma weak spank_option_getopt
#pragma weak spank_context

#define BATCH_STEP 0xfffffffbU /* SLURM_BATCH_SCRIPT; spank.h lacks it */
#define MARKER_WAIT_MS 10000   /* a step's marker writers get this long in all */

enum log_level { LEVEL_ERROR, LEVEL_WARNING, LEVEL_INFO };

/* Logs "mad: MSG" with every '%' doubled: SLURM reads the argument as a
 * format, spur prints it verbatim, so no user byte can act as a format.
 * LEVEL_INFO: slurm_info (slurmd's log); LEVEL_ERROR: slurm_error (the job's
 * stderr too, after SLURM's "error: "); LEVEL_WARNING: slurm_spank_log, at
 * error's level without its prefix (spank.h), so a warning reads
 * "mad: warning: ..." on the task's stderr (spur logs it at info). */
__attribute__((format(printf, 2, 0))) static void log_message(enum log_level level, const char *fmt,
							      va_list ap)
{
	char msg[MAD_ERR_MAX], safe[2 * MAD_ERR_MAX + 8];
	size_t i, o = 0;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	memcpy(safe, "mad: ", 5);
	o = 5;
	for (i = 0; msg[i] && o + 3 < sizeof(safe); i++) {
		if (msg[i] == '%')
			safe[o++] = '%';
		safe[o++] = msg[i];
	}
	safe[o] = '\0';
	/* The message itself is the format: spur prints a format verbatim
	 * ("%s" would show as "%s" there), and every '%' is doubled above. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (level == LEVEL_INFO)
		slurm_info(safe);
	else if (level == LEVEL_WARNING)
		slurm_spank_log(safe);
	else
		slurm_error(safe);
#pragma GCC diagnostic pop
}

__attribute__((format(printf, 1, 2))) static void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_message(LEVEL_ERROR, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2))) static void log_warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_message(LEVEL_WARNING, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2))) static void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_message(LEVEL_INFO, fmt, ap);
	va_end(ap);
}

static int opt_callback(int val, const char *value, int remote);

/* Registered from every context, as SLURM ignores a static table in
 * sbatch.  Read-only after load: safe to share between jobs. */
static struct spank_option mad_spank_options[MAD_OPT_COUNT];

static void build_option_table(void)
{
	static char names[MAD_OPT_COUNT][32];
	int i;

	for (i = 0; i < MAD_OPT_COUNT; i++) {
		snprintf(names[i], sizeof(names[i]), "%s", mad_opt_flag((enum mad_opt)i) + 2);
		mad_spank_options[i].name = names[i];
		mad_spank_options[i].arginfo = (char *)mad_opt_arginfo((enum mad_opt)i);
		mad_spank_options[i].usage = (char *)mad_opt_usage((enum mad_opt)i);
		mad_spank_options[i].has_arg = 1;
		mad_spank_options[i].val = i;
		mad_spank_options[i].cb = opt_callback;
	}
}

/* Submit time (remote=0): a bad value stops sbatch/srun/salloc before
 * anything is queued.  Remote: accepted here and checked in task_init,
 * since a failure in a remote init would drain the node. */
static int opt_callback(int val, const char *value, int remote)
{
	char err[MAD_ERR_MAX];

	if (remote || val < 0 || val >= MAD_OPT_COUNT)
		return 0;
	if (mad_opt_check((enum mad_opt)val, value ? value : "", err, sizeof(err))) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[MAD_ERR_MAX];
	int i, local = 0;

	/* Which build runs here, in sbatch -v and the slurmd log: SLURM never
	 * loads a build for another release (one info line says so).  Not on
	 * spur (no spank_context): it loads any build, and calls init per job. */
	if (spank_context)
		slurm_verbose(MAD_LOAD_TEXT);
	if (spank_option_register) {
		if (!mad_spank_options[0].name)
			build_option_table(); /* same bytes every time: no race matters */
		for (i = 0; i < MAD_OPT_COUNT; i++)
			if (spank_option_register(sp, &mad_spank_options[i]) != ESPANK_SUCCESS)
				log_error("cannot register %s", mad_opt_flag((enum mad_opt)i));
	}
	if (spank_context)
		local = spank_context() == S_CTX_LOCAL || spank_context() == S_CTX_ALLOCATOR;
	/* A site's bad plugstack line is said at once, where a person reads
	 * it (sbatch, srun, salloc); remotely only jobs with a model fail. */
	if (local && mad_plugstack_check(ac, av, err, sizeof(err))) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

/* spank_getenv as lib/options wants it. */
static int job_getenv(void *ctx, const char *name, char *buf, size_t size)
{
	spank_err_t rc = spank_getenv((spank_t)ctx, name, buf, (int)size);

	if (rc == ESPANK_SUCCESS)
		return 1;
	return rc == ESPANK_NOSPACE ? -1 : 0;
}

static int job_setenv(void *ctx, const char *name, const char *value, const char *source)
{
	spank_err_t rc;

	(void)source;
	if (!value) { /* absent already is as good as removed */
		rc = spank_unsetenv((spank_t)ctx, name);
		return rc == ESPANK_SUCCESS || rc == ESPANK_ENV_NOEXIST ? 0 : -1;
	}
	return spank_setenv((spank_t)ctx, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* Resolves the options; 1 when this job has a model, 0 when the plugin has
 * nothing to do, -1 (ERR) when the job asked for mad with bad values. */
static int job_options(spank_t sp, int ac, char **av, struct mad_options *o, char *err, size_t size)
{
	const char *cli[MAD_OPT_COUNT] = { 0 };
	int i;

	if (spank_option_getopt)
		for (i = 0; i < MAD_OPT_COUNT; i++) {
			char *arg = NULL;

			if (spank_option_getopt(sp, &mad_spank_options[i], &arg) == ESPANK_SUCCESS && arg)
				cli[i] = arg;
		}
	if (mad_options_resolve(o, cli, job_getenv, sp, ac, av, err, size) == 0)
		return *o->value[MAD_OPT_MODEL] ? 1 : 0;
	/* Bad values matter only to a job that asked for mad at all. */
	return mad_options_model_asked(cli, job_getenv, sp, ac, av) ? -1 : 0;
}

/* The facts from the job env (lib), then what SPANK knows better on SLURM:
 * the step and, for an srun step, its node and this task's ids
 * (S_TASK_GLOBAL_ID, S_JOB_TOTAL_TASK_COUNT, S_TASK_ID,
 * S_JOB_LOCAL_TASK_COUNT).  spur answers S_JOB_STEPID, S_JOB_NNODES,
 * S_JOB_NODEID and the task counts with 0 and success and lacks the task
 * ids, so those count only where the host is SLURM. */
static void job_facts(spank_t sp, struct mad_facts *f, char *nodelist, size_t size)
{
	uint32_t u32, step;
	int slurm = spank_option_register != NULL, het;
	char buf[16];

	mad_facts_from_env(f, job_getenv, sp, nodelist, size);
	/* A heterogeneous job: SLURM keeps the items relative to this
	 * component (slurmstepd adds the het offsets to SLURM_PROCID and
	 * SLURM_NODEID only, src/slurmd/slurmstepd/task.c) while the env is
	 * the step's over every component it spans, and SLURM_JOB_ID the
	 * leader's: there the env decides, so one step is one world. */
	het = job_getenv(sp, "SLURM_HET_SIZE", buf, sizeof(buf)) == 1;
	f->host_lacks_options = !slurm;
	{
		uid_t uid;

		if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS)
			f->uid = (long)uid;
	}
	if (!het && spank_get_item(sp, S_JOB_ID, &u32) == ESPANK_SUCCESS && u32)
		f->job_id = u32;
	if (!slurm)
		return;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return;
	f->batch_step = step == BATCH_STEP;
	if (f->batch_step) {
		f->step_id = f->task_id = f->ntasks = f->local_id = f->local_ntasks = MAD_NONE;
		if (job_getenv(sp, "SLURM_JOB_NODELIST", nodelist, size) != 1)
			nodelist[0] = '\0';
		return;
	}
	f->step_id = step < 0x7fffffffU ? (long)step : MAD_NONE;
	if (het)
		return;
	if (spank_get_item(sp, S_JOB_NNODES, &u32) == ESPANK_SUCCESS && u32 > 0) {
		f->nnodes = u32;
		if (spank_get_item(sp, S_JOB_NODEID, &u32) == ESPANK_SUCCESS)
			f->node_id = u32;
	}
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &u32) == ESPANK_SUCCESS)
		f->task_id = u32;
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &u32) == ESPANK_SUCCESS && u32 > 0)
		f->ntasks = u32;
	if (spank_get_item(sp, S_TASK_ID, &u32) == ESPANK_SUCCESS)
		f->local_id = u32;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &u32) == ESPANK_SUCCESS && u32 > 0)
		f->local_ntasks = f->node_tasks = u32;
}

/* A task waiting for rank 0 has not exec'd yet: it is still named
 * "slurmstepd", and proctrack/linuxproc skips processes of that name when it
 * signals a step, so scancel could not end it and the node would drain
 * ("Kill task failed").  Here, in SLURM's forked task process and nowhere
 * else, the wait gets its own name and the default SIGTERM action, both of
 * which the coming execve would set anyway. */
static void make_killable_while_waiting(void)
{
	if (!spank_context || spank_context() != S_CTX_REMOTE)
		return;
	prctl(PR_SET_NAME, "mad-rendezvous", 0, 0, 0);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
}

/* Rank 0's address by the run folder (array fan-out, --mad-iface in nodes
 * fan-out, srun -m arbitrary): rank 0's node (task 0, with -m arbitrary)
 * publishes it; every other task waits for it, killable.  On spur
 * this runs as root inside spurd: it touches no file in the user's run
 * folder and never blocks, so every rank is left pending and
 * eval "$(mad-env)", running as the user in the job, publishes or waits. */
static int rendezvous(spank_t sp, const struct mad_options *o, const struct mad_facts *f,
		      struct mad_contract *c, char *err, size_t size)
{
	if (f->host_lacks_options)
		return job_setenv(sp, "MAD_RENDEZVOUS", "pending", NULL);
	if (c->task0_publishes ? c->task_rank != 0 : c->rank != 0)
		make_killable_while_waiting();
	return mad_contract_rendezvous(o, c, 1, err, size);
}

/* A failure this task's marker should record (we are the user here). */
static void mark_failure(struct mad_contract *c, const struct mad_facts *f, const char *why)
{
	char err[MAD_ERR_MAX];

	if (!*c->run_dir || !f->batch_step || f->host_lacks_options)
		return; /* on spur we are root in spurd: no file, mad-mark does it */
	/* the folder may not be open yet (no rendezvous opened it): the
	 * reason must reach the marker all the same */
	if ((c->job_dir_fd >= 0 || mad_contract_job_dir(c, MAD_JOBDIR_JOIN, err, sizeof(err)) == 0) &&
	    mad_expected_write(c->job_dir_fd, c->job_dir, c->markers_expected, NULL, 0) == 0)
		/* in the task SLURM forked: its parent is the step's slurmstepd,
		 * whose task_exit keeps this marker (and no earlier job's) */
		mad_marker_leave(c->job_dir_fd, c->job_dir, c->rank, c->collect_job_id, 1, why,
				 (long)getppid(), NULL, 0);
}

/* Opens the attempt's job folder in task_init (jobdir.h).  In nodes
 * fan-out SLURM's batch step runs before anything else of its attempt, so
 * it founds a fresh one; an array task's batch step joins its siblings'
 * (they share the identity and start in any order); an srun step finds the
 * one its batch step opened, and one that makes its own (salloc: no batch
 * step) does so only when it needs one.  Never on spur: there we are root
 * in spurd. */
static int open_job_dir(struct mad_contract *c, const struct mad_facts *f, char *err, size_t size)
{
	enum mad_jobdir_mode mode = !f->batch_step                ? MAD_JOBDIR_FIND :
				    c->fanout == MAD_FANOUT_NODES ? MAD_JOBDIR_FOUND :
								    MAD_JOBDIR_JOIN;
	int rc;

	if (!*c->run_dir || f->host_lacks_options)
		return 0;
	/* an array's other ranks wait for rank 0's folder: scancel must end them */
	if (mode == MAD_JOBDIR_JOIN && c->rank != 0)
		make_killable_while_waiting();
	rc = mad_contract_job_dir(c, mode, err, size);
	if (rc < 0)
		return -1;
	/* a folder someone planted is said where the user reads (the job's
	 * stderr); an earlier job's moved aside is routine: slurmd's log.
	 * mad-env --explain names both (MAD_JOB_DIR's source). */
	for (char *p = c->job_dir_notes, *end; *p; p = end) {
		end = strstr(p, "; ");
		if (end)
			*end = '\0';
		if (strncmp(p, "ignored", 7) == 0)
			log_error("%s", p);
		else
			log_info("%s", p);
		if (end)
			*end = ';', end += 2;
		else
			end = p + strlen(p);
	}
	return 0;
}

/* The task cannot have a correct contract: it must not run (design.md §14, defect 4:
 * never an empty MASTER_ADDR).  SLURM fails the task on -1 only for a
 * "required" plugin and ignores "optional" ones, so in SLURM's task child
 * (forked for this task, about to exec it) we end it as SLURM itself does
 * for a required plugin.  Never on spur: there this runs inside spurd, and
 * the task gets MAD_ERROR instead. */
static int fail_task(spank_t sp, const char *why)
{
	if (spank_option_register && spank_context && spank_context() == S_CTX_REMOTE)
		_exit(1);
	/* spur runs the job whatever a hook returns: leave the reason where
	 * mad-env and the templates stop on it. */
	spank_setenv(sp, "MAD_ERROR", why, 1);
	return -1;
}

/* task_init's work once the options ask for mad: C is computed here and
 * released by the caller, whatever this returns. */
static int task_contract(spank_t sp, const struct mad_options *o, const struct mad_facts *f,
			 struct mad_contract *c)
{
	char err[MAD_ERR_MAX];

	if (mad_contract_compute(o, f, c, err, sizeof(err)) || open_job_dir(c, f, err, sizeof(err))) {
		log_error("%s", err);
		return fail_task(sp, err);
	}
	/* set_device(LOCAL_RANK) cannot work here: one line on the task's
	 * stderr, or with --mad-gpu-bind=strict the task fails now, before
	 * its first collective (design.md §7) */
	if (mad_contract_device_mismatch(c, err, sizeof(err))) {
		if (!c->gpu_strict) {
			log_warning("%s", err);
		} else {
			log_error("%s", err);
			mark_failure(c, f, err);
			return fail_task(sp, err);
		}
	}
	if (c->needs_rendezvous && rendezvous(sp, o, f, c, err, sizeof(err))) {
		mark_failure(c, f, err);
		log_error("%s", err);
		return fail_task(sp, err);
	}
	/* MAD_IFNAME and --mad-socket-ifname, once rank 0's address is known */
	if (mad_contract_ifname(o, f, c, err, sizeof(err))) {
		mark_failure(c, f, err);
		log_error("%s", err);
		return fail_task(sp, err);
	}
	/* a busy port fails rank 0 now, not a launcher 30 minutes later */
	if (mad_contract_check_port(c, err, sizeof(err))) {
		mark_failure(c, f, err);
		log_error("%s", err);
		return fail_task(sp, err);
	}
	if (c->job_dir_fd >= 0 && f->batch_step &&
	    mad_expected_write(c->job_dir_fd, c->job_dir, c->markers_expected, err, sizeof(err))) {
		log_error("%s", err);
		return fail_task(sp, err);
	}
	if (mad_contract_export(o, c, "spank", job_setenv, sp)) {
		log_error("cannot set the job environment");
		return fail_task(sp, "cannot set the job environment");
	}
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	struct mad_options o;
	struct mad_facts f;
	struct mad_contract c;
	char err[MAD_ERR_MAX], nodelist[65536];
	int rc = job_options(sp, ac, av, &o, err, sizeof(err));

	if (rc <= 0) {
		if (rc < 0) {
			log_error("%s", err);
			return fail_task(sp, err);
		}
		return 0;
	}
	job_facts(sp, &f, nodelist, sizeof(nodelist));
	/* NCCL's own files: as the user in slurmstepd's task; in spur's node
	 * daemon (root, every job's threads) no user's home, /etc's alone */
	mad_facts_nccl_conf(&f, &o, job_getenv, sp, f.host_lacks_options);
	/* nothing of this job stays open in the host (spurd runs every job) */
	rc = task_contract(sp, &o, &f, &c);
	mad_contract_release(&c);
	return rc;
}

/* What the marker writers of this slurmstepd (one step) may wait in all:
 * they run in its task-reaping loop, one task after another, so a hung
 * shared folder costs the step this once, not once per task.  A global is
 * right here only: slurmstepd is a process per step, and on spur (one
 * daemon for every job) the plugin writes no file. */
static struct mad_child_budget marker_budget = { MARKER_WAIT_MS * 1000L };

/* Who writes a marker: the job's user, with the groups SLURM gave its
 * tasks (looked up by slurmd already), through which a run folder may be
 * writable.  The gids are SPANK's own list, which lives as long as the step. */
static int writer_of(spank_t sp, struct mad_writer_job *w)
{
	gid_t *gids = NULL;
	int n = 0;

	if (spank_get_item(sp, S_JOB_UID, &w->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &w->gid) != ESPANK_SUCCESS) {
		log_error("cannot tell the job's user: no completion marker written");
		return -1;
	}
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &n) != ESPANK_SUCCESS || n < 0 || !gids)
		gids = NULL, n = 0;
	w->gids = gids;
	w->ngids = n > MAD_WRITER_GIDS_MAX ? MAD_WRITER_GIDS_MAX : n;
	return 0;
}

/* How this slurmstepd starts its marker writers: the program mad-writer by
 * posix_spawn, once it was found usable, else a fork (design.md §10).
 * Decided at the first write of the step; per slurmstepd, as marker_budget. */
static enum { WRITER_UNKNOWN, WRITER_SPAWN, WRITER_FORK } writer_way;

static int spawn_allowed(void)
{
	char why[MAD_ERR_MAX];

	if (writer_way == WRITER_UNKNOWN) {
		writer_way = mad_writer_spawnable(MAD_WRITER_PATH, why, sizeof(why)) ? WRITER_SPAWN :
										       WRITER_FORK;
		if (writer_way == WRITER_FORK)
			log_info("%s is not started: %s: the markers are written by a fork of slurmstepd",
				 MAD_WRITER_PATH, why);
	}
	return writer_way == WRITER_SPAWN;
}

/* A descriptor of memory (memfd: a file that never waits), above 2, since
 * dup2 onto itself would keep its close-on-exec; -1 when none. */
static int memory_file(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd >= 0 && fd < 3) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = high;
	}
	return fd;
}

/* Starts mad-writer with the request REQ (LEN bytes) on its standard input:
 * a descriptor of memory, written whole before the start, so neither side
 * waits on the other; its standard error goes to the memory file ERRFD, read
 * once it has ended.  Its pid, or -1. */
static pid_t spawn_writer(const void *req, size_t len, int errfd)
{
	static char *const argv[] = { "mad-writer", NULL }, *const envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all, none;
	pid_t pid = -1;
	int fd = errfd < 0 ? -1 : memory_file("mad-writer"), rc;

	if (fd < 0)
		return -1;
	if (write(fd, req, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	/* slurmstepd's own signal state is not the writer's: every signal at
	 * its default (SIGKILL ends it at the budget's end), none blocked */
	rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&attr, &all);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fd, 0);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	if (!rc)
		rc = posix_spawn(&pid, MAD_WRITER_PATH, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(fd);
	if (rc) {
		log_info("cannot start %s: %s: the markers are written by a fork of slurmstepd",
			 MAD_WRITER_PATH, strerror(rc));
		writer_way = WRITER_FORK;
		return -1;
	}
	return pid;
}

/* The writer as a fork of slurmstepd: the same request, checked and carried
 * out by the same code as mad-writer's, with system calls only. */
static pid_t fork_writer(const void *req, size_t len)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(mad_writer_serve(req, len, NULL, 0));
	return pid;
}

/* What a spawned mad-writer wrote to its standard error ERRFD, its first
 * bytes with its lines joined (no control character reaches slurmd's log),
 * into SAID ("" when nothing). */
static void writer_said(int errfd, char *said, size_t size)
{
	ssize_t n = errfd < 0 ? -1 : pread(errfd, said, size - 1, 0);

	said[n > 0 ? n : 0] = '\0';
	while (n > 0 && (said[n - 1] == '\n' || said[n - 1] == '\r'))
		said[--n] = '\0';
	for (char *c = said; *c; c++)
		if (*c == '\n' || (unsigned char)*c < ' ')
			*c = ' ';
}

/* Whether a spawned writer's end (STATUS, as waitpid gives it) is one of
 * this build's answers; else (a signal, a loader's 127, a code that is
 * none of lib/writer.h's, or 80: another build's) why not into WHY. */
static int writer_answered(int status, const char *said, char *why, size_t size)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) != MAD_WRITER_OTHER_BUILD &&
	    mad_writer_strerror(WEXITSTATUS(status)))
		return 1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == MAD_WRITER_OTHER_BUILD)
		snprintf(why, size, "is of another build than this mad.so");
	else if (WIFEXITED(status))
		snprintf(why, size, "exited %d%s%s", WEXITSTATUS(status), *said ? ": " : "", said);
	else
		snprintf(why, size, "was killed by signal %d",
			 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}

/* Writes the N markers M in the attempt's job folder W->dir as the job's
 * user W, from one child that drops every id (keeping the user's groups)
 * before it touches the user's folder, so a planted symlink never makes
 * root write through it, opens the folder once, and writes each marker in
 * it.  W->job_id >= 0 (the batch script's marker): a failure its task_init
 * recorded stays. */
static void write_markers_as_user(const struct mad_writer_job *w, const struct mad_writer_marker *m,
				  int n)
{
	const char *base = w->dir.base, *others = n > 1 ? " and others of this node" : "";
	size_t len = mad_writer_request_size(w, n);
	int status = 0, rc, spawned = 0, errfd = -1;
	char said[256] = "", why[MAD_ERR_MAX];
	void *req;
	pid_t pid;

	if (marker_budget.left_us <= 0) {
		log_error("the marker '%s/%s'%s is not written: the shared folder did not answer within %d s for this step's earlier markers",
			  base, m[0].name, others, MARKER_WAIT_MS / 1000);
		return;
	}
	req = len ? malloc(len) : NULL;
	if (!req) {
		log_error("no room for the completion marker '%s/%s'%s: not written", base,
			  m[0].name, others);
		return;
	}
	mad_writer_encode(w, m, n, req);
	if (spawn_allowed()) {
		errfd = memory_file("mad-writer-stderr");
		pid = spawn_writer(req, len, errfd);
		spawned = pid > 0;
	}
	if (!spawned)
		pid = fork_writer(req, len);
	rc = pid < 0 ? -2 : mad_child_reap(pid, &marker_budget, &status);
	if (rc == 0 && spawned) {
		writer_said(errfd, said, sizeof(said));
		/* a mad-writer that did not run this build's code (another build's,
		 * installed under a running step; one that cannot load or was
		 * killed): this build's own code writes the request, and the step's
		 * later ones */
		if (!writer_answered(status, said, why, sizeof(why))) {
			log_info("%s %s: the markers are written by a fork of slurmstepd",
				 MAD_WRITER_PATH, why);
			writer_way = WRITER_FORK;
			*said = '\0';
			pid = fork_writer(req, len);
			rc = pid < 0 ? -2 : mad_child_reap(pid, &marker_budget, &status);
		}
	}
	if (errfd >= 0)
		close(errfd);
	free(req);
	if (rc == -2)
		log_error("fork failed: %s: the completion marker '%s/%s'%s is not written",
			  strerror(errno), base, m[0].name, others);
	else if (rc == 1)
		log_error("the completion marker '%s/%s'%s was not written within %d s (the shared folder hangs?)",
			  base, m[0].name, others, MARKER_WAIT_MS / 1000);
	else if (rc < 0)
		log_error("cannot tell whether the completion marker '%s/%s'%s was written: %s",
			  base, m[0].name, others, strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		log_error("could not write the completion marker '%s/%s'%s as uid %u: %s%s%s%s",
			  base, m[0].name, n > 1 ? " or another of this node" : "", (unsigned)w->uid,
			  WIFEXITED(status) && mad_writer_strerror(WEXITSTATUS(status)) ?
				  mad_writer_strerror(WEXITSTATUS(status)) :
				  "the writer was killed",
			  *said ? " (" : "", said, *said ? ")" : "");
}

/* The step markers of this slurmstepd's tasks that exited 0, held until
 * the node's last task has ended, then written by one child for them all
 * (design.md §10): one fork, one walk of the run folder's path per node
 * and step, not per task.  A task that fails is written at once, so its
 * failure is named without waiting for its siblings.  Per slurmstepd, as
 * marker_budget; slurm_spank_exit writes what is still held. */
static struct {
	struct mad_writer_marker *m;
	int n, cap;
	long exits;              /* task_exit calls of this step on this node */
	struct mad_writer_job w; /* the same attempt and user for every task of a step */
} held;

static void write_held(void)
{
	if (!held.m)
		return; /* nothing held: nothing written (spurd's threads come here) */
	for (int i = 0; i < held.n; i += MAD_WRITER_MARKERS_MAX)
		write_markers_as_user(&held.w, held.m + i,
				      held.n - i < MAD_WRITER_MARKERS_MAX ? held.n - i :
									    MAD_WRITER_MARKERS_MAX);
	free(held.m);
	held.m = NULL;
	held.n = held.cap = 0;
}

/* Holds marker M of a task that exited 0 for its node's last task; 0, or
 * -1 when it cannot be held (it is then written at once). */
static int hold(const struct mad_writer_marker *m, const struct mad_writer_job *w)
{
	if (held.n == held.cap) {
		int cap = held.cap ? 2 * held.cap : 8;
		struct mad_writer_marker *grown =
			held.cap <= (1 << 20) ? realloc(held.m, (size_t)cap * sizeof(*m)) : NULL;

		if (!grown)
			return -1;
		held.m = grown;
		held.cap = cap;
	}
	if (held.n == 0)
		held.w = *w;
	held.m[held.n++] = *m;
	return 0;
}

/* A task ended: the batch script leaves its completion marker, and in
 * nodes fan-out each task of an srun step leaves step<S>_rank<R>, so a
 * failure names its node, task and step (design.md §10).  Runs as root in
 * slurmstepd; spur calls it with an empty env and mad-mark does this
 * there. */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	struct mad_options o;
	struct mad_facts f;
	struct mad_contract c;
	struct mad_writer_marker m;
	struct mad_writer_job w;
	char err[MAD_ERR_MAX], nodelist[65536];
	int wstatus, status, last;
	uint32_t here = 0;

	if (job_options(sp, ac, av, &o, err, sizeof(err)) <= 0)
		return 0;
	job_facts(sp, &f, nodelist, sizeof(nodelist));
	if (!*o.value[MAD_OPT_RUN_DIR] || f.host_lacks_options ||
	    (!f.batch_step && f.step_id == MAD_NONE))
		return 0;
	/* who and where only: no name lookup in slurmstepd's reaping loop */
	if (mad_contract_ids(&o, &f, &c, err, sizeof(err)))
		return 0; /* task_init already failed the job and said why */
	/* array tasks share one folder, where their steps' names would collide */
	if (!f.batch_step && c.fanout != MAD_FANOUT_NODES)
		return 0;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &wstatus) != ESPANK_SUCCESS)
		return 0;
	status = WIFEXITED(wstatus)   ? WEXITSTATUS(wstatus) :
		 WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) :
					1;
	if (f.batch_step)
		mad_marker_name(m.name, sizeof(m.name), c.rank);
	else
		mad_step_marker_name(m.name, sizeof(m.name), c.step_id, c.task_rank);
	m.len = (uint32_t)mad_marker_format(m.content, sizeof(m.content), status,
					    f.batch_step ? c.rank : c.task_rank, c.collect_job_id,
					    NULL, -1);
	if (!m.len || mad_contract_jobdir(&c, &w.dir, err, sizeof(err)) || writer_of(sp, &w))
		return 0;
	if (f.batch_step) {
		w.flags = 0;
		w.job_id = c.collect_job_id;
		w.stepd = (long)getpid(); /* the slurmstepd whose task_init recorded it */
		write_markers_as_user(&w, &m, 1);
		return 0;
	}
	w.flags = MAD_WRITE_NOSYNC;
	w.job_id = w.stepd = -1;
	/* A step task's marker only names a failure (the batch marker decides):
	 * not worth an fsync per task in slurmstepd's reaping loop, nor a child
	 * per task where one serves the node. */
	last = spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &here) != ESPANK_SUCCESS ||
	       ++held.exits >= (long)here;
	if ((status != 0 && !last) || hold(&m, &w))
		write_markers_as_user(&w, &m, 1);
	if (last)
		write_held();
	return 0;
}

/* The step ends on this node: markers still held (a task that never
 * reached task_exit) are written now.  Nothing else: without held markers
 * (every other host and context) it returns at once. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	write_held();
	return 0;
}
