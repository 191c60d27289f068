/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prune.c: see prune.h. */
#include "prune.h"
#include "error.h"
#include "jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Skips the digits at *P: how many (at most 19). */
static size_t digits(const char **p)
{
	size_t n = 0;

	while (**p >= '0' && **p <= '9' && n < 20)
		(*p)++, n++;
	return n;
}

/* Skips 16 lower-case hex digits at *P: 1, or 0 when they are not there. */
static int hex16(const char **p)
{
	for (int i = 0; i < MAD_JOBDIR_RANDOM; i++)
		if (!(((*p)[i] >= '0' && (*p)[i] <= '9') || ((*p)[i] >= 'a' && (*p)[i] <= 'f')))
			return 0;
	*p += MAD_JOBDIR_RANDOM;
	return 1;
}

long mad_prune_job_name(const char *name, int *leftover)
{
	const char *p = name;
	long job;
	size_t n = digits(&p);

	*leftover = 0;
	if (n == 0 || n > 18 || name[0] == '0')
		return -1;
	job = strtol(name, NULL, 10);
	if (p[0] == '.' && p[1] >= '0' && p[1] <= '9') { /* .<restart> */
		p++;
		if (digits(&p) > 9)
			return -1;
	}
	if (*p == '~') { /* a fallback name */
		p++;
		if (!hex16(&p))
			return -1;
	}
	if (strncmp(p, ".old.", 5) == 0) { /* an earlier job's, moved aside */
		p += 5;
		if (!digits(&p) || *p++ != '.' || !hex16(&p))
			return -1;
	} else if (strncmp(p, ".new.", 5) == 0) { /* a maker's leftover */
		p += 5;
		if (!hex16(&p))
			return -1;
		*leftover = 1;
	}
	if (*p) {
		*leftover = 0;
		return -1;
	}
	return job;
}

/* The folder FD (NAME) holds regular files only, an attempt file among them
 * unless LEFTOVER: 1 and *NEWEST raised to their newest write; 0 when it is
 * not a job folder; -1 (errno) when it cannot be read. */
static int job_folder(int fd, int leftover, long *newest)
{
	int lfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), attempt = 0;
	char buf[8192];
	ssize_t got;

	if (lfd < 0)
		return -1;
	while ((got = getdents64(lfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);
			struct stat st;

			off += e->d_reclen;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
				if (errno == ENOENT)
					continue;
				close(lfd);
				return -1;
			}
			/* a folder inside, or a device: not what a job leaves */
			if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
				close(lfd);
				return 0;
			}
			if (S_ISREG(st.st_mode) && !strcmp(e->d_name, MAD_JOBDIR_ATTEMPT))
				attempt = 1;
			if ((long)st.st_mtime > *newest)
				*newest = (long)st.st_mtime;
		}
	}
	close(lfd);
	if (got < 0)
		return -1;
	return attempt || leftover;
}

int mad_prune_list(int runfd, uid_t caller, long not_after, struct mad_prune_folder **out,
		   size_t *n, char *err, size_t size)
{
	int lfd = openat(runfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t cap = 0;
	char buf[8192];
	ssize_t got;

	*out = NULL;
	*n = 0;
	if (lfd < 0)
		return mad_error(err, size, "cannot list the run folder: %s", strerror(errno));
	while ((got = getdents64(lfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);
			struct stat st, opened;
			int leftover, fd, rc;
			long job = mad_prune_job_name(e->d_name, &leftover), newest;

			off += e->d_reclen;
			if (job < 0 || strlen(e->d_name) >= sizeof((*out)->name) ||
			    fstatat(runfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISDIR(st.st_mode) || (caller != 0 && st.st_uid != caller))
				continue;
			fd = openat(runfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				continue;
			newest = (long)st.st_mtime;
			rc = fstat(fd, &opened) == 0 && opened.st_ino == st.st_ino &&
					     opened.st_dev == st.st_dev ?
				     job_folder(fd, leftover, &newest) :
				     0;
			close(fd);
			if (rc <= 0 || newest > not_after)
				continue;
			if (*n == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				struct mad_prune_folder *grown = realloc(*out, ncap * sizeof(**out));

				if (!grown) {
					close(lfd);
					free(*out);
					*out = NULL;
					*n = 0;
					return mad_error(err, size,
							 "out of memory listing the run folder");
				}
				*out = grown;
				cap = ncap;
			}
			memcpy((*out)[*n].name, e->d_name, strlen(e->d_name) + 1);
			(*out)[*n].job = job;
			(*out)[*n].newest = newest;
			(*n)++;
		}
	}
	close(lfd);
	if (got < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return mad_error(err, size, "cannot list the run folder: %s", strerror(errno));
	}
	return 0;
}

int mad_prune_remove(int runfd, const char *dir, const char *name, char *err, size_t size)
{
	int fd = openat(runfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), lfd;
	char buf[8192];
	ssize_t got;

	if (fd < 0)
		return mad_error(err, size, "cannot open '%s/%s': %s", dir, name, strerror(errno));
	lfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfd < 0) {
		close(fd);
		return mad_error(err, size, "cannot list '%s/%s': %s", dir, name, strerror(errno));
	}
	/* each entry removed as itself: a link goes, never what it names */
	while ((got = getdents64(lfd, buf, sizeof(buf))) > 0) {
		int removed = 0;

		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);

			off += e->d_reclen;
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    unlinkat(fd, e->d_name, 0) && errno != ENOENT) {
				int e2 = errno;

				close(lfd);
				close(fd);
				return mad_error(err, size, "cannot remove '%s/%s/%s': %s", dir,
						 name, e->d_name, strerror(e2));
			}
			removed += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
		}
		/* a listing of a folder being emptied: read it again from the start */
		if (!removed || lseek(lfd, 0, SEEK_SET) < 0)
			break;
	}
	close(lfd);
	close(fd);
	if (unlinkat(runfd, name, AT_REMOVEDIR))
		return mad_error(err, size, "cannot remove '%s/%s': %s", dir, name, strerror(errno));
	return 0;
}
