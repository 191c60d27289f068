/* SPDX-License-Identifier: GPL-2.0-or-later */
/* barrier.h: the start barrier of mad-env --barrier (design.md §8), in lib/job/
 * (its rules open job.h).  Each rank records in the job folder that it
 * started (a file written whole, as the user, by mad_write_file), then
 * waits until all N ranks have, up to the timeout; on timeout the error
 * names the ranks that never started.  For
 * launchers whose workers must not race their head (Ray), and for anything
 * that must not start before the whole array does.
 *
 * Files: "started_rank<R>" for the batch script (array fan-out, spur's
 * per-node script); "started.<S>_rank<R>" in srun step S, so each step
 * has its own barrier.  A rank's file is written once and stays: a second
 * barrier call in the same step passes at once.  Where a job runs again in
 * the folder of its earlier run (spur #629), a rank's file counts only if
 * this run wrote it (run.h): each file says when it was written (time=). */
#ifndef MAD_BARRIER_H
#define MAD_BARRIER_H

#include <stddef.h>
#include <sys/types.h>

struct mad_run;

/* The ranks of a barrier are counted in one allocation; a larger job is
 * an error, not a huge allocation. */
#define MAD_BARRIER_RANKS_MAX 1000000L

/* The file name of RANK's record for STEP (MAD_NONE, -1: the batch script)
 * into OUT; 0, or -1 when OUT is too small. */
int mad_barrier_name(char *out, size_t size, long step, long rank);

/* The rank a directory entry NAME records for STEP, or -1 when NAME is not
 * such a record (another step's, a marker, a temporary file, a rank with
 * leading zeros or past NRANKS - 1).  Pure. */
long mad_barrier_rank_of(const char *name, long step, long nranks);

/* Marks PRESENT[r] = 1 for every record among the N names (a directory
 * listing) and returns how many of the NRANKS ranks have none.  Pure. */
long mad_barrier_missing(const char *const *names, size_t n, long step, long nranks,
			 unsigned char *present);

/* "rank 3" or "ranks 3, 5, 9" for the ranks with PRESENT[r] == 0, at most
 * 20 of them, then ", ... (N in all)".  Pure. */
void mad_barrier_describe(const unsigned char *present, long nranks, char *out, size_t size);

/* Records RANK (of NRANKS, on HOST) as started in the job folder DIRFD
 * (JOB_DIR, its path, names it in messages), then waits up to TIMEOUT
 * seconds, listing that folder anew with backoff (mad_dir_reopen: NFS
 * caches refresh on an open and a directory read), until every rank has,
 * in files of UID that RUN (NULL: any) counts as this run's: the record is
 * written and the ranks counted in the folder that was opened, never in
 * what its path names later.  0, or -1 with ERR: "barrier: ranks 3, 5 did
 * not start within 30 s ...", or why the record could not be written. */
int mad_barrier_wait(int dirfd, const char *job_dir, long step, long rank, long nranks,
		     const char *host, uid_t uid, const struct mad_run *run, long timeout,
		     char *err, size_t size);

#endif
