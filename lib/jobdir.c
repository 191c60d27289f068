/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jobdir.c: see jobdir.h. */
#include "jobdir.h"
#include "error.h"
#include "strbuf.h"

#include <dirent.h>
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

int mad_write_file_at(int dirfd, const char *dir, const char *name, const char *content, size_t len,
		      int flags, char *err, size_t size)
{
	char tmp[128];
	size_t n = strlen(name), off = 0;
	int fd, e = 0;

	if (n + 32 > sizeof(tmp))
		return write_failed(dir, name, ENAMETOOLONG, err, size);
	tmp[0] = '.';
	memcpy(tmp + 1, name, n);
	memcpy(tmp + 1 + n, ".tmp.", 5);
	n = 1 + n + 5;
	n += fmt_u64(tmp + n, (uint64_t)getpid(), 0);
	tmp[n] = '\0';
	unlinkat(dirfd, tmp, 0); /* a leftover of a crashed writer with our pid */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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
	/* renameat() replaces: what was there is an earlier attempt's, and a
	 * write kept out by it would be a success that did not happen */
	if (!e && renameat(dirfd, tmp, dirfd, name))
		e = errno;
	if (e)
		unlinkat(dirfd, tmp, 0);
	return e ? write_failed(dir, name, e, err, size) : 0;
}

int mad_write_file(const char *dir, const char *name, const char *content, size_t len, int flags,
		   char *err, size_t size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return write_failed(dir, name, errno, err, size);
	rc = mad_write_file_at(fd, dir, name, content, len, flags, err, size);
	close(fd);
	return rc;
}

int mad_dir_reopen(int dirfd)
{
	return openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
	    strlen(base_name) >= sizeof(d->base_name) ||
	    join(d->base, sizeof(d->base), run_dir, base_name) ||
	    concat(d->run_dir, sizeof(d->run_dir), run_dir, ""))
		return mad_error(err, size, "the run folder '%.200s...' is too long", run_dir);
	memcpy(d->base_name, base_name, strlen(base_name) + 1);
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

/* The attempt file of the folder DIRFD is the user's and names this
 * attempt: 1; 2 when it was made before d->not_before; 0 when it is not
 * (*READABLE: there is one of the user's); -1 when it cannot be looked at
 * (errno). */
static int attempt_matches(const struct mad_jobdir *d, int dirfd, int *readable)
{
	char buf[sizeof(d->attempt)];
	struct stat st;
	ssize_t r = 0;
	size_t off = 0;
	int fd;

	*readable = 0;
	fd = openat(dirfd, MAD_JOBDIR_ATTEMPT, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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

/* A folder's owner and mode, as the run folder's path and a job folder
 * need them: 0, or the reason it is not trusted. */
static enum mad_jobdir_why dir_owner_mode(const struct stat *st, uid_t uid)
{
	if (st->st_uid != uid)
		return MAD_JOBDIR_OWNER;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return MAD_JOBDIR_MODE;
	return MAD_JOBDIR_OURS;
}

enum mad_jobdir_why mad_jobdir_check_at(const struct mad_jobdir *d, int runfd, const char *name,
					struct stat *st, int *fdp)
{
	enum mad_jobdir_why why;
	struct stat opened;
	int readable, rc, fd;

	if (fstatat(runfd, name, st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? MAD_JOBDIR_ABSENT : MAD_JOBDIR_ERROR;
	if (S_ISLNK(st->st_mode))
		return MAD_JOBDIR_LINK;
	if (!S_ISDIR(st->st_mode))
		return MAD_JOBDIR_NOT_DIR;
	if ((why = dir_owner_mode(st, d->uid)) != MAD_JOBDIR_OURS)
		return why;
	/* what is read is what was checked: the folder itself, opened */
	fd = openat(runfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT  ? MAD_JOBDIR_ABSENT :
		       errno == ELOOP   ? MAD_JOBDIR_LINK :
		       errno == ENOTDIR ? MAD_JOBDIR_NOT_DIR :
					  MAD_JOBDIR_ERROR;
	if (fstat(fd, &opened)) {
		close(fd);
		return MAD_JOBDIR_ERROR;
	}
	*st = opened; /* replaced since the look: the opened one decides */
	why = dir_owner_mode(st, d->uid);
	if (why == MAD_JOBDIR_OURS) {
		rc = attempt_matches(d, fd, &readable);
		why = rc < 0  ? MAD_JOBDIR_ERROR :
		      rc == 0 ? (readable ? MAD_JOBDIR_OTHER_ATTEMPT : MAD_JOBDIR_NO_ATTEMPT) :
		      rc == 2 ? MAD_JOBDIR_EARLIER :
				MAD_JOBDIR_OURS;
	}
	if (why == MAD_JOBDIR_OURS && fdp)
		*fdp = fd;
	else
		close(fd);
	return why;
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

/* Makes NAME in the run folder RUNFD whole: a temporary folder (a name no
 * one can guess) with the attempt file, renamed into place, so no reader
 * sees a folder without its identity.  0 made, 1 the name was taken
 * meanwhile, -1 (errno) failed.  System calls only. */
static int make_dir(const struct mad_jobdir *d, int runfd, const char *name)
{
	char tmp[128];
	int e, fd, tries = 0;

	do {
		if (random_name(tmp, sizeof(tmp), d->base_name, ".new."))
			return -1;
		if (mkdirat(runfd, tmp, 0755) == 0)
			break;
		if (errno != EEXIST || ++tries == 3)
			return -1;
	} while (1);
	fd = openat(runfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 ||
	    mad_write_file_at(fd, tmp, MAD_JOBDIR_ATTEMPT, d->attempt, d->attempt_len, 0, NULL, 0)) {
		e = errno;
		if (fd >= 0)
			close(fd);
		unlinkat(runfd, tmp, AT_REMOVEDIR);
		return errno = e, -1;
	}
	/* the folder stays the one that was made, whatever its name becomes */
	if (renameat(runfd, tmp, runfd, name) == 0) {
		close(fd);
		return 0;
	}
	e = errno;
	unlinkat(fd, MAD_JOBDIR_ATTEMPT, 0);
	close(fd);
	unlinkat(runfd, tmp, AT_REMOVEDIR);
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

/* What a folder on the run folder's path must be: root's or the job
 * user's, and writable by no one else unless it has the sticky bit (then
 * others may add names, never rename or remove ours).  0, or -1. */
static int path_dir_ok(const struct stat *st, uid_t uid)
{
	if (st->st_uid != 0 && st->st_uid != uid)
		return -1;
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return -1;
	return 0;
}

/* An error about the folder SEEN (or "/") on the run folder's path. */
static int path_refused(const char *run_dir, const char *seen, const struct stat *st, uid_t uid,
			const char *why, int e, char *err, size_t size)
{
	const char *where = *seen ? seen : "/";

	if (!err)
		return errno = e ? e : EPERM, -1;
	if (why)
		return mad_error(err, size, "run folder '%s' (--mad-run-dir): '%s' %s", run_dir,
				 where, why);
	if (e)
		return mad_error(err, size, "run folder '%s' (--mad-run-dir): '%s': %s", run_dir,
				 where, strerror(e));
	if (st->st_uid != 0 && st->st_uid != uid)
		return mad_error(err, size,
				 "run folder '%s' (--mad-run-dir): '%s' is owned by uid %u, neither root nor the job's user (uid %u), who could replace what is below it; a shared run folder and the folders above it must be root's",
				 run_dir, where, (unsigned)st->st_uid, (unsigned)uid);
	return mad_error(err, size,
			 "run folder '%s' (--mad-run-dir): '%s' is writable by group or others without the sticky bit (mode %04o): another user could replace what is below it; make it 1777 (chmod +t) or the user's own",
			 run_dir, where, (unsigned)(st->st_mode & 07777));
}

int mad_rundir_open(const char *path, uid_t uid, char *err, size_t size)
{
	char todo[2 * MAD_JOBDIR_PATH], seen[MAD_JOBDIR_PATH], comp[256], link[MAD_JOBDIR_PATH];
	size_t at = 0, n, slen = 0;
	struct stat st;
	int fd, next, links = 0;

	n = strlen(path);
	if (!n)
		return path_refused(path, "", NULL, uid, "is empty", 0, err, size);
	if (path[0] != '/') {
		if (!getcwd(todo, sizeof(todo) - n - 2))
			return path_refused(path, ".", NULL, uid, NULL, errno, err, size);
		slen = strlen(todo);
		todo[slen++] = '/';
	}
	if (slen + n + 1 > sizeof(todo))
		return path_refused(path, "", NULL, uid, "is too long", 0, err, size);
	memcpy(todo + slen, path, n + 1);
	seen[0] = '\0';
	slen = 0;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return path_refused(path, "", NULL, uid, NULL, errno, err, size);
	if (path_dir_ok(&st, uid)) {
		close(fd);
		return path_refused(path, "", &st, uid, NULL, 0, err, size);
	}
	while (todo[at]) {
		while (todo[at] == '/')
			at++;
		n = strcspn(todo + at, "/");
		if (!n)
			break;
		if (n >= sizeof(comp)) {
			close(fd);
			return path_refused(path, seen, NULL, uid, NULL, ENAMETOOLONG, err, size);
		}
		memcpy(comp, todo + at, n);
		comp[n] = '\0';
		at += n;
		if (!strcmp(comp, "."))
			continue;
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
			int e = errno;

			close(fd);
			if (slen + 1 + n < sizeof(seen))
				seen[slen] = '/', memcpy(seen + slen + 1, comp, n + 1);
			return path_refused(path, seen, NULL, uid,
					    e == ENOENT ? "does not exist" : NULL, e, err, size);
		}
		if (S_ISLNK(st.st_mode) && strcmp(comp, "..")) {
			/* its folder passed the check; the link must be as trusted */
			ssize_t r;
			size_t rest = strlen(todo + at);

			if (slen + 1 + n < sizeof(seen))
				seen[slen] = '/', memcpy(seen + slen + 1, comp, n + 1);
			if ((st.st_uid != 0 && st.st_uid != uid) || ++links > 40) {
				close(fd);
				return path_refused(path, seen, &st, uid,
						    links > 40 ? "starts too many symbolic links" :
								 "is a symbolic link of another user",
						    0, err, size);
			}
			r = readlinkat(fd, comp, link, sizeof(link) - 1);
			if (r <= 0 || (size_t)r + 1 + rest + 1 > sizeof(todo)) {
				close(fd);
				return path_refused(path, seen, NULL, uid, NULL,
						    r < 0 ? errno : ENAMETOOLONG, err, size);
			}
			seen[slen] = '\0';
			/* the rest of the path now follows the link's target */
			memmove(todo + r + 1, todo + at, rest + 1);
			memcpy(todo, link, (size_t)r);
			todo[r] = '/';
			at = 0;
			if (link[0] == '/') {
				close(fd);
				slen = 0;
				seen[0] = '\0';
				fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					return path_refused(path, "", NULL, uid, NULL, errno, err,
							    size);
			}
			continue;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (!strcmp(comp, "..")) {
			while (slen && seen[slen - 1] != '/')
				slen--;
			if (slen)
				slen--;
			seen[slen] = '\0';
		} else if (slen + 1 + n < sizeof(seen)) {
			seen[slen] = '/';
			memcpy(seen + slen + 1, comp, n + 1);
			slen += 1 + n;
		}
		if (next < 0) {
			int e = errno;

			close(fd);
			return path_refused(path, seen, NULL, uid,
					    e == ENOTDIR ? "is not a directory" : NULL, e, err, size);
		}
		close(fd);
		fd = next;
		/* the opened folder is checked, not the name looked at */
		if (fstat(fd, &st)) {
			int e = errno;

			close(fd);
			return path_refused(path, seen, NULL, uid, NULL, e, err, size);
		}
		if (path_dir_ok(&st, uid)) {
			close(fd);
			return path_refused(path, seen, &st, uid, NULL, 0, err, size);
		}
	}
	return fd;
}

/* FOUND: an earlier job's folder NAME of this identity goes aside. */
static int move_aside(const struct mad_jobdir *d, int runfd, const char *name, char *notes,
		      size_t nsize, char *err, size_t size)
{
	char old[128], suffix[40], text[2 * MAD_JOBDIR_PATH + 512];
	int rc, tries = 0;

	snprintf(suffix, sizeof(suffix), ".old.%ld.", (long)time(NULL));
	do
		rc = random_name(old, sizeof(old), name, suffix) ? -1 :
								   renameat(runfd, name, runfd, old);
	while (rc && (errno == EEXIST || errno == ENOTEMPTY) && ++tries < 3);
	if (rc)
		return mad_error(err, size,
				 "the job folder '%s/%s' is an earlier job's with the same id, and it cannot be moved aside to '%s': %s",
				 d->run_dir, name, old, strerror(errno));
	snprintf(text, sizeof(text), "moved '%s/%s', an earlier job's with the same id, to '%s/%s'",
		 d->run_dir, name, d->run_dir, old);
	note(notes, nsize, text);
	return 0;
}

/* NAME is one of the attempt's fallback names: <base>~ and 16 hex digits. */
static int fallback_name(const struct mad_jobdir *d, const char *name)
{
	size_t n = strlen(d->base_name);

	if (strncmp(name, d->base_name, n) || name[n] != '~' || strlen(name + n + 1) != MAD_JOBDIR_RANDOM)
		return 0;
	for (const char *p = name + n + 1; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

/* Says in NOTES why NAME was passed over. */
static void passed_over(const struct mad_jobdir *d, const char *name, enum mad_jobdir_why why,
			const struct stat *st, char *notes, size_t nsize)
{
	char what[256], text[MAD_JOBDIR_PATH + 400];

	if (!notes || !nsize || why == MAD_JOBDIR_ABSENT)
		return;
	mad_jobdir_describe(d, why, st, what, sizeof(what));
	snprintf(text, sizeof(text), "ignored '%s/%s': %s", d->run_dir, name, what);
	note(notes, nsize, text);
}

/* Looks at <base>, then at every fallback name: the first of this
 * attempt's in that order into BEST (its descriptor *FD), the others passed
 * over into NOTES.  FOUND moves the attempt's folders aside instead.
 * 0 found, 1 none, -1 (errno, or ERR) failed. */
static int look(const struct mad_jobdir *d, int runfd, enum mad_jobdir_mode mode, char *best,
		int *fd, char *notes, size_t nsize, char *err, size_t size)
{
	struct stat st;
	enum mad_jobdir_why why, base_why;
	int lfd, cfd = -1;

	*best = '\0';
	*fd = -1;
	why = base_why = mad_jobdir_check_at(d, runfd, d->base_name, &st, &cfd);
	if (why == MAD_JOBDIR_ERROR)
		goto broken;
	if (why == MAD_JOBDIR_OURS && mode != MAD_JOBDIR_FOUND) {
		memcpy(best, d->base_name, strlen(d->base_name) + 1);
		*fd = cfd;
		return 0;
	}
	if (why == MAD_JOBDIR_OURS) {
		close(cfd);
		if (move_aside(d, runfd, d->base_name, notes, nsize, err, size))
			return -1;
	} else {
		passed_over(d, d->base_name, why, &st, notes, nsize);
	}
	/* a listing of the run folder, opened anew: on NFS an open
	 * revalidates the folder and a listing refreshes the names it holds
	 * (nfs(5), close-to-open), so a folder a peer made is seen.  Read with
	 * getdents64 into the stack: a forked child may call this. */
	lfd = mad_dir_reopen(runfd);
	if (lfd < 0)
		goto broken;
	for (;;) {
		char buf[8192];
		ssize_t got = getdents64(lfd, buf, sizeof(buf));

		if (got < 0) {
			int e = errno;

			close(lfd);
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			errno = e;
			goto broken;
		}
		if (got == 0)
			break;
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);

			off += e->d_reclen;
			/* <base> absent before the listing may be a name the client
			 * cached as missing (NFS): the listing has refreshed it */
			if (!fallback_name(d, e->d_name) &&
			    (base_why != MAD_JOBDIR_ABSENT || strcmp(e->d_name, d->base_name)))
				continue;
			why = mad_jobdir_check_at(d, runfd, e->d_name, &st, &cfd);
			if (why == MAD_JOBDIR_OURS && mode == MAD_JOBDIR_FOUND) {
				close(cfd);
				if (move_aside(d, runfd, e->d_name, notes, nsize, err, size)) {
					close(lfd);
					return -1;
				}
			} else if (why == MAD_JOBDIR_OURS && (!*best || strcmp(e->d_name, best) < 0)) {
				if (*fd >= 0)
					close(*fd);
				*fd = cfd;
				memcpy(best, e->d_name, strlen(e->d_name) + 1);
			} else if (why == MAD_JOBDIR_OURS) {
				close(cfd);
			} else {
				passed_over(d, e->d_name, why, &st, notes, nsize);
			}
		}
	}
	close(lfd);
	return *best ? 0 : 1;
broken:
	if (err)
		mad_error(err, size, "cannot look at the job folder '%s': %s", d->base,
			  strerror(errno));
	return -1;
}

int mad_jobdir_open_at(const struct mad_jobdir *d, int runfd, enum mad_jobdir_mode mode, char *out,
		       size_t osize, int *fdp, char *notes, size_t nsize, char *err, size_t size)
{
	char name[128];
	int fd = -1, rc, made, round;

	if (osize < MAD_JOBDIR_PATH || (mode == MAD_JOBDIR_FOUND && !err))
		return -1;
	if (notes && nsize)
		*notes = '\0';
	rc = look(d, runfd, mode, name, &fd, notes, nsize, err, size);
	for (round = 0; rc == 1 && mode != MAD_JOBDIR_FIND && round < 3; round++) {
		/* <base> when free (a sibling racing for it then finds ours),
		 * else, and after a first try there lost to someone else, a
		 * name no one can have planted: another user making and
		 * removing <base> cannot keep the founder out */
		if (round == 0 && mad_jobdir_check_at(d, runfd, d->base_name, &(struct stat){ 0 },
						      NULL) == MAD_JOBDIR_ABSENT)
			memcpy(name, d->base_name, strlen(d->base_name) + 1);
		else if (random_name(name, sizeof(name), d->base_name, "~"))
			break;
		made = make_dir(d, runfd, name);
		if (made < 0)
			break;
		if (made == 0) {
			fd = openat(runfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			rc = fd < 0 ? -1 : 0;
			break;
		}
		/* taken meanwhile: by a sibling of this attempt, or by anyone */
		rc = look(d, runfd, MAD_JOBDIR_JOIN, name, &fd, NULL, 0, err, size);
	}
	if (rc == 1 && mode != MAD_JOBDIR_FIND) {
		rc = -1;
		if (err)
			mad_error(err, size,
				  "cannot create the job folder '%s' (or a name after it): %s",
				  d->base, strerror(errno));
	}
	if (rc != 0)
		return rc;
	if (join(out, osize, d->run_dir, name)) {
		close(fd);
		return err ? mad_error(err, size, "the job folder's path is too long") : -1;
	}
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

int mad_jobdir_open(const struct mad_jobdir *d, enum mad_jobdir_mode mode, char *out, size_t osize,
		    int *fdp, char *notes, size_t nsize, char *err, size_t size)
{
	int runfd = mad_rundir_open(d->run_dir, d->uid, err, size), rc;

	if (notes && nsize)
		*notes = '\0';
	if (runfd < 0)
		return -1;
	rc = mad_jobdir_open_at(d, runfd, mode, out, osize, fdp, notes, nsize, err, size);
	close(runfd);
	return rc;
}
