/* SPDX-License-Identifier: GPL-2.0-or-later */
/* run.c: see run.h. */
#include "run.h"
#include "error.h"
#include "jobdir.h"
#include "marker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RUN_FILE_MAX 1024 /* a script record, a started file: a few lines */

void mad_run_none(struct mad_run *run)
{
	run->start = run->previous = run->not_before = -1;
}

long mad_run_bound(long previous, long start)
{
	long half;

	if (previous < 0)
		return -1;
	/* clocks that disagree (the earlier run on a host ahead of this
	 * one) put the earlier start at or after this one: nothing tells the
	 * runs apart, and a bound there would refuse this run's own files */
	if (previous >= start)
		return -1;
	half = (start - previous) / 2;
	return start - (half < MAD_RUN_SPREAD ? half : MAD_RUN_SPREAD);
}

/* The start of /proc's file PATH into BUF, as a string: 0, or -1. */
static int read_proc(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The fields of /proc/PID/stat this needs (proc(5)): the parent (4), the
 * start in clock ticks since boot (22), counted after the command's
 * closing ')', which may itself hold spaces and parentheses.  0, or -1. */
static int proc_stat(pid_t pid, pid_t *ppid, unsigned long long *ticks)
{
	char path[64], stat[1024], *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (read_proc(path, stat, sizeof(stat)))
		return -1;
	p = strrchr(stat, ')');
	for (field = 2; p && field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 3)
			*ppid = (pid_t)strtol(p + 1, NULL, 10);
	}
	if (!p)
		return -1;
	*ticks = strtoull(p + 1, NULL, 10);
	return 0;
}

/* The owner of /proc/PID: the process's user; (uid_t)-1 when it is gone. */
static uid_t proc_owner(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld", (long)pid);
	return stat(path, &st) ? (uid_t)-1 : st.st_uid;
}

/* Seconds since boot (/proc/uptime, its first number), or -1. */
static double uptime(void)
{
	char buf[128];

	return read_proc("/proc/uptime", buf, sizeof(buf)) ? -1 : strtod(buf, NULL);
}

int mad_run_script(char *key, size_t size, long *start)
{
	pid_t pid = getpid(), script = 0, up;
	unsigned long long ticks = 0, t;
	long hz = sysconf(_SC_CLK_TCK);
	double up_s = uptime();
	int len, depth;

	/* up the parents while they are this user's: the job script's
	 * process is the oldest (spurd, root, started it; a container's
	 * view ends at its init), whatever groups and sessions its children
	 * made (timeout, setsid, a subprocess's new session) */
	for (depth = 0; depth < 256 && proc_stat(pid, &up, &t) == 0; depth++) {
		script = pid, ticks = t;
		if (up <= 1 || proc_owner(up) != geteuid())
			break;
		pid = up;
	}
	if (!ticks || up_s < 0 || hz <= 0) {
		*start = (long)time(NULL);
		len = snprintf(key, size, "%ld", (long)getpgrp());
	} else {
		/* now less the time since it started (the boot time would need
		 * /proc/stat, whose size grows with the CPUs) */
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		*start = (long)((double)now.tv_sec + (double)now.tv_nsec / 1e9 - up_s +
				(double)ticks / (double)hz);
		len = snprintf(key, size, "%ld.%llu", (long)script, ticks);
	}
	return len < 0 || (size_t)len >= size ? -1 : 0;
}

/* NAME in the folder DIRFD into BUF, if a small regular file of UID: its
 * length; 0 when absent; -1 (errno) when it cannot be read or is not such
 * a file. */
static ssize_t read_small(int dirfd, const char *name, uid_t uid, char *buf, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd, e;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	e = fstat(fd, &st) ? errno : !S_ISREG(st.st_mode) || st.st_uid != uid ? EPERM : 0;
	if (e) {
		close(fd);
		return errno = e, -1;
	}
	n = read(fd, buf, size - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return errno = e, -1;
	buf[n] = '\0';
	return n;
}

/* The value of "KEY=" on a line of TEXT, NULL when none; it ends at '\n'. */
static const char *field(const char *text, const char *key, size_t *len)
{
	size_t k = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, k) == 0 && p[k] == '=') {
			*len = strcspn(p + k + 1, "\n");
			return p + k + 1;
		}
	}
	return NULL;
}

/* A decimal field of TEXT, or -1. */
static long number(const char *text, const char *key)
{
	size_t len;
	const char *v = field(text, key, &len);
	char *end;
	long n;

	if (!v || !len)
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	return errno || end != v + len || n < 0 ? -1 : n;
}

static int same(const char *text, const char *key, const char *want)
{
	size_t len;
	const char *v = field(text, key, &len);

	return v && len == strlen(want) && memcmp(v, want, len) == 0;
}

int mad_run_file_time(int dirfd, const char *name, uid_t uid, long *time)
{
	char buf[RUN_FILE_MAX];
	ssize_t n = read_small(dirfd, name, uid, buf, sizeof(buf));

	if (n <= 0)
		return (int)n;
	*time = number(buf, "time");
	return *time >= 0;
}

int mad_run_begin(int dirfd, const char *job_dir, long rank, uid_t uid, const char *host,
		  const char *key, long start, struct mad_run *run, char *err, size_t size)
{
	char name[32], buf[RUN_FILE_MAX];
	ssize_t n;
	int len;

	mad_script_name(name, sizeof(name), rank);
	n = read_small(dirfd, name, uid, buf, sizeof(buf));
	if (n > 0 && same(buf, "host", host) && same(buf, "key", key) &&
	    (run->start = number(buf, "time")) >= 0) {
		run->previous = number(buf, "previous");
		run->not_before = mad_run_bound(run->previous, run->start);
		return 0;
	}
	/* another run's record, or one of a release without keys: an
	 * earlier run of this job in its folder */
	run->previous = n > 0 ? number(buf, "time") : -1;
	run->start = start;
	run->not_before = mad_run_bound(run->previous, run->start);
	len = snprintf(buf, sizeof(buf), "host=%s\ntime=%ld\nkey=%s\n", host, run->start, key);
	if (len > 0 && (size_t)len < sizeof(buf) && run->previous >= 0)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "previous=%ld\n", run->previous);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return mad_error(err, size, "cannot write the script record of rank %ld", rank);
	return mad_write_file_at(dirfd, job_dir, name, buf, (size_t)len, 0, err, size);
}

int mad_run_counts(const struct mad_run *run, int dirfd, uid_t uid, long rank, long file_time,
		   char *why, size_t wsize)
{
	char name[32];
	long started = -1;
	int rc;

	if (!run || run->not_before < 0)
		return 1;
	mad_script_name(name, sizeof(name), rank);
	rc = mad_run_file_time(dirfd, name, uid, &started);
	if (rc < 0)
		return -1;
	if (rc == 0 || started < run->not_before) {
		snprintf(why, wsize,
			 "an earlier run's: rank %ld has not started this run yet (%s %s, this run began here at %ld)",
			 rank, name, rc ? "is older" : "is not there", run->start);
		return 0;
	}
	if (file_time < started) {
		snprintf(why, wsize,
			 "an earlier run's: written at %ld, before rank %ld started this run at %ld",
			 file_time, rank, started);
		return 0;
	}
	return 1;
}
