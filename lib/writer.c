/* SPDX-License-Identifier: GPL-2.0-or-later */
/* writer.c: see writer.h. */
#include "config.h"

#include "writer.h"
#include "error.h"
#include "marker.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "madwrite"

/* This build's version as the header holds it, NUL-padded: a constant, so
 * the check makes no library call a fork of slurmstepd could not. */
static const char build_version[24] = PACKAGE_VERSION;

/* What a request starts with; the gids, then the markers, follow it. */
struct request_head {
	char magic[8];
	char version[24]; /* PACKAGE_VERSION, NUL-padded */
	uint64_t size;    /* of the whole request */
	uint32_t layout;  /* the sizes of this build's structures */
	uint32_t ngids, nmarkers;
	uint32_t uid, gid;
	int32_t flags;
	int64_t job_id, stepd;
	struct mad_jobdir dir;
};

_Static_assert(sizeof(struct request_head) <= sizeof(struct mad_jobdir) + 256,
	       "MAD_WRITER_REQUEST_MAX bounds the head");

#define LAYOUT ((uint32_t)(sizeof(struct request_head) * 65536U + sizeof(struct mad_writer_marker)))

/* The gids' bytes, padded so the markers that follow stay aligned. */
static size_t gids_size(size_t ngids)
{
	return (ngids * sizeof(gid_t) + 7) & ~(size_t)7;
}

size_t mad_writer_request_size(const struct mad_writer_job *j, int n)
{
	if (n < 1 || n > MAD_WRITER_MARKERS_MAX || j->ngids < 0 || j->ngids > MAD_WRITER_GIDS_MAX)
		return 0;
	return sizeof(struct request_head) + gids_size((size_t)j->ngids) +
	       (size_t)n * sizeof(struct mad_writer_marker);
}

void mad_writer_encode(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n,
		       void *buf)
{
	struct request_head *h = buf;
	size_t gsize = gids_size((size_t)j->ngids);

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, sizeof(h->magic));
	memcpy(h->version, build_version, sizeof(h->version));
	h->size = mad_writer_request_size(j, n);
	h->layout = LAYOUT;
	h->ngids = (uint32_t)j->ngids;
	h->nmarkers = (uint32_t)n;
	h->uid = (uint32_t)j->uid;
	h->gid = (uint32_t)j->gid;
	h->flags = j->flags;
	h->job_id = j->job_id;
	h->stepd = j->stepd;
	h->dir = j->dir;
	memset((char *)buf + sizeof(*h), 0, gsize);
	if (j->ngids)
		memcpy((char *)buf + sizeof(*h), j->gids, (size_t)j->ngids * sizeof(gid_t));
	memcpy((char *)buf + sizeof(*h) + gsize, m, (size_t)n * sizeof(*m));
}

/* A NUL within the SIZE bytes of S, and S a name in a folder: not empty,
 * no '/', not "." or "..". */
static int plain_name(const char *s, size_t size)
{
	const char *end = memchr(s, '\0', size);

	return end && end > s && !memchr(s, '/', (size_t)(end - s)) && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

static int bad(char *why, size_t wsize, const char *what)
{
	if (why)
		snprintf(why, wsize, "%s", what);
	return -1;
}

int mad_writer_check(const void *buf, size_t len, struct mad_writer_job *j,
		     const struct mad_writer_marker **m, int *n, char *why, size_t wsize)
{
	const struct request_head *h = buf;
	const struct mad_jobdir *d = &h->dir;
	size_t gsize;
	uint32_t i;

	if (len < sizeof(*h) || memcmp(h->magic, MAGIC, sizeof(h->magic)) != 0)
		return bad(why, wsize, "not a marker writer's request");
	if (memcmp(h->version, build_version, sizeof(h->version)) != 0 || h->layout != LAYOUT) {
		bad(why, wsize, "a request of another build of mad-spank");
		return -2;
	}
	if (h->ngids > MAD_WRITER_GIDS_MAX || h->nmarkers < 1 || h->nmarkers > MAD_WRITER_MARKERS_MAX)
		return bad(why, wsize, "too many groups or markers, or none");
	gsize = gids_size(h->ngids);
	if (h->size != len ||
	    len != sizeof(*h) + gsize + (size_t)h->nmarkers * sizeof(struct mad_writer_marker))
		return bad(why, wsize, "the request's size is not its own (cut short?)");
	if (!memchr(d->base, '\0', sizeof(d->base)) ||
	    !memchr(d->run_dir, '\0', sizeof(d->run_dir)) || d->run_dir[0] != '/' ||
	    !plain_name(d->base_name, sizeof(d->base_name)) || d->attempt_len >= sizeof(d->attempt) ||
	    d->identity_len > d->attempt_len || d->cluster_len > d->identity_len)
		return bad(why, wsize, "the job folder is not a plain one");
	if ((uid_t)h->uid != d->uid || h->job_id < -1 || h->stepd < -1 ||
	    (h->flags & ~MAD_WRITE_NOSYNC))
		return bad(why, wsize, "the user, job or flags are not a job's");
	*m = (const struct mad_writer_marker *)((const char *)buf + sizeof(*h) + gsize);
	for (i = 0; i < h->nmarkers; i++)
		if (!plain_name((*m)[i].name, sizeof((*m)[i].name)) ||
		    (*m)[i].len > sizeof((*m)[i].content))
			return bad(why, wsize, "a marker's name or length is not one");
	j->dir = *d;
	j->uid = (uid_t)h->uid;
	j->gid = (gid_t)h->gid;
	j->gids = h->ngids ? (const gid_t *)((const char *)buf + sizeof(*h)) : NULL;
	j->ngids = (int)h->ngids;
	j->flags = h->flags;
	j->job_id = (long)h->job_id;
	j->stepd = (long)h->stepd;
	*n = (int)h->nmarkers;
	return 0;
}

int mad_writer_run(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n,
		   char *why, size_t wsize)
{
	char dir[MAD_JOBDIR_PATH];
	int fd, i, code = MAD_WRITER_OK;

	if ((j->ngids ? setgroups((size_t)j->ngids, j->gids) : setgroups(1, &j->gid)) ||
	    setresgid(j->gid, j->gid, j->gid) || setresuid(j->uid, j->uid, j->uid) ||
	    ((getuid() != j->uid || geteuid() != j->uid || getegid() != j->gid) && (errno = EPERM))) {
		if (why)
			mad_error(why, wsize, "cannot become uid %u gid %u: %s", (unsigned)j->uid,
				  (unsigned)j->gid, strerror(errno));
		return MAD_WRITER_NO_DROP;
	}
	/* opened as the user; the markers are read and written in it alone */
	if (mad_jobdir_open(&j->dir, MAD_JOBDIR_JOIN, dir, sizeof(dir), &fd, NULL, 0, why, wsize))
		return MAD_WRITER_NO_DIR;
	for (i = 0; i < n; i++) {
		/* task_init recorded why the task could not start: that stays */
		if (j->job_id >= 0 && mad_marker_failure_recorded(fd, m[i].name, j->job_id, j->stepd))
			continue;
		/* the others still go; WHY keeps the first failure */
		if (mad_write_file_at(fd, dir, m[i].name, m[i].content, m[i].len, j->flags,
				      code == MAD_WRITER_OK ? why : NULL, wsize))
			code = MAD_WRITER_NO_WRITE;
	}
	close(fd);
	return code;
}

int mad_writer_serve(const void *buf, size_t len, char *why, size_t wsize)
{
	const struct mad_writer_marker *m;
	struct mad_writer_job j;
	int n;

	switch (mad_writer_check(buf, len, &j, &m, &n, why, wsize)) {
	case 0:
		return mad_writer_run(&j, m, n, why, wsize);
	case -2:
		return MAD_WRITER_OTHER_BUILD;
	default:
		return MAD_WRITER_BAD_REQUEST;
	}
}

const char *mad_writer_strerror(int code)
{
	switch (code) {
	case MAD_WRITER_OK:
		return "written";
	case MAD_WRITER_OTHER_BUILD:
		return "the writer is of another build";
	case MAD_WRITER_BAD_REQUEST:
		return "the writer refused the request";
	case MAD_WRITER_NO_DROP:
		return "dropping privileges failed";
	case MAD_WRITER_NO_DIR:
		return "no job folder of this attempt can be opened";
	case MAD_WRITER_NO_WRITE:
		return "the file cannot be written";
	default:
		return NULL;
	}
}

/* The file systems an exec from is never held by a server: local disks
 * and memory.  Anything else (NFS, CIFS, FUSE, Lustre, GPFS, Ceph, an
 * overlay or squashfs whose layers may be on one) takes the fork. */
static const char *const local_fs[] = { "ext2",  "ext3",     "ext4",    "xfs", "btrfs",
					"tmpfs", "ramfs",    "rootfs",  "zfs", "f2fs",
					"jfs",   "reiserfs", "bcachefs" };

/* Field N (0-based) of the mountinfo line LINE (LEN bytes), unescaped
 * (\ooo) into OUT: 0, or -1 when it is not there or does not fit. */
static int mount_field(const char *line, size_t len, int n, char *out, size_t size)
{
	size_t i = 0, o = 0;

	while (n > 0 && i < len)
		if (line[i++] == ' ')
			n--;
	if (n > 0 || i >= len)
		return -1;
	for (; i < len && line[i] != ' '; i++) {
		char c = line[i];

		if (c == '\\' && i + 3 < len && line[i + 1] >= '0' && line[i + 1] <= '3' &&
		    line[i + 2] >= '0' && line[i + 2] <= '7' && line[i + 3] >= '0' &&
		    line[i + 3] <= '7') {
			c = (char)((line[i + 1] - '0') * 64 + (line[i + 2] - '0') * 8 +
				   (line[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= size || c == '\0') /* a NUL is no part of a name */
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return o ? 0 : -1;
}

int mad_writer_mount_local(const char *mountinfo, size_t len, const char *path, char *type, size_t tsize)
{
	const char *line = mountinfo, *end = mountinfo + len;
	int found = 0;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line)), *sep;
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line), m, i;
		char point[4096], fs[64];

		/* "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE ..." */
		sep = memmem(line, n, " - ", 3);
		if (sep && mount_field(line, n, 4, point, sizeof(point)) == 0) {
			m = strlen(point);
			while (m > 1 && point[m - 1] == '/')
				m--;
			/* POINT holds PATH: "/" holds all; else a prefix ending at a '/' */
			if (point[0] == '/' && (m == 1 || (strncmp(path, point, m) == 0 &&
							   (path[m] == '/' || path[m] == '\0')))) {
				found = 1;
				/* a type that does not read (none, too long) is no local one */
				if (mount_field(sep + 3, n - (size_t)(sep + 3 - line), 0, fs,
						sizeof(fs)))
					strcpy(fs, "unreadable");
				for (i = 0; i < sizeof(local_fs) / sizeof(local_fs[0]); i++)
					if (strcmp(fs, local_fs[i]) == 0)
						break;
				if (i == sizeof(local_fs) / sizeof(local_fs[0])) {
					snprintf(type, tsize, "%s", fs);
					return 0;
				}
			}
		}
		line += n + 1;
	}
	return found ? 1 : -1;
}

/* The mount table as this process sees it, read whole (procfs: it never
 * waits on a server), into a buffer the caller frees; NULL when unread. */
static char *read_mountinfo(size_t *len)
{
	size_t cap = 65536, got = 0;
	char *buf = malloc(cap);
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	while (buf && fd >= 0) {
		ssize_t r;

		if (got == cap) {
			char *grown = cap < (16U << 20) ? realloc(buf, cap * 2) : NULL;

			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		r = read(fd, buf + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0) {
				close(fd);
				*len = got;
				return buf;
			}
			break;
		}
		got += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* Whether PATH is on a local file system of MOUNTINFO: 1, else 0 with WHY. */
static int on_local_fs(const char *mountinfo, size_t len, const char *path, char *why, size_t wsize)
{
	char type[64] = "";
	int rc = mad_writer_mount_local(mountinfo, len, path, type, sizeof(type));

	if (rc == 0 && why)
		mad_error(why, wsize,
			  "'%s' is reached through a file system (%s) an exec from may wait on",
			  path, type);
	else if (rc < 0 && why)
		mad_error(why, wsize, "'%s' is on no file system /proc/self/mountinfo lists", path);
	return rc == 1;
}

/* The path of the file mapped at ADDR in this process, by /proc/self/maps
 * (the kernel's path of the mapping: no lookup), into OUT: 0, or -1. */
static int mapped_path(uintptr_t addr, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096 + 128];
	int rc = -1;

	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int at = 0;

		/* "LO-HI PERMS OFFSET DEV INODE      PATH" */
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || !at ||
		    addr < lo || addr >= hi)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (line[at] == '/' && strlen(line + at) < size) {
			strcpy(out, line + at);
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}

/* What a dynamic mad-writer's exec looks up besides itself, as this
 * process's objects say: the dynamic loader by the main program's
 * PT_INTERP, and the C library by the name the loader found it under. */
struct libs {
	int seen;
	const char *interp, *libc;
	uintptr_t libc_at; /* an address of the C library's first mapping */
};

static int libs_of(struct dl_phdr_info *info, size_t size, void *data)
{
	struct libs *l = data;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_INTERP && l->seen == 0) /* the main program comes first */
			l->interp = (const char *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_LOAD && !l->libc && strncmp(base, "libc.so", 7) == 0 &&
		    info->dlpi_name[0] == '/') {
			l->libc = info->dlpi_name;
			l->libc_at = info->dlpi_addr + ph->p_vaddr;
		}
	}
	l->seen++;
	return 0;
}

int mad_writer_libs_local(const char *mountinfo, size_t len, char *why, size_t wsize)
{
	struct libs l = { 0, NULL, NULL, 0 };
	char path[4096];

	dl_iterate_phdr(libs_of, &l);
	if (!l.interp)
		return 1; /* no loader: a static program */
	if (!l.libc) {
		if (why)
			mad_error(why, wsize, "the C library is not among this process's objects");
		return 0;
	}
	/* each by the path the exec looks up (through any link on it) and by
	 * the file it reaches, the kernel's path of its mapping */
	if (!on_local_fs(mountinfo, len, l.interp, why, wsize) ||
	    !on_local_fs(mountinfo, len, l.libc, why, wsize))
		return 0;
	for (int i = 0; i < 2; i++) {
		if (mapped_path(i ? l.libc_at : (uintptr_t)getauxval(AT_BASE), path, sizeof(path))) {
			if (why)
				mad_error(why, wsize, "%s's file is not found in /proc/self/maps",
					  i ? "the C library" : "the dynamic loader");
			return 0;
		}
		if (!on_local_fs(mountinfo, len, path, why, wsize))
			return 0;
	}
	return 1;
}

/* PATH and each folder above it: root's, not a link, writable by no one
 * else (a folder with the sticky bit aside), PATH an executable file. */
static int root_owned(const char *path, char *why, size_t wsize)
{
	char prefix[MAD_JOBDIR_PATH];
	size_t n = strlen(path), i;
	struct stat st;

	if (path[0] != '/' || n >= sizeof(prefix)) {
		if (why)
			mad_error(why, wsize, "'%s' is not an absolute path", path);
		return 0;
	}
	for (i = 1; i <= n; i++) {
		if (i < n && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (lstat(prefix, &st)) {
			if (why)
				mad_error(why, wsize, "'%s': %s", prefix, strerror(errno));
			return 0;
		}
		if (S_ISLNK(st.st_mode) || st.st_uid != 0 ||
		    ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		     !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))) ||
		    (i == n && (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)))) {
			if (why)
				mad_error(why, wsize,
					  "'%s' is not root's own %s (uid %u, mode %04o%s): whoever could replace it would run as root",
					  prefix, i == n ? "executable file" : "folder",
					  (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
					  S_ISLNK(st.st_mode) ? ", a symbolic link" : "");
			return 0;
		}
	}
	return 1;
}

int mad_writer_spawnable(const char *path, char *why, size_t wsize)
{
	size_t len = 0;
	char *mountinfo = read_mountinfo(&len);
	int ok;

	if (!mountinfo) {
		if (why)
			mad_error(why, wsize, "/proc/self/mountinfo cannot be read");
		return 0;
	}
	ok = on_local_fs(mountinfo, len, path, why, wsize);
#ifndef MAD_WRITER_STATIC
	ok = ok && mad_writer_libs_local(mountinfo, len, why, wsize);
#endif
	free(mountinfo);
	/* looked up only once it is known to be on a local disk */
	return ok && root_owned(path, why, wsize);
}
