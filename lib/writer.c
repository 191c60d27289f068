/* SPDX-License-Identifier: GPL-2.0-or-later */
/* writer.c: see writer.h. */
#include "config.h"

#include "writer.h"
#include "error.h"
#include "marker.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
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
	if (memcmp(h->version, build_version, sizeof(h->version)) != 0 || h->layout != LAYOUT)
		return bad(why, wsize, "a request of another build of mad-spank");
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

int mad_writer_run(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n)
{
	char dir[MAD_JOBDIR_PATH];
	int fd, i, code = MAD_WRITER_OK;

	if ((j->ngids ? setgroups((size_t)j->ngids, j->gids) : setgroups(1, &j->gid)) ||
	    setresgid(j->gid, j->gid, j->gid) || setresuid(j->uid, j->uid, j->uid) ||
	    getuid() != j->uid || geteuid() != j->uid || getegid() != j->gid)
		return MAD_WRITER_NO_DROP;
	/* opened as the user; the markers are read and written in it alone */
	if (mad_jobdir_open(&j->dir, MAD_JOBDIR_JOIN, dir, sizeof(dir), &fd, NULL, 0, NULL, 0))
		return MAD_WRITER_NO_DIR;
	for (i = 0; i < n; i++) {
		/* task_init recorded why the task could not start: that stays */
		if (j->job_id >= 0 && mad_marker_failure_recorded(fd, m[i].name, j->job_id, j->stepd))
			continue;
		if (mad_write_file_at(fd, dir, m[i].name, m[i].content, m[i].len, j->flags, NULL, 0))
			code = MAD_WRITER_NO_WRITE; /* the others still go */
	}
	close(fd);
	return code;
}

/* statfs(2)'s f_type of the file systems whose server can hang an exec. */
static const struct {
	long magic;
	const char *name;
} network_fs[] = {
	{ 0x6969, "NFS" },
	{ 0x517b, "SMB" },
	{ (long)0xff534d42, "CIFS" },
	{ (long)0xfe534d42, "SMB2" },
	{ 0x65735546, "FUSE" },
	{ 0x0bd00bd0, "Lustre" },
	{ 0x47504653, "GPFS" },
	{ 0x00c36400, "Ceph" },
	{ 0x5346414f, "AFS" },
	{ 0x6b414653, "AFS" },
	{ 0x19830326, "BeeGFS" },
};

int mad_writer_spawnable(const char *path, char *why, size_t wsize)
{
	struct statfs fs;
	size_t i;

	if (access(path, X_OK) || statfs(path, &fs)) {
		if (why)
			mad_error(why, wsize, "%s", strerror(errno));
		return 0;
	}
	for (i = 0; i < sizeof(network_fs) / sizeof(network_fs[0]); i++)
		/* f_type is signed on some ABIs: compare its low 32 bits */
		if ((long)(unsigned int)fs.f_type == network_fs[i].magic) {
			if (why)
				mad_error(why, wsize, "on a network file system (%s)",
					  network_fs[i].name);
			return 0;
		}
	return 1;
}
