/* SPDX-License-Identifier: GPL-2.0-or-later */
/* marker.c: see marker.h. */
#include "marker.h"
#include "decimal.h"
#include "error.h"
#include "jobdir.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t mad_marker_format(char *buf, size_t size, int status, long rank, long job_id,
			 const char *error, long stepd)
{
	char host[256] = "", step[40] = "";
	int n;

	gethostname(host, sizeof(host) - 1);
	if (stepd > 0)
		snprintf(step, sizeof(step), "stepd=%ld\n", stepd);
	n = snprintf(buf, size, "%d\nrank=%ld\nhost=%s\njob=%ld\ntime=%ld\n%s%s%s%s", status, rank,
		     host, job_id, (long)time(NULL), error ? "error=" : "", error ? error : "",
		     error ? "\n" : "", step);

	return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}

void mad_rank_file_name(char *name, size_t size, const char *prefix, long rank)
{
	/* system calls only (the caller may be a forked child) */
	size_t n = strlen(prefix);

	if (size < 32 || n > 11)
		return;
	memcpy(name, prefix, n);
	n += fmt_u64(name + n, (uint64_t)rank, 0);
	name[n] = '\0';
}

void mad_marker_name(char *name, size_t size, long rank)
{
	mad_rank_file_name(name, size, "done_rank", rank);
}

void mad_step_marker_name(char *name, size_t size, long step, long rank)
{
	/* system calls only (the caller may be a forked child) */
	size_t n = 4;

	if (size < 64)
		return;
	memcpy(name, "step", n);
	n += fmt_u64(name + n, (uint64_t)step, 0);
	memcpy(name + n, "_rank", 5);
	n += 5;
	n += fmt_u64(name + n, (uint64_t)rank, 0);
	name[n] = '\0';
}

int mad_marker_write(int dirfd, const char *job_dir, long rank, const char *content, size_t len,
		     char *err, size_t size)
{
	char name[32];

	mad_marker_name(name, sizeof(name), rank);
	return mad_write_file_at(dirfd, job_dir, name, content, len, 0, err, size);
}

int mad_marker_failure_recorded(int dirfd, const char *name, long job_id, long stepd)
{
	char buf[2048], line[40], step[40];
	size_t off = 0, ln, sn;
	ssize_t r;
	int fd;

	/* system calls and byte compares only (the caller may be a forked child) */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (off < sizeof(buf) && (r = read(fd, buf + off, sizeof(buf) - off)) > 0)
		off += (size_t)r;
	close(fd);
	memcpy(line, "\njob=", 5);
	ln = 5 + fmt_u64(line + 5, (uint64_t)job_id, 0);
	line[ln++] = '\n';
	/* this step's own task_init wrote it, not an earlier job's with the id */
	memcpy(step, "\nstepd=", 7);
	sn = 7 + fmt_u64(step + 7, (uint64_t)stepd, 0);
	step[sn++] = '\n';
	return memmem(buf, off, "\nerror=", 7) != NULL && memmem(buf, off, line, ln) != NULL &&
	       memmem(buf, off, step, sn) != NULL;
}

int mad_marker_leave(int dirfd, const char *job_dir, long rank, long job_id, int status,
		     const char *error, long stepd, char *err, size_t size)
{
	char content[2048];
	size_t len = mad_marker_format(content, sizeof(content), status, rank, job_id, error, stepd);

	if (!len)
		return mad_error(err, size, "cannot write the marker of rank %ld in '%s': too long",
				 rank, job_dir);
	return mad_marker_write(dirfd, job_dir, rank, content, len, err, size);
}

void mad_script_name(char *name, size_t size, long rank)
{
	mad_rank_file_name(name, size, "script_rank", rank);
}

int mad_expected_write(int dirfd, const char *job_dir, long count, char *err, size_t size)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%ld\n", count);

	return mad_write_file_at(dirfd, job_dir, "expected", buf, (size_t)n, 0, err, size);
}

int mad_marker_parse(const char *text, size_t len, long *status, long *time, char *host,
		     size_t hsize, char *note, size_t nsize)
{
	const char *p = text, *end = text + len, *eol;
	char first[32];
	size_t n;

	*status = -1;
	*time = -1;
	if (hsize)
		*host = '\0';
	if (nsize)
		*note = '\0';
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	if (p == end)
		return 0;
	if (memchr(text, '\0', len))
		return mad_error(note, nsize, "a NUL byte: not a marker");
	eol = memchr(p, '\n', (size_t)(end - p));
	n = (size_t)((eol ? eol : end) - p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	if (n == 0 || n >= sizeof(first)) {
		char shown[MAD_PRINTABLE_SIZE];

		mad_printable(shown, sizeof(shown), p, n);
		return mad_error(note, nsize, "first line '%s' is not an exit status", shown);
	}
	memcpy(first, p, n);
	first[n] = '\0';
	if (mad_decimal(first, 0, 65535, status)) {
		char shown[MAD_PRINTABLE_SIZE];

		mad_printable(shown, sizeof(shown), first, n);
		*status = -1;
		return mad_error(note, nsize, "first line '%s' is not an exit status", shown);
	}
	for (p = eol ? eol + 1 : end; p < end; p = eol ? eol + 1 : end) {
		eol = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((eol ? eol : end) - p);
		/* the file is the user's: no raw byte of it reaches a terminal */
		if (n > 5 && memcmp(p, "host=", 5) == 0 && hsize)
			mad_printable(host, hsize, p + 5, n - 5);
		else if (n > 6 && memcmp(p, "error=", 6) == 0 && nsize)
			mad_printable_max(note, nsize, p + 6, n - 6, nsize);
		else if (n > 5 && memcmp(p, "time=", 5) == 0) {
			uint64_t t;

			*time = mad_decimal_span(p + 5, n - 5, 0, LONG_MAX, &t) ? -1 : (long)t;
		}
	}
	return 1;
}
