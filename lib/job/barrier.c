/* SPDX-License-Identifier: GPL-2.0-or-later */
/* barrier.c: see barrier.h. */
#include "barrier.h"
#include "clock.h"
#include "error.h"
#include "jobdir.h"
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BARRIER_LIST_MAX 20

/* "started_rank" or "started.<S>_rank": what comes before the rank. */
static int barrier_prefix(char *out, size_t size, long step)
{
	int n = step < 0 ? snprintf(out, size, "started_rank") :
			   snprintf(out, size, "started.%ld_rank", step);

	return n < 0 || (size_t)n >= size ? -1 : n;
}

int mad_barrier_name(char *out, size_t size, long step, long rank)
{
	int n = barrier_prefix(out, size, step), m;

	if (n < 0 || rank < 0)
		return -1;
	m = snprintf(out + n, size - (size_t)n, "%ld", rank);
	return m < 0 || (size_t)m >= size - (size_t)n ? -1 : 0;
}

long mad_barrier_rank_of(const char *name, long step, long nranks)
{
	char prefix[64];
	int n = barrier_prefix(prefix, sizeof(prefix), step);
	const char *p;
	long r = 0;

	if (n < 0 || strncmp(name, prefix, (size_t)n) != 0)
		return -1;
	p = name + n;
	if (!*p || (p[0] == '0' && p[1]))
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		r = r * 10 + (*p - '0');
		if (r >= nranks)
			return -1;
	}
	return r;
}

long mad_barrier_missing(const char *const *names, size_t n, long step, long nranks,
			 unsigned char *present)
{
	long missing = nranks, r;

	memset(present, 0, (size_t)nranks);
	for (size_t i = 0; i < n; i++) {
		r = mad_barrier_rank_of(names[i], step, nranks);
		if (r >= 0 && !present[r]) {
			present[r] = 1;
			missing--;
		}
	}
	return missing;
}

void mad_barrier_describe(const unsigned char *present, long nranks, char *out, size_t size)
{
	long total = 0, listed = 0;
	size_t len;
	int n;

	for (long r = 0; r < nranks; r++)
		total += !present[r];
	n = snprintf(out, size, "%s", total == 1 ? "rank " : "ranks ");
	len = n < 0 ? 0 : (size_t)n;
	for (long r = 0; r < nranks && listed < BARRIER_LIST_MAX && len < size; r++) {
		if (present[r])
			continue;
		n = snprintf(out + len, size - len, "%s%ld", listed ? ", " : "", r);
		len += n < 0 ? 0 : (size_t)n;
		listed++;
	}
	if (total > listed && len < size)
		snprintf(out + len, size - len, ", ... (%ld in all)", total);
}

/* Whether the entry NAME of the folder DIRFD, a record of STEP, is this
 * run's (run.h); any other entry is left to mad_barrier_missing.  A rank
 * KNOWN from the last look is not read again: only this run writes its
 * files from then on, so a poll reads only the files of ranks new to it.
 * A file that cannot be read now (renamed over as it was opened, a passing
 * NFS error) is not there yet; WHY gets why one was passed over. */
static int this_runs(int dirfd, const char *name, long step, long nranks, uid_t uid,
		     const struct mad_run *run, const unsigned char *known, char *why, size_t wsize)
{
	long rank, written = -1;
	char reason[200];
	int rc;

	if (!run || run->not_before < 0 || (rank = mad_barrier_rank_of(name, step, nranks)) < 0 ||
	    known[rank])
		return 1;
	rc = mad_run_file_time(dirfd, name, uid, &written);
	if (rc < 0)
		return 0;
	rc = mad_run_counts(run, dirfd, uid, rank, rc ? written : -1, reason, sizeof(reason));
	if (rc == 0)
		snprintf(why, wsize, "%.60s is %.200s", name, reason);
	return rc == 1;
}

/* The entries of the folder DIRFD that may be this run's, for
 * mad_barrier_missing, WHY naming one passed over as an earlier run's; -1
 * with errno.  Listed through a descriptor of its own (mad_dir_reopen): a
 * listing from the start, which on NFS sees what the other ranks wrote. */
static int list_dir(int dirfd, long step, long nranks, uid_t uid, const struct mad_run *run,
		    const unsigned char *known, char ***names, size_t *n, char *why, size_t wsize)
{
	int fd = mad_dir_reopen(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	size_t cap = 0;
	int ours;

	*names = NULL;
	*n = 0;
	if (!d) {
		int saved = errno;

		if (fd >= 0)
			close(fd);
		errno = saved;
		return -1;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "started", 7) != 0)
			continue;
		ours = this_runs(dirfd, e->d_name, step, nranks, uid, run, known, why, wsize);
		if (!ours)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **grown = realloc(*names, ncap * sizeof(**names));

			if (!grown)
				goto oom;
			*names = grown;
			cap = ncap;
		}
		if (!((*names)[*n] = strdup(e->d_name)))
			goto oom;
		(*n)++;
	}
	closedir(d);
	return 0;
oom:
	closedir(d);
	while (*n)
		free((*names)[--*n]);
	free(*names);
	*names = NULL;
	errno = ENOMEM;
	return -1;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int mad_barrier_wait(int dirfd, const char *job_dir, long step, long rank, long nranks,
		     const char *host, uid_t uid, const struct mad_run *run, long timeout,
		     char *err, size_t size)
{
	double start = mad_monotonic(), delay = 0.02, waited;
	unsigned char *present;
	char name[64], content[512], who[1024], why[320] = "";
	long missing;
	int rc, len;

	if (nranks < 1 || nranks > MAD_BARRIER_RANKS_MAX || rank < 0 || rank >= nranks)
		return mad_error(err, size, "barrier: rank %ld of %ld ranks is out of range", rank,
				 nranks);
	if (mad_barrier_name(name, sizeof(name), step, rank))
		return mad_error(err, size, "barrier: no file name for rank %ld", rank);
	len = snprintf(content, sizeof(content), "rank=%ld\nhost=%s\npid=%ld\ntime=%ld\n", rank,
		       host, (long)getpid(), (long)time(NULL));
	if (len < 0 || (size_t)len >= sizeof(content))
		return mad_error(err, size, "barrier: host name too long");
	if (mad_write_file_at(dirfd, job_dir, name, content, (size_t)len, 0, who, sizeof(who)))
		return mad_error(err, size, "barrier: rank %ld: %s", rank, who);
	present = calloc((size_t)nranks, 1);
	if (!present)
		return mad_error(err, size, "barrier: out of memory for %ld ranks", nranks);
	for (;;) {
		char **names;
		size_t n;

		if (list_dir(dirfd, step, nranks, uid, run, present, &names, &n, why, sizeof(why))) {
			rc = errno;
			free(present);
			return mad_error(err, size, "barrier: cannot read '%s': %s", job_dir,
					 strerror(rc));
		}
		missing = mad_barrier_missing((const char *const *)names, n, step, nranks, present);
		free_names(names, n);
		if (missing == 0) {
			free(present);
			return 0;
		}
		waited = mad_monotonic() - start;
		if (waited >= (double)timeout)
			break;
		mad_sleep(delay < (double)timeout - waited ? delay : (double)timeout - waited);
		/* every rank lists the whole folder: at most every 0.2 s up to
		 * 64 ranks, then slower as they grow (the file server gets at
		 * most 320 listings a second), and every 1 s from 320 ranks */
		delay = mad_poll_delay(delay, waited, 0.2 * (nranks > 64 ? (double)nranks / 64 : 1));
	}
	mad_barrier_describe(present, nranks, who, sizeof(who));
	free(present);
	barrier_prefix(name, sizeof(name), step);
	if (*why)
		return mad_error(err, size,
				 "barrier: %s did not start within %ld s (no %sR file of this run for %s in '%s': %s; the timeout is --mad-timeout)",
				 who, timeout, name, missing == 1 ? "it" : "them", job_dir, why);
	return mad_error(err, size,
			 "barrier: %s did not start within %ld s (no %sR file for %s in '%s'; the timeout is --mad-timeout)",
			 who, timeout, name, missing == 1 ? "it" : "them", job_dir);
}
