/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rendezvous.h: rank 0 publishes its address in the job folder; peers wait
 * for it (design.md §8).  Files are written whole (temporary name, fsync,
 * rename), so a reader sees no record or a complete one. */
#ifndef MAD_RENDEZVOUS_H
#define MAD_RENDEZVOUS_H

#include <stddef.h>

/* The batch script's record (and spur's, which has no steps); an srun
 * step S writes "rendezvous.S", since each step has its own port and
 * task count. */
#define MAD_RDZV_RECORD "rendezvous"

struct mad_rdzv {
	char addr[64];              /* IPv4 or IPv6, as text */
	long port;
	char host[256];
	long job_id;
	long nnodes;
	long tasks_per_node;        /* rank 0's; -1 in a record without it */
};

/* Creates JOB_DIR (one level below an existing RUN_DIR) if needed. */
int mad_job_dir_make(const char *run_dir, const char *job_dir, char *err,
		     size_t size);
int mad_rdzv_publish(const char *job_dir, const char *record,
		     const struct mad_rdzv *r, char *err, size_t size);
/* 1 and *R when a record is there, 0 when not yet, -1 (ERR) when it is
 * unreadable or malformed. */
int mad_rdzv_read(const char *job_dir, const char *record, struct mad_rdzv *r,
		  char *err, size_t size);
/* Waits up to TIMEOUT seconds for a record of JOB_ID, re-reading the
 * folder with backoff (so NFS caches refresh).  0, or -1 with ERR naming
 * the rank, the folder and the time waited. */
int mad_rdzv_wait(const char *job_dir, const char *record, long job_id, long rank,
		  long timeout, struct mad_rdzv *r, char *err, size_t size);

/* FLAGS of mad_write_file(). */
enum {
	MAD_WRITE_REPLACE = 1, /* rename() over an existing NAME, instead of keeping it */
	MAD_WRITE_NOSYNC = 2,  /* no fsync: a file whose loss in a crash costs nothing */
};

/* Writes NAME in DIR with CONTENT atomically: a temporary file opened with
 * O_EXCL|O_NOFOLLOW, fsync (unless MAD_WRITE_NOSYNC), then rename()
 * (MAD_WRITE_REPLACE) or link(), which keeps an existing NAME (written
 * once, never replaced).  Returns 0 (also when NAME was kept), or -1 with
 * ERR.  With ERR NULL it makes system calls only (no message is
 * formatted): safe in a forked child. */
int mad_write_file(const char *dir, const char *name, const char *content, size_t len, int flags,
		   char *err, size_t size);

#endif
