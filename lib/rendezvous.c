/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rendezvous.c: see rendezvous.h. */
#include "rendezvous.h"
#include "error.h"
#include "jobdir.h"
#include "clock.h"
#include "netaddr.h"
#include "run.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int mad_rdzv_publish(int dirfd, const char *job_dir, const char *record, const struct mad_rdzv *r,
		     char *err, size_t size)
{
	char buf[512];
	int len;

	len = snprintf(buf, sizeof(buf),
		       "addr=%s\nport=%ld\nhost=%s\njob=%ld\nnnodes=%ld\ntasks_per_node=%ld\ntime=%ld\n",
		       r->addr, r->port, r->host, r->job_id, r->nnodes, r->tasks_per_node,
		       (long)time(NULL));
	if (len < 0 || (size_t)len >= sizeof(buf))
		return mad_error(err, size, "rendezvous record too long");
	/* Replaced, not kept: a record left by an earlier attempt must not win
	 * over rank 0's (jobdir.h). */
	return mad_write_file_at(dirfd, job_dir, record, buf, (size_t)len, 0, err, size);
}

int mad_rdzv_read(int dirfd, const char *job_dir, const char *record, uid_t uid, struct mad_rdzv *r,
		  char *err, size_t size)
{
	char path[MAD_JOBDIR_PATH + 64], buf[1024], *line, *save = NULL, why[256];
	struct stat st;
	ssize_t n;
	int fd, have = 0;

	/* the path names the record in messages; the file is the folder's */
	snprintf(path, sizeof(path), "%s/%s", job_dir, record);
	fd = openat(dirfd, record, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return mad_error(err, size, "the rendezvous record '%s' cannot be read: %s", path,
				 strerror(errno));
	}
	/* only the job's user may have written it (jobdir.h) */
	if (fstat(fd, &st)) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		close(fd);
		return mad_error(err, size, "the rendezvous record '%s' cannot be read: %s", path, why);
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != uid) {
		close(fd);
		if (!S_ISREG(st.st_mode))
			snprintf(why, sizeof(why), "not a regular file");
		else
			snprintf(why, sizeof(why), "owned by uid %u, not the job's user (uid %u)",
				 (unsigned)st.st_uid, (unsigned)uid);
		return mad_error(err, size, "ignored the rendezvous record '%s': %s", path, why);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return mad_error(err, size, "the rendezvous record '%s' is empty or too long", path);
	buf[n] = '\0';
	memset(r, 0, sizeof(*r));
	r->port = r->job_id = r->nnodes = r->tasks_per_node = r->time = -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(line, "addr") && strlen(eq) < sizeof(r->addr))
			strcpy(r->addr, eq), have |= 1;
		else if (!strcmp(line, "port"))
			r->port = atol(eq), have |= 2;
		else if (!strcmp(line, "host") && strlen(eq) < sizeof(r->host))
			strcpy(r->host, eq);
		else if (!strcmp(line, "job"))
			r->job_id = atol(eq), have |= 4;
		else if (!strcmp(line, "nnodes"))
			r->nnodes = atol(eq);
		else if (!strcmp(line, "tasks_per_node"))
			r->tasks_per_node = atol(eq);
		else if (!strcmp(line, "time"))
			r->time = atol(eq);
	}
	if (have != 7 || !mad_addr_valid(r->addr) || r->port < 1 || r->port > 65535)
		return mad_error(err, size, "the rendezvous record '%s' is malformed", path);
	return 1;
}

int mad_rdzv_wait(int dirfd, const char *job_dir, const char *record, long job_id, uid_t uid,
		  long rank, long timeout, double already, const struct mad_run *run,
		  struct mad_rdzv *r, char *err, size_t size)
{
	double start = mad_monotonic() - already, delay = 0.02, waited;
	char last[256] = "no record", why[200];

	for (;;) {
		int fd = mad_dir_reopen(dirfd); /* an open refreshes NFS caches */
		int rc;

		if (fd >= 0)
			close(fd);
		rc = mad_rdzv_read(dirfd, job_dir, record, uid, r, last, sizeof(last));
		if (rc == 1 && r->job_id == job_id) {
			/* the record of an earlier run in this folder is still
			 * there until rank 0 of this run writes its own */
			rc = mad_run_counts(run, dirfd, uid, 0, r->time, why, sizeof(why));
			if (rc == 1)
				return 0;
			snprintf(last, sizeof(last), "a record that is %s",
				 rc == 0 ? why :
					   "of an unknown run (rank 0's script record is unreadable)");
		} else if (rc == 1) {
			snprintf(last, sizeof(last), "a record of another job (%ld)", r->job_id);
		}
		waited = mad_monotonic() - start;
		if (waited >= (double)timeout)
			break;
		mad_sleep(delay < (double)timeout - waited ? delay : (double)timeout - waited);
		delay = mad_poll_delay(delay, waited, 0.2); /* one small file per rank */
	}
	return mad_error(err, size,
			 "rank %ld waited %.0f s (--mad-timeout=%ld) for rank 0 to publish its address in '%s/%s' and found %s; is rank 0 running? (squeue -j %ld)",
			 rank, mad_monotonic() - start, timeout, job_dir, record, last, job_id);
}
