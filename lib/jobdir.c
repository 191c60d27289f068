/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jobdir.c: see jobdir.h. */
#include "jobdir.h"
#include "error.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Joins A "/" B into OUT with memcpy only (system calls only). */
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

/* A + B into OUT (SIZE), memcpy only: -1 when it does not fit. */
static int concat(char *out, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + lb + 1 > size)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, b, lb + 1);
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
	char final[MAD_JOBDIR_PATH + 64], tmpname[128], tmp[MAD_JOBDIR_PATH + 128];
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
	if (join(final, sizeof(final), dir, name) || join(tmp, sizeof(tmp), dir, tmpname))
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
	/* rename() replaces: what was there is an earlier attempt's, and a
	 * write kept out by it would be a success that did not happen */
	if (!e && rename(tmp, final))
		e = errno;
	if (e)
		unlink(tmp);
	return e ? write_failed(dir, name, e, err, size) : 0;
}

int mad_file_check(int dirfd, const char *name, uid_t uid, struct stat *st, char *why, size_t wsize)
{
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW)) {
		int e = errno;

		mad_error(why, wsize, "%s", strerror(e));
		errno = e;
		return -1;
	}
	if (S_ISLNK(st->st_mode))
		snprintf(why, wsize, "a symbolic link");
	else if (!S_ISREG(st->st_mode))
		snprintf(why, wsize, "not a regular file");
	else if (st->st_uid != uid)
		snprintf(why, wsize, "owned by uid %u, not the job's user (uid %u)",
			 (unsigned)st->st_uid, (unsigned)uid);
	else
		return 0;
	return 1;
}

/* A cluster name goes into a file line: printable and short. */
static int cluster_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > 63)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

int mad_jobdir_init(struct mad_jobdir *d, const char *run_dir, const char *base_name,
		    const char *cluster, long job, long restart, uid_t uid, char *err, size_t size)
{
	char host[256] = "";
	int n;

	memset(d, 0, sizeof(*d));
	d->uid = uid;
	d->not_before = -1;
	d->any_cluster = cluster == NULL;
	if (!cluster)
		cluster = "";
	if (!cluster_ok(cluster)) {
		char shown[MAD_PRINTABLE_SIZE];

		mad_printable(shown, sizeof(shown), cluster, strlen(cluster));
		return mad_error(err, size,
				 "the cluster name '%s' (SLURM_CLUSTER_NAME) is not a printable word of at most 63 bytes",
				 shown);
	}
	/* room for "~K", ".new.RANDOM" and ".old.TIME.RANDOM" after the base */
	if (strlen(run_dir) + strlen(base_name) + 64 > sizeof(d->base) ||
	    join(d->base, sizeof(d->base), run_dir, base_name) ||
	    concat(d->run_dir, sizeof(d->run_dir), run_dir, ""))
		return mad_error(err, size, "the run folder '%.200s...' is too long", run_dir);
	gethostname(host, sizeof(host) - 1);
	n = snprintf(d->attempt, sizeof(d->attempt), "cluster=%s\n", cluster);
	d->cluster_len = (size_t)n;
	n += snprintf(d->attempt + n, sizeof(d->attempt) - (size_t)n, "job=%ld\nrestart=%ld\n", job,
		      restart);
	d->identity_len = (size_t)n;
	n += snprintf(d->attempt + n, sizeof(d->attempt) - (size_t)n,
		      "uid=%u\ncreated=%ld\nhost=%s\n", (unsigned)uid, (long)time(NULL), host);
	if (n < 0 || (size_t)n >= sizeof(d->attempt))
		return mad_error(err, size, "the attempt record does not fit");
	d->attempt_len = (size_t)n;
	return 0;
}

void mad_jobdir_name(const struct mad_jobdir *d, int k, char *out)
{
	size_t n = strlen(d->base);

	memcpy(out, d->base, n + 1);
	if (k > 0 && k < MAD_JOBDIR_NAMES) {
		out[n] = '~';
		out[n + 1] = (char)('0' + k);
		out[n + 2] = '\0';
	}
}

/* The created= time of an attempt file's text BUF (LEN), or -1. */
static long attempt_created(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	long t = 0;

	for (; p + 9 <= end; p++)
		if ((p == buf || p[-1] == '\n') && memcmp(p, "created=", 8) == 0)
			break;
	if (p + 9 > end)
		return -1;
	for (p += 8; p < end && *p >= '0' && *p <= '9' && t < 1000000000000L; p++)
		t = t * 10 + (*p - '0');
	return t;
}

/* The attempt file of folder PATH is the user's and names this attempt: 1;
 * 2 when it was made before d->not_before;
 * 0 when it is not (*READABLE: there is one of the user's); -1 when it
 * cannot be looked at (errno). */
static int attempt_matches(const struct mad_jobdir *d, const char *path, int *readable)
{
	char file[MAD_JOBDIR_PATH + 16], buf[sizeof(d->attempt)];
	struct stat st;
	ssize_t r;
	size_t off = 0;
	int fd;

	*readable = 0;
	if (join(file, sizeof(file), path, MAD_JOBDIR_ATTEMPT))
		return 0;
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		/* none, or a link, or not the user's to read: not made by us */
		return errno == ENOENT || errno == ELOOP || errno == EACCES ? 0 : -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != d->uid) {
		close(fd);
		return 0;
	}
	while (off < sizeof(buf) && (r = read(fd, buf + off, sizeof(buf) - off)) > 0)
		off += (size_t)r;
	close(fd);
	if (r < 0)
		return -1;
	*readable = 1;
	if (off < d->identity_len)
		return 0;
	if (!d->any_cluster) {
		if (memcmp(buf, d->attempt, d->identity_len) != 0)
			return 0;
	} else {
		/* any cluster: the first line is a cluster's, the next two ours */
		const char *eol = memchr(buf, '\n', off);
		size_t rest = d->identity_len - d->cluster_len;

		if (!eol || (size_t)(eol + 1 - buf) + rest > off || strncmp(buf, "cluster=", 8) != 0 ||
		    memcmp(eol + 1, d->attempt + d->cluster_len, rest) != 0)
			return 0;
	}
	{
		long made = attempt_created(buf, off);

		return d->not_before >= 0 && made >= 0 && made < d->not_before ? 2 : 1;
	}
}

enum mad_jobdir_why mad_jobdir_check(const struct mad_jobdir *d, const char *path, struct stat *st)
{
	int readable, rc;

	if (lstat(path, st))
		return errno == ENOENT ? MAD_JOBDIR_ABSENT : MAD_JOBDIR_ERROR;
	if (S_ISLNK(st->st_mode))
		return MAD_JOBDIR_LINK;
	if (!S_ISDIR(st->st_mode))
		return MAD_JOBDIR_NOT_DIR;
	if (st->st_uid != d->uid)
		return MAD_JOBDIR_OWNER;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return MAD_JOBDIR_MODE;
	rc = attempt_matches(d, path, &readable);
	if (rc < 0)
		return MAD_JOBDIR_ERROR;
	if (rc == 0)
		return readable ? MAD_JOBDIR_OTHER_ATTEMPT : MAD_JOBDIR_NO_ATTEMPT;
	return rc == 2 ? MAD_JOBDIR_EARLIER : MAD_JOBDIR_OURS;
}

void mad_jobdir_describe(const struct mad_jobdir *d, enum mad_jobdir_why why, const struct stat *st,
			 char *out, size_t size)
{
	switch (why) {
	case MAD_JOBDIR_OURS:
		snprintf(out, size, "this attempt's");
		break;
	case MAD_JOBDIR_ABSENT:
		snprintf(out, size, "absent");
		break;
	case MAD_JOBDIR_LINK:
		snprintf(out, size, "a symbolic link");
		break;
	case MAD_JOBDIR_NOT_DIR:
		snprintf(out, size, "not a directory");
		break;
	case MAD_JOBDIR_OWNER:
		snprintf(out, size, "owned by uid %u, not the job's user (uid %u)",
			 (unsigned)st->st_uid, (unsigned)d->uid);
		break;
	case MAD_JOBDIR_MODE:
		snprintf(out, size, "writable by group or others (mode %04o)",
			 (unsigned)(st->st_mode & 07777));
		break;
	case MAD_JOBDIR_NO_ATTEMPT:
		snprintf(out, size, "no attempt file of the job's user: not made by this attempt");
		break;
	case MAD_JOBDIR_OTHER_ATTEMPT:
		snprintf(out, size, "another attempt's folder (not %.*s)",
			 (int)(d->identity_len - 1 - (d->any_cluster ? d->cluster_len : 0)),
			 d->attempt + (d->any_cluster ? d->cluster_len : 0));
		break;
	case MAD_JOBDIR_EARLIER:
		snprintf(out, size,
			 "made before the job was submitted (%ld): an earlier job's with the same id",
			 d->not_before);
		break;
	default:
		snprintf(out, size, "cannot be read");
		break;
	}
	/* one line: the identity's newlines as spaces */
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

/* PATH SUFFIX and 16 random hex digits into OUT (SIZE): a name in the
 * shared run folder no one can guess and plant first.  System calls
 * only. */
static int random_name(char *out, size_t size, const char *path, const char *suffix)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[8];
	size_t n = strlen(path), ns = strlen(suffix);

	if (n + ns + 17 > size)
		return errno = ENAMETOOLONG, -1;
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		uint64_t v = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)r;

		memcpy(r, &v, sizeof(r));
	}
	memcpy(out, path, n);
	memcpy(out + n, suffix, ns);
	n += ns;
	for (size_t i = 0; i < sizeof(r); i++) {
		out[n++] = hex[r[i] >> 4];
		out[n++] = hex[r[i] & 15];
	}
	out[n] = '\0';
	return 0;
}

/* Makes PATH whole: a temporary folder (a name no one can guess) with the
 * attempt file, renamed into place, so no reader sees a folder without its
 * identity.  0 made, 1 the name was taken meanwhile, -1 (errno) failed.
 * System calls only. */
static int make_dir(const struct mad_jobdir *d, const char *path)
{
	char tmp[MAD_JOBDIR_PATH + 64], file[MAD_JOBDIR_PATH + 96];
	int e, tries = 0;

	do {
		if (random_name(tmp, sizeof(tmp), path, ".new.") ||
		    join(file, sizeof(file), tmp, MAD_JOBDIR_ATTEMPT))
			return errno = ENAMETOOLONG, -1;
		if (mkdir(tmp, 0755) == 0)
			break;
		if (errno != EEXIST || ++tries == 3)
			return -1;
	} while (1);
	if (mad_write_file(tmp, MAD_JOBDIR_ATTEMPT, d->attempt, d->attempt_len, 0, NULL, 0)) {
		e = errno;
		rmdir(tmp);
		return errno = e, -1;
	}
	if (rename(tmp, path) == 0)
		return 0;
	e = errno;
	unlink(file);
	rmdir(tmp);
	if (e == EEXIST || e == ENOTEMPTY || e == EPERM || e == EACCES || e == ENOTDIR || e == EISDIR)
		return 1;
	return errno = e, -1;
}

/* Appends "SEP TEXT" to NOTES (NULL: nothing). */
static void note(char *notes, size_t nsize, const char *text)
{
	size_t n;

	if (!notes || !nsize)
		return;
	n = strlen(notes);
	snprintf(notes + n, nsize - n, "%s%s", n ? "; " : "", text);
}

/* The run folder holds every user's job folders: one that others may
 * write without the sticky bit lets them rename ours away. */
static int run_dir_usable(const struct mad_jobdir *d, char *err, size_t size)
{
	struct stat st;

	if (stat(d->run_dir, &st)) {
		if (!err)
			return -1;
		return mad_error(err, size, "run folder '%s' (--mad-run-dir) is not a directory: %s",
				 d->run_dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode)) {
		if (!err)
			return -1;
		return mad_error(err, size, "run folder '%s' (--mad-run-dir) is not a directory",
				 d->run_dir);
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		if (!err)
			return -1;
		return mad_error(err, size,
				 "run folder '%s' (--mad-run-dir) is writable by group or others without the sticky bit (mode %04o): another user could replace this job's folder; make it 1777 (chmod +t) or the user's own",
				 d->run_dir, (unsigned)(st.st_mode & 07777));
	}
	/* the sticky bit does not bind the folder's owner */
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_uid != 0 && st.st_uid != d->uid) {
		if (!err)
			return -1;
		return mad_error(err, size,
				 "run folder '%s' (--mad-run-dir) is writable by others and owned by uid %u, who could replace this job's folder: a shared run folder must be root's (mode 1777)",
				 d->run_dir, (unsigned)st.st_uid);
	}
	return 0;
}

/* FOUND: an earlier job's folder of this identity goes aside. */
static int move_aside(const char *path, char *notes, size_t nsize, char *err, size_t size)
{
	char old[MAD_JOBDIR_PATH + 64], suffix[40], text[2 * MAD_JOBDIR_PATH + 128];
	int rc, tries = 0;

	snprintf(suffix, sizeof(suffix), ".old.%ld.", (long)time(NULL));
	do
		rc = random_name(old, sizeof(old), path, suffix) ? -1 : rename(path, old);
	while (rc && (errno == EEXIST || errno == ENOTEMPTY) && ++tries < 3);
	if (rc)
		return mad_error(err, size,
				 "the job folder '%s' is an earlier job's with the same id, and it cannot be moved aside to '%s': %s",
				 path, old, strerror(errno));
	snprintf(text, sizeof(text), "moved '%s', an earlier job's with the same id, to '%s'", path,
		 old);
	note(notes, nsize, text);
	return 0;
}

int mad_jobdir_open(const struct mad_jobdir *d, enum mad_jobdir_mode mode, char *out, size_t osize,
		    char *notes, size_t nsize, char *err, size_t size)
{
	char path[MAD_JOBDIR_PATH];
	struct stat st;
	int k, round, free_k, made;

	if (osize < MAD_JOBDIR_PATH || (mode == MAD_JOBDIR_FOUND && !err))
		return -1;
	if (run_dir_usable(d, err, size))
		return -1;
	/* Every name is looked at before one is made: a planted entry that
	 * vanishes later must not send another node of the attempt to a new
	 * folder under an earlier name. */
	for (round = 0; round < 3; round++) {
		if (notes && nsize)
			*notes = '\0';
		free_k = -1;
		for (k = 0; k < MAD_JOBDIR_NAMES; k++) {
			enum mad_jobdir_why why;

			mad_jobdir_name(d, k, path);
			why = mad_jobdir_check(d, path, &st);
			if (why == MAD_JOBDIR_OURS && mode != MAD_JOBDIR_FOUND) {
				memcpy(out, path, strlen(path) + 1);
				return 0;
			}
			if (why == MAD_JOBDIR_OURS) {
				if (move_aside(path, notes, nsize, err, size))
					return -1;
				why = MAD_JOBDIR_ABSENT;
			}
			if (why == MAD_JOBDIR_ERROR) {
				if (!err)
					return -1;
				return mad_error(err, size, "cannot look at the job folder '%s': %s",
						 path, strerror(errno));
			}
			if (why == MAD_JOBDIR_ABSENT) {
				if (free_k < 0)
					free_k = k;
				continue;
			}
			if (notes && nsize) {
				char what[256], text[MAD_JOBDIR_PATH + 300];

				mad_jobdir_describe(d, why, &st, what, sizeof(what));
				snprintf(text, sizeof(text), "ignored '%s': %s", path, what);
				note(notes, nsize, text);
			}
		}
		if (mode == MAD_JOBDIR_FIND)
			return 1;
		if (free_k < 0)
			break;
		mad_jobdir_name(d, free_k, path);
		made = make_dir(d, path);
		if (made == 0) {
			memcpy(out, path, strlen(path) + 1);
			return 0;
		}
		if (made < 0) {
			if (!err)
				return -1;
			return mad_error(err, size, "cannot create the job folder '%s': %s", path,
					 strerror(errno));
		}
		/* taken meanwhile (another node of this attempt?): look again */
		if (mode == MAD_JOBDIR_FOUND)
			mode = MAD_JOBDIR_JOIN; /* what it found aside stays aside */
	}
	if (!err)
		return -1;
	if (free_k >= 0)
		return mad_error(err, size,
				 "the job folders '%s' .. '~%d' kept changing while they were read",
				 d->base, MAD_JOBDIR_NAMES - 1);
	return mad_error(err, size, "no usable job folder: '%s' and '%s~1' to '~%d' are all taken (%s)",
			 d->base, d->base, MAD_JOBDIR_NAMES - 1,
			 notes && *notes ? notes : "the folders change while they are read");
}
