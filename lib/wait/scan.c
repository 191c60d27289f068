/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scan.c: reading job folders for mad-wait (see wait.h, mad_wait_scan). */
#include "wait.h"
#include "decimal.h"
#include "error.h"
#include "marker.h"
#include "jobdir.h"
#include "rendezvous.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RANKS_MAX 65536L
#define STEPS_MAX 1000000000L
#define TASKS_MAX 262144L /* step tasks kept per attempt */
#define MARKER_MAX 4096
#define ATTEMPT_GAP_MAX 4 /* attempts in a row without a folder */

int mad_wait_job_init(struct mad_wait_job *j, long id, const char *run_dir)
{
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->expected = -1;
	j->time_limit = -1;
	j->run_from = -1;
	j->verdict = MAD_WAIT_PENDING;
	j->uid = getuid();
	j->submitted = -1;
	j->attempt_from = -1;
	j->wait_start = (long)time(NULL);
	j->run_fd = -1;
	snprintf(j->run_dir, sizeof(j->run_dir), "%s", run_dir);
	snprintf(j->dir, sizeof(j->dir), "%s/%ld", run_dir, id);
	return 0;
}

void mad_wait_job_free(struct mad_wait_job *j)
{
	for (long k = 0; k < j->npast; k++) {
		free((void *)j->past[k].dir);
		free((void *)j->past[k].rank);
		free((void *)j->past[k].task);
	}
	free(j->past);
	free(j->rank);
	free(j->task);
	if (j->run_fd >= 0)
		close(j->run_fd);
	j->run_fd = -1;
	j->past = NULL;
	j->rank = NULL;
	j->task = NULL;
	j->npast = j->nrank = j->ntask = 0;
}

static int ensure_ranks(struct mad_wait_job *j, long n)
{
	struct mad_rank *r;

	if (n <= j->nrank)
		return 0;
	r = realloc(j->rank, (size_t)n * sizeof(*r));
	if (!r)
		return -1;
	memset(r + j->nrank, 0, (size_t)(n - j->nrank) * sizeof(*r));
	j->rank = r;
	j->nrank = n;
	return 0;
}

/* A decimal below MAX without leading zeros at P, up to END (or the NUL
 * when END is NULL); the number, or -1. */
static long name_number(const char *p, const char *end, long max)
{
	size_t len = end ? (size_t)(end - p) : strlen(p);
	uint64_t n;

	if ((len > 1 && *p == '0') || mad_decimal_span(p, len, 0, (uint64_t)max - 1, &n))
		return -1;
	return (long)n;
}

/* "done_rank<N>": N or -1. */
static long marker_rank(const char *name)
{
	return strncmp(name, "done_rank", 9) == 0 ? name_number(name + 9, NULL, RANKS_MAX) : -1;
}

/* "script_rank<N>": N or -1. */
static long script_rank(const char *name)
{
	return strncmp(name, "script_rank", 11) == 0 ? name_number(name + 11, NULL, RANKS_MAX) : -1;
}

/* "step<S>_rank<R>": 0 with S and R, or -1. */
static int marker_step_task(const char *name, long *step, long *task)
{
	const char *us;

	if (strncmp(name, "step", 4) != 0 || !(us = strchr(name + 4, '_')) ||
	    strncmp(us, "_rank", 5) != 0)
		return -1;
	*step = name_number(name + 4, us, STEPS_MAX);
	*task = name_number(us + 5, NULL, RANKS_MAX);
	return *step < 0 || *task < 0 ? -1 : 0;
}

/* Names a file or folder passed over, once, in j->ignored. */
static void ignore(struct mad_wait_job *j, const char *what)
{
	size_t n = strlen(j->ignored);

	if (strstr(j->ignored, what))
		return;
	snprintf(j->ignored + n, sizeof(j->ignored) - n, "%s%s", n ? "; " : "", what);
}

/* Whether NAME in the folder counts: a regular file of the job's user. */
static int trusted(struct mad_wait_job *j, int dirfd, const char *name, struct stat *st)
{
	char why[200], text[sizeof(j->dir) + 300];

	int rc = mad_file_check(dirfd, name, j->uid, st, why, sizeof(why));

	if (rc == 0)
		return 1;
	if (rc < 0 && errno == ENOENT)
		return 0; /* gone meanwhile */
	snprintf(text, sizeof(text), "ignored %.40s in %.600s: %s", name, j->dir, why);
	ignore(j, text);
	return 0;
}

/* The submit time squeue showed, else the wait's start while squeue has
 * not said (none once the job is confirmed gone unlisted). */
static long submit_bound(const struct mad_wait_job *j)
{
	return j->submitted >= 0 ? j->submitted : j->unbounded ? -1 : j->wait_start;
}

/* Whether a marker written at TIME (-1: unknown, MTIME then) is older than
 * the start of the run squeue showed: an earlier run's in the same folder
 * (spur re-runs a requeued job there, design.md §15).  Only for what a run
 * writes as it ends or serves: what it writes as it starts ('expected',
 * the rendezvous record) may be older than the controller's start by the
 * nodes' clock skew, and the same in every run.  Named in j->ignored. */
static int earlier_run(struct mad_wait_job *j, const char *name, long time, long mtime)
{
	char text[sizeof(j->dir) + 300];
	long t = time >= 0 ? time : mtime;

	if (j->last_read || j->attempt_from <= submit_bound(j) ||
	    t + MAD_WAIT_CLOCK_SLACK >= j->attempt_from)
		return 0;
	snprintf(text, sizeof(text),
		 "ignored %.40s in %.600s: written at %ld, before this run of the job started (%ld): an earlier attempt's",
		 name, j->dir, t, j->attempt_from);
	ignore(j, text);
	return 1;
}

/* Whether a file written at TIME (-1: unknown, MTIME then) is older than
 * the job (an earlier job's with the same id), or than the wait while
 * squeue has not said when the job was submitted.  AT_START: a file a run
 * writes as it starts ('expected', the rendezvous record, script_rank<N>),
 * held to the submit time only: a job that started before the wait wrote
 * it before, and a wait whose squeue never answers would otherwise never
 * learn the count (design.md §15).  Named in j->ignored. */
static int stale(struct mad_wait_job *j, const char *name, long time, long mtime, int at_start)
{
	char text[sizeof(j->dir) + 300];
	long t = time >= 0 ? time : mtime;
	long bound = at_start ? j->submitted : submit_bound(j);

	if (bound < 0 || t + MAD_WAIT_CLOCK_SLACK >= bound)
		return 0;
	if (j->submitted >= 0)
		snprintf(text, sizeof(text),
			 "ignored %.40s in %.600s: written at %ld, before the job was submitted (%ld): an earlier job's with the same id",
			 name, j->dir, t, j->submitted);
	else
		snprintf(text, sizeof(text),
			 "ignored %.40s in %.600s: written at %ld, before this wait began (%ld), until squeue says when the job was submitted",
			 name, j->dir, t, bound);
	ignore(j, text);
	return 1;
}

/* Small whole files only, opened without following a link. */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	size_t off = 0;
	ssize_t r = 0;

	if (fd < 0)
		return -1;
	while (off < size && (r = read(fd, buf + off, size - off)) > 0)
		off += (size_t)r;
	close(fd);
	return r < 0 ? -1 : (ssize_t)off;
}

/* Reads marker NAME of J's folder (open as DIRFD) into R, if it counts. */
static void read_marker(struct mad_wait_job *j, int dirfd, const char *name, struct mad_rank *r,
			const struct mad_wait_cfg *cfg, double now)
{
	const char *dir = j->dir;
	char buf[MARKER_MAX + 1];
	struct stat st;
	ssize_t len;
	int rc;

	if (!trusted(j, dirfd, name, &st))
		return; /* not the job's: the next scan looks again */
	len = read_small(dirfd, name, buf, MARKER_MAX + 1);
	if (len < 0)
		return; /* gone again, or not readable yet: the next scan retries */
	if (len > MARKER_MAX) {
		r->state = MAD_RANK_INVALID;
		snprintf(r->note, sizeof(r->note), "marker '%.180s/%.20s' is larger than %d bytes",
			 dir, name, MARKER_MAX);
		return;
	}
	rc = mad_marker_parse(buf, (size_t)len, &r->status, &r->time, r->host, sizeof(r->host),
			      r->note, sizeof(r->note));
	if (rc == 0) {
		if (r->state != MAD_RANK_EMPTY) {
			r->state = MAD_RANK_EMPTY;
			r->empty_since = now;
		} else if (now - r->empty_since >= cfg->empty_grace) {
			r->state = MAD_RANK_INVALID;
			snprintf(r->note, sizeof(r->note),
				 "marker '%.180s/%.20s' is still empty after %.0f s", dir, name,
				 cfg->empty_grace);
		}
		return;
	}
	if (rc < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", r->note);
		snprintf(r->note, sizeof(r->note), "marker '%.100s/%.20s': %.100s", dir, name, why);
		r->state = MAD_RANK_INVALID;
		return;
	}
	if (earlier_run(j, name, r->time, (long)st.st_mtime) ||
	    stale(j, name, r->time, (long)st.st_mtime, 0)) {
		r->state = MAD_RANK_MISSING; /* its writer may still replace it */
		r->note[0] = '\0';
		return;
	}
	r->state = r->status == 0 ? MAD_RANK_DONE : MAD_RANK_FAILED;
}

static void read_rank(struct mad_wait_job *j, int dirfd, const char *name, long n,
		      const struct mad_wait_cfg *cfg, double now)
{
	read_marker(j, dirfd, name, &j->rank[n], cfg, now);
}

/* A step task's marker: read as a rank's, kept smaller (no note). */
static void read_task(struct mad_wait_job *j, int dirfd, const char *name, struct mad_step_task *t,
		      const struct mad_wait_cfg *cfg, double now)
{
	struct mad_rank r;
	enum mad_rank_state before = t->state;

	memset(&r, 0, sizeof(r));
	r.state = t->state;
	r.empty_since = t->empty_since;
	read_marker(j, dirfd, name, &r, cfg, now);
	t->state = r.state;
	t->status = r.state == MAD_RANK_INVALID ? -1 : r.status;
	t->time = r.time;
	t->empty_since = r.empty_since;
	memcpy(t->host, r.host, sizeof(t->host));
	if (before != t->state && (t->state == MAD_RANK_FAILED || t->state == MAD_RANK_INVALID))
		j->ntask_failed++;
}

static int task_order(const void *a, const void *b)
{
	const struct mad_step_task *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* The entry of step STEP task TASK: found among the NSORTED sorted ones,
 * else a new one at the end (NULL when there is no room). */
static struct mad_step_task *task_entry(struct mad_wait_job *j, long nsorted, long *cap, long step,
					long task)
{
	struct mad_step_task key = { .step = step, .task = task }, *t;

	t = nsorted ? bsearch(&key, j->task, (size_t)nsorted, sizeof(*t), task_order) : NULL;
	if (t)
		return t;
	if (j->ntask == TASKS_MAX)
		return NULL;
	if (j->ntask == *cap) {
		long ncap = *cap ? *cap * 2 : 64;

		t = realloc(j->task, (size_t)ncap * sizeof(*t));
		if (!t)
			return NULL;
		j->task = t;
		*cap = ncap;
	}
	t = &j->task[j->ntask++];
	memset(t, 0, sizeof(*t));
	t->step = step;
	t->task = task;
	t->status = -1;
	t->time = -1;
	return t;
}

static long read_count(struct mad_wait_job *j, int dirfd, const char *name, long *out)
{
	char buf[256];
	struct stat st;
	ssize_t len;
	long n;

	if (!trusted(j, dirfd, name, &st) || stale(j, name, -1, (long)st.st_mtime, 1))
		return -1;
	len = read_small(dirfd, name, buf, sizeof(buf) - 1);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0'; /* the first line counts */
	if (mad_decimal(buf, 1, RANKS_MAX, &n))
		return -1;
	*out = n;
	return 0;
}

static void learn_expected(struct mad_wait_job *j, int dirfd, int has_expected, int has_record,
			   const struct mad_wait_cfg *cfg)
{
	struct mad_rdzv rec;
	char err[MAD_ERR_MAX];

	if (j->expected > 0)
		return;
	if (cfg->nnodes > 0) {
		j->expected = cfg->nnodes;
		j->expected_from = "--nnodes";
	} else if (has_expected && read_count(j, dirfd, "expected", &j->expected) == 0) {
		j->expected_from = "the job folder's 'expected' file";
		j->expected_own = 1;
	} else if (has_record &&
		   mad_rdzv_read(dirfd, j->dir, MAD_RDZV_RECORD, j->uid, &rec, err, sizeof(err)) == 1 &&
		   !stale(j, MAD_RDZV_RECORD, rec.time, -1, 1) && rec.nnodes > 0 &&
		   rec.nnodes <= RANKS_MAX) {
		j->expected = rec.nnodes;
		j->expected_from = "the rendezvous record";
	}
}

/* Reads rank 0's ready marker NAME; an empty one is read again next time. */
static void read_ready(struct mad_wait_job *j, int dirfd, const char *name)
{
	char buf[MAD_ENDPOINT_MAX + 512];
	struct stat st;
	ssize_t len;

	if (!trusted(j, dirfd, name, &st))
		return;
	len = read_small(dirfd, name, buf, sizeof(buf));
	if (len < 0)
		return;
	if ((size_t)len == sizeof(buf)) {
		j->ready = -1;
		snprintf(j->ready_note, sizeof(j->ready_note), "larger than %zu bytes",
			 sizeof(buf) - 1);
		return;
	}
	switch (mad_ready_parse(buf, (size_t)len, j->endpoint, sizeof(j->endpoint), j->ready_host,
				sizeof(j->ready_host), &j->ready_time, j->ready_note,
				sizeof(j->ready_note))) {
	case 1:
		if (earlier_run(j, name, j->ready_time, (long)st.st_mtime) ||
		    stale(j, name, j->ready_time, (long)st.st_mtime, 0))
			j->endpoint[0] = '\0';
		else
			j->ready = 1;
		break;
	case -1:
		j->ready = -1;
		break;
	default:
		break;
	}
}

/* Forgets what was read of the current attempt, to read it again under
 * another rule (the job's user or submit time learnt) or folder. */
void mad_wait_forget(struct mad_wait_job *j)
{
	free(j->rank);
	free(j->task);
	j->rank = NULL;
	j->task = NULL;
	j->nrank = j->ndone = j->nfailed = j->ntask = j->ntask_failed = 0;
	j->expected = -1;
	j->expected_from = NULL;
	j->expected_own = 0;
	j->rerun = MAD_RERUN_NONE;
	j->ready = 0;
	j->endpoint[0] = '\0';
	j->ignored[0] = '\0';
}

/* The folder of attempt RESTART by jobdir.h's rules (any cluster: mad-wait
 * cannot know it) into PATH, and with FD not NULL, opened into *FD (the
 * caller closes it): 0, 1 none (yet), -1 with ERR.  NEXT: a later
 * attempt's, which cannot have been made before the job was submitted (a
 * folder left by an earlier job with the same id must not end the current
 * attempt); the current attempt's may be an array's that joined such a
 * folder, and its files are checked one by one. */
static int locate(struct mad_wait_job *j, long restart, int next, char *path, size_t psize, int *fd,
		  char *err, size_t size)
{
	struct mad_jobdir d;
	char name[64], notes[sizeof(j->ignored)];
	int rc;

	if (restart > 0)
		snprintf(name, sizeof(name), "%ld.%ld", j->id, restart);
	else
		snprintf(name, sizeof(name), "%ld", j->id);
	if (mad_jobdir_init(&d, j->run_dir, name, NULL, j->id, restart, j->uid, err, size))
		return -1;
	/* a folder made before the job (or, until squeue says when it was
	 * submitted, before the wait) is an earlier job's with the same id */
	d.not_before = !next             ? -1 :
		       j->submitted >= 0 ? j->submitted :
		       j->unbounded      ? -1 :
					   j->wait_start;
	if (d.not_before >= 0)
		d.not_before -= MAD_WAIT_CLOCK_SLACK;
	/* the run folder's path is checked once for the job's user, and the
	 * folder looked at through that descriptor from then on */
	if (j->run_fd < 0 || j->run_fd_uid != j->uid) {
		if (j->run_fd >= 0)
			close(j->run_fd);
		j->run_fd = mad_rundir_open(j->run_dir, j->uid, err, size);
		if (j->run_fd < 0)
			return -1;
		j->run_fd_uid = j->uid;
	}
	rc = mad_jobdir_open_at(&d, j->run_fd, MAD_JOBDIR_FIND, path, psize, fd, notes,
				sizeof(notes), err, size);
	if (*notes)
		ignore(j, notes);
	return rc;
}

/* script_rank<N>: the job script ran on node N (marker.h), a regular file
 * of the job's user written since the job's submission.  Written as a run
 * starts, it is exempt from the run-start rule as 'expected' is (node
 * clocks): a spur re-run may see the earlier run's, which only makes
 * mad-wait expect that node's marker.  Looked at until seen once. */
static void read_script(struct mad_wait_job *j, int dirfd, long n)
{
	char name[32];
	struct stat st;

	if ((j->expected > 0 && n >= j->expected) || (n < j->nrank && j->rank[n].ran))
		return;
	mad_script_name(name, sizeof(name), n);
	if (!trusted(j, dirfd, name, &st) || stale(j, name, -1, (long)st.st_mtime, 1) ||
	    ensure_ranks(j, n + 1))
		return;
	j->rank[n].ran = 1;
}

/* Reads the current attempt's folder once. */
static int scan_dir(struct mad_wait_job *j, const struct mad_wait_cfg *cfg, double now, char *err,
		    size_t size)
{
	DIR *d;
	struct dirent *de;
	int changed = 0, has_expected = 0, has_record = 0, rc;
	long *seen = NULL, nseen = 0, cap = 0, nsorted, tcap;
	long *ran = NULL, nran = 0, rcap = 0;
	int oom = 0, fd = -1;
	char path[sizeof(j->dir)];

	rc = locate(j, j->restart, 0, path, sizeof(path), &fd, err, size);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return 0; /* the job has not started (or has no folder) yet */
	if (strcmp(path, j->dir) != 0) {
		if (j->dir_seen)
			mad_wait_forget(j); /* another folder is the attempt's now */
		memcpy(j->dir, path, strlen(path) + 1);
	}
	/* the folder found, through its descriptor: never its path again */
	d = fdopendir(fd);
	if (!d) {
		rc = errno;
		close(fd);
		return mad_error(err, size, "cannot read the job folder '%s': %s", j->dir,
				 strerror(rc));
	}
	{
		struct stat st;

		/* the same name, another folder (the founder moved an earlier
		 * job's aside and made the attempt's): read it afresh */
		if (fstat(dirfd(d), &st) == 0) {
			if (j->dir_seen && (st.st_ino != j->dir_ino || st.st_dev != j->dir_dev))
				mad_wait_forget(j);
			j->dir_ino = st.st_ino;
			j->dir_dev = st.st_dev;
		}
	}
	nsorted = tcap = j->ntask;
	j->dir_seen = 1;
	while ((de = readdir(d))) {
		long n = marker_rank(de->d_name), step, task;

		if (n < 0 && marker_step_task(de->d_name, &step, &task) == 0) {
			struct mad_step_task *t = task_entry(j, nsorted, &tcap, step, task);

			if (t && (t->state == MAD_RANK_MISSING || t->state == MAD_RANK_EMPTY))
				read_task(j, dirfd(d), de->d_name, t, cfg, now);
			continue;
		}
		if (n < 0 && (n = script_rank(de->d_name)) >= 0) {
			if (nran == rcap) {
				long *r = realloc(ran, (size_t)(rcap = rcap ? rcap * 2 : 16) *
							       sizeof(*r));

				if (!r) {
					oom = 1;
					break;
				}
				ran = r;
			}
			ran[nran++] = n;
			continue;
		}
		if (n < 0 && cfg->ready && !j->ready && strcmp(de->d_name, "ready_rank0") == 0) {
			read_ready(j, dirfd(d), de->d_name);
			changed += j->ready != 0;
			continue;
		}
		if (n < 0) {
			has_expected |= strcmp(de->d_name, "expected") == 0;
			has_record |= strcmp(de->d_name, "rendezvous") == 0;
			continue;
		}
		if (nseen == cap) {
			long *s = realloc(seen, (size_t)(cap = cap ? cap * 2 : 64) * sizeof(*s));

			if (!s) {
				oom = 1;
				break;
			}
			seen = s;
		}
		seen[nseen++] = n;
	}
	if (oom) {
		closedir(d);
		free(seen);
		free(ran);
		return mad_error(err, size, "out of memory");
	}
	if (j->ntask > nsorted)
		qsort(j->task, (size_t)j->ntask, sizeof(*j->task), task_order);
	learn_expected(j, dirfd(d), has_expected, has_record, cfg);
	for (long i = 0; i < nseen; i++) {
		long n = seen[i];
		enum mad_rank_state before;
		char name[32];

		if (j->expected > 0 && n >= j->expected)
			continue; /* not a rank of this job */
		if (ensure_ranks(j, n + 1)) {
			closedir(d);
			free(seen);
			free(ran);
			return mad_error(err, size, "out of memory");
		}
		before = j->rank[n].state;
		if (before != MAD_RANK_MISSING && before != MAD_RANK_EMPTY)
			continue; /* written once: never read again */
		mad_marker_name(name, sizeof(name), n);
		read_rank(j, dirfd(d), name, n, cfg, now);
		if (j->rank[n].state != before) {
			changed++;
			if (j->rank[n].state == MAD_RANK_DONE)
				j->ndone++;
			else if (j->rank[n].state != MAD_RANK_EMPTY)
				j->nfailed++;
		}
	}
	for (long i = 0; i < nran; i++)
		read_script(j, dirfd(d), ran[i]);
	closedir(d);
	free(seen);
	free(ran);
	if (j->expected > 0 && ensure_ranks(j, j->expected))
		return mad_error(err, size, "out of memory");
	return changed;
}

/* A requeued job writes to <id>.<restart>: when the next attempt's folder
 * appears, the current one is read a last time and kept; 1 when it moved
 * on, 0 when there is none yet, -1 with ERR. */
static int next_attempt(struct mad_wait_job *j, const struct mad_wait_cfg *cfg, double now,
			char *err, size_t size)
{
	char next[sizeof(j->dir)];
	struct mad_wait_attempt *past;
	char *dir;
	long k;
	int rc;

	/* SLURM counts a requeue whose script never started (a failed launch
	 * or prolog) too, and that attempt leaves no folder: look a few past */
	for (k = j->restart + 1; k <= j->restart + ATTEMPT_GAP_MAX; k++) {
		rc = locate(j, k, 1, next, sizeof(next), NULL, err, size);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
	}
	if (k > j->restart + ATTEMPT_GAP_MAX)
		return 0;
	/* the past attempt's own files, whatever run squeue shows since */
	j->last_read = 1;
	rc = scan_dir(j, cfg, now, err, size);
	j->last_read = 0;
	if (rc < 0)
		return -1;
	if (j->dir_seen) { /* an attempt that left no folder is not one to show */
		past = realloc(j->past, (size_t)(j->npast + 1) * sizeof(*past));
		if (!past)
			return mad_error(err, size, "out of memory");
		j->past = past;
		if (!(dir = strdup(j->dir)))
			return mad_error(err, size, "out of memory");
		past[j->npast++] = (struct mad_wait_attempt){
			.restart = j->restart,
			.dir = dir,
			.expected = j->expected,
			.rank = j->rank,
			.nrank = j->nrank,
			.task = j->task,
			.ntask = j->ntask,
		};
	} else {
		free(j->rank);
		free(j->task);
	}
	j->restart = k;
	memcpy(j->dir, next, sizeof(next));
	j->rank = NULL;
	j->task = NULL;
	j->nrank = j->ndone = j->nfailed = j->ntask = j->ntask_failed = 0;
	j->expected = -1;
	j->expected_from = NULL;
	j->dir_seen = 0;
	j->rerun = MAD_RERUN_NONE;
	j->ready = 0;
	j->ignored[0] = '\0';
	return 1;
}

int mad_wait_scan(struct mad_wait_job *j, const struct mad_wait_cfg *cfg, double now, char *err,
		  size_t size)
{
	int rc;

	while ((rc = next_attempt(j, cfg, now, err, size)) > 0)
		;
	if (rc < 0 || (rc = scan_dir(j, cfg, now, err, size)) < 0)
		return -1;
	/* the first read after an answer that showed the job waiting to run
	 * says whether the markers counted from then on came after it */
	if (j->empty_after_wait < 0)
		j->empty_after_wait = j->ndone == 0 && j->nfailed == 0;
	return rc;
}

void mad_wait_attempt_view(const struct mad_wait_job *j, long k, struct mad_wait_attempt *a)
{
	if (k < j->npast) {
		*a = j->past[k];
		return;
	}
	*a = (struct mad_wait_attempt){
		.restart = j->restart,
		.dir = j->dir,
		.expected = j->expected,
		.held = j->held,
		.rank = j->rank,
		.nrank = j->nrank,
		.task = j->task,
		.ntask = j->ntask,
	};
}
