/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rendezvous.c: see rendezvous.h. */
#include "rendezvous.h"
#include "error.h"
#include "clock.h"
#include "netaddr.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Joins A "/" B into OUT with memcpy only (async-signal-safe). */
static int join(char *out, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + lb + 2 > size)
		return -1;
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
	return 0;
}

/* A write in DIR failed with errno E: -1, and ERR says so unless it is
 * NULL (a forked child's call, where only system calls may run). */
static int write_failed(const char *dir, const char *name, int e, char *err, size_t size)
{
	if (!err || !size)
		return -1;
	return mad_error(err, size, "cannot write '%s/%s': %s", dir, name, strerror(e));
}

int mad_write_file(const char *dir, const char *name, const char *content, size_t len, int flags,
		   char *err, size_t size)
{
	int replace = flags & MAD_WRITE_REPLACE;
	char final[4096], tmpname[128], tmp[4096];
	size_t n = strlen(name), off = 0;
	int fd, e = 0;

	if (n + 32 > sizeof(tmpname))
		return write_failed(dir, name, ENAMETOOLONG, err, size);
	tmpname[0] = '.';
	memcpy(tmpname + 1, name, n);
	memcpy(tmpname + 1 + n, ".tmp.", 5);
	n = 1 + n + 5;
	n += fmt_u64(tmpname + n, (uint64_t)getpid(), 0);
	tmpname[n] = '\0';
	if (join(final, sizeof(final), dir, name) ||
	    join(tmp, sizeof(tmp), dir, tmpname))
		return write_failed(dir, name, ENAMETOOLONG, err, size);
	unlink(tmp); /* a leftover of a crashed writer with our pid */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return write_failed(dir, name, errno, err, size);
	while (off < len) {
		ssize_t w = write(fd, content + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		off += (size_t)w;
	}
	if (!e && !(flags & MAD_WRITE_NOSYNC) && fsync(fd))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && replace && rename(tmp, final))
		e = errno;
	/* link() never replaces: the first complete write stays. */
	else if (!e && !replace && link(tmp, final) && errno != EEXIST)
		e = errno;
	if (e || !replace)
		unlink(tmp);
	return e ? write_failed(dir, name, e, err, size) : 0;
}

int mad_job_dir_make(const char *run_dir, const char *job_dir, char *err,
		     size_t size)
{
	struct stat st;

	if (stat(run_dir, &st))
		return mad_error(err, size, "run folder '%s' (--mad-run-dir) is not a directory: %s",
				 run_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return mad_error(err, size, "run folder '%s' (--mad-run-dir) is not a directory",
				 run_dir);
	if (mkdir(job_dir, 0755) && errno != EEXIST)
		return mad_error(err, size, "cannot create the job folder '%s': %s", job_dir,
				 strerror(errno));
	if (stat(job_dir, &st) || !S_ISDIR(st.st_mode))
		return mad_error(err, size, "the job folder '%s' is not a directory", job_dir);
	return 0;
}

int mad_rdzv_publish(const char *job_dir, const char *record,
		     const struct mad_rdzv *r, char *err, size_t size)
{
	char buf[512];
	int len;

	len = snprintf(buf, sizeof(buf),
		       "addr=%s\nport=%ld\nhost=%s\njob=%ld\nnnodes=%ld\ntasks_per_node=%ld\n",
		       r->addr, r->port, r->host, r->job_id, r->nnodes, r->tasks_per_node);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return mad_error(err, size, "rendezvous record too long");
	/* Replaced, not kept: a record left by an earlier job with the same id
	 * (a controller whose state was reset) must not win over rank 0's. */
	return mad_write_file(job_dir, record, buf, (size_t)len, 1, err, size);
}

int mad_rdzv_read(const char *job_dir, const char *record, struct mad_rdzv *r,
		  char *err, size_t size)
{
	char path[4096], buf[1024], *line, *save = NULL;
	ssize_t n;
	int fd, have = 0;

	if (join(path, sizeof(path), job_dir, record))
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return mad_error(err, size, "the rendezvous record '%s' is empty or too long", path);
	buf[n] = '\0';
	memset(r, 0, sizeof(*r));
	r->port = r->job_id = r->nnodes = r->tasks_per_node = -1;
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
	}
	if (have != 7 || !mad_addr_valid(r->addr) || r->port < 1 || r->port > 65535)
		return mad_error(err, size, "the rendezvous record '%s' is malformed", path);
	return 1;
}

int mad_rdzv_wait(const char *job_dir, const char *record, long job_id, long rank,
		  long timeout, struct mad_rdzv *r, char *err, size_t size)
{
	double start = mad_monotonic(), delay = 0.02, waited;
	char last[256] = "no record";

	for (;;) {
		DIR *d = opendir(job_dir); /* a directory read refreshes NFS caches */
		int rc;

		if (d)
			closedir(d);
		rc = mad_rdzv_read(job_dir, record, r, last, sizeof(last));
		if (rc == 1 && r->job_id == job_id)
			return 0;
		if (rc == 1)
			snprintf(last, sizeof(last), "a record of another job (%ld)", r->job_id);
		waited = mad_monotonic() - start;
		if (waited >= (double)timeout)
			break;
		mad_sleep(delay < (double)timeout - waited ? delay : (double)timeout - waited);
		/* fast at first (a gang-scheduled job meets within a second),
		 * then at most one read a second */
		delay = delay * 1.5 > (waited > 30 ? 1.0 : 0.2) ? (waited > 30 ? 1.0 : 0.2) :
			delay * 1.5;
	}
	return mad_error(err, size,
			 "rank %ld waited %.0f s (--mad-timeout=%ld) for rank 0 to publish its address in '%s/%s' and found %s; is rank 0 running? (squeue -j %ld)",
			 rank, mad_monotonic() - start, timeout, job_dir, record, last, job_id);
}
