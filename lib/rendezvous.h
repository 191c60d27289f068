/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rendezvous.h: rank 0 publishes its address in the job folder; peers wait
 * for it (design.md §8), in the attempt's job folder (jobdir.h).  Files are
 * written whole (temporary name, fsync, rename), so a reader sees no record
 * or a complete one.  Each function works relative to DIRFD, the job folder
 * as it was opened and checked, never by its path again; JOB_DIR, its path,
 * only names it in messages. */
#ifndef MAD_RENDEZVOUS_H
#define MAD_RENDEZVOUS_H

#include <stddef.h>
#include <sys/types.h>

struct mad_run;

/* The batch script's record (and spur's, which has no steps); an srun
 * step S writes "rendezvous.S", since each step has its own port and
 * task count. */
#define MAD_RDZV_RECORD "rendezvous"

struct mad_rdzv {
	char addr[64]; /* IPv4 or IPv6, as text */
	long port;
	char host[256];
	long job_id;
	long nnodes;
	long tasks_per_node; /* rank 0's; -1 in a record without it */
	long time;           /* when it was written; -1 in a record without it */
};

/* Writes R as RECORD in DIRFD, replacing what is there.  0, or -1 with ERR. */
int mad_rdzv_publish(int dirfd, const char *job_dir, const char *record, const struct mad_rdzv *r,
		     char *err, size_t size);
/* 1 and *R when RECORD is in DIRFD, 0 when not yet, -1 (ERR) when it is
 * unreadable, malformed, or not a regular file of UID (the job's user). */
int mad_rdzv_read(int dirfd, const char *job_dir, const char *record, uid_t uid, struct mad_rdzv *r,
		  char *err, size_t size);
/* Waits up to TIMEOUT seconds, of which ALREADY are spent (waiting for
 * the job folder), for a record of JOB_ID that RUN (NULL: any) counts as
 * this run's (run.h: rank 0 writes it again in each run), opening DIRFD
 * anew (mad_dir_reopen) and re-reading it with backoff (so NFS caches
 * refresh).  0, or -1 with ERR naming the rank, the folder, the time
 * waited and what was found. */
int mad_rdzv_wait(int dirfd, const char *job_dir, const char *record, long job_id, uid_t uid,
		  long rank, long timeout, double already, const struct mad_run *run,
		  struct mad_rdzv *r, char *err, size_t size);

#endif
