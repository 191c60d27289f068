/* SPDX-License-Identifier: GPL-2.0-or-later */
/* run.h: this run of a job script, where the scheduler runs a job again in
 * the folder of its earlier run (design.md §15).  spur's requeue (#629)
 * keeps the job's id and submit time and exports no restart count, so both
 * runs have one attempt identity and one job folder, and rank 0's
 * rendezvous record and the ranks' started_rank<R> files of the earlier run
 * are there when the next run starts.  Those files count for this run only
 * if this run wrote them.
 *
 * Each node's job script leaves script_rank<N> as it starts (marker.h):
 * host, the script's start, and the run's key: the job script's process
 * and its start (mad_run_script), which no other run has.  The first mad-env of a run
 * finds the earlier run's record there (another key), keeps its time as
 * previous= and writes this run's; a later mad-env of the same run (the
 * same key) finds its own.
 *
 * The bound: this node's start less half the time since the earlier run's
 * start, and less at most MAD_RUN_SPREAD.  The nodes of one run start
 * together (spur dispatches them at once), and the earlier run started
 * before it ended, which was before this run began.  A rank whose script
 * record is older than the bound has not started in this run yet; a file of
 * rank R (rank 0's rendezvous record, started_rank<R>) counts only once
 * rank R's script record is this run's and the file is no older than it
 * (both written on rank R's node, by one clock).  A first run (no record
 * of an earlier one) has no bound, and every file counts as before. */
#ifndef MAD_RUN_H
#define MAD_RUN_H

#include <stddef.h>
#include <sys/types.h>

/* Seconds between the starts of one run's nodes, at most, on top of the
 * clocks' difference. */
#define MAD_RUN_SPREAD 30

struct mad_run {
	long start;      /* this node's script start (its clock) */
	long previous;   /* the earlier run's start on this rank; -1: none */
	long not_before; /* the bound; -1: no rule (a first run) */
};

/* No rule: a first run, or a job that is never run again in its folder. */
void mad_run_none(struct mad_run *run);

/* The bound from an earlier start PREVIOUS (-1: none) and this one, START.
 * Pure. */
long mad_run_bound(long previous, long start);

/* The job script's process on this node: the oldest ancestor of this
 * process that is the same user's (spurd, as root, started it), whatever
 * process groups and sessions its children made (timeout, setsid, a
 * subprocess's new session).  Its key, "<pid>.<start in clock ticks since
 * boot>", into KEY, which no other run has, and its start (this node's
 * clock) into *START; where /proc does not say, the process group and
 * now.  0, or -1 when KEY is too small. */
int mad_run_script(char *key, size_t size, long *start);

/* Reads script_rank<RANK> in the job folder DIRFD (JOB_DIR names it in
 * messages), a regular file of UID: the same HOST and KEY, this run's (*RUN
 * from it); else writes this run's, started at START, the earlier one's
 * start as previous=.  0, or -1 with ERR. */
int mad_run_begin(int dirfd, const char *job_dir, long rank, uid_t uid, const char *host,
		  const char *key, long start, struct mad_run *run, char *err, size_t size);

/* The time= of NAME in the folder DIRFD, a small regular file of UID: 1
 * and *TIME; 0 when it is absent or has none; -1 (errno) when it cannot be
 * read. */
int mad_run_file_time(int dirfd, const char *name, uid_t uid, long *time);

/* Whether rank RANK's file written at FILE_TIME (its time=, -1: none) is
 * this run's: 1; 0, WHY saying whose it is; -1 (errno) when rank RANK's
 * script record cannot be read.  Without a rule (RUN NULL, or a first
 * run), 1. */
int mad_run_counts(const struct mad_run *run, int dirfd, uid_t uid, long rank, long file_time,
		   char *why, size_t wsize);

#endif
