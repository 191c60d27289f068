/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wait.h: what mad-wait knows about one job, the rules that turn it into
 * a verdict (doc/design.md §10), and when to look again.  Markers decide;
 * the scheduler only says whether the job can still write them.
 *
 * lib/wait/ (wait, scan, queue, follow, ready) is the tools' library for
 * waiting on jobs (what each folder holds: doc/design.md §2).  Its rules:
 * - Who links it: the tools only (mad-wait, mad-mark for readiness, and
 *   the fuzz target of its parsers), through libmad.la; never mad.so, which
 *   runs inside SLURM's and spur's root daemons (libmad-plugin.la leaves
 *   this folder out).  It uses the core and lib/site/ (squeue is run
 *   through site/slurm.h); neither uses it.
 * - Pure decisions: wait.c holds the functions that decide
 *   (mad_wait_decide, mad_wait_observe, mad_wait_next and the rest of the
 *   timing policy below); they take the time (CLOCK_MONOTONIC seconds) and
 *   the scheduler's answers as arguments and read no clock, file or
 *   process, so test-wait.c checks every rule without sleeping.  I/O lives
 *   in files of its own: scan.c reads a job folder (mad_wait_scan),
 *   queue.c runs squeue (mad_queue_ask), follow.c reads output files.
 * - Errors as in lib/error.h: -1 with (err, size), user bytes through
 *   mad_printable().  Never prints, exits or aborts: what a tool shows
 *   (followed output, warnings, reasons) is handed back as data. */
#ifndef MAD_WAIT_H
#define MAD_WAIT_H

#include "error.h"
#include "queue.h"
#include "ready.h"

#include <stddef.h>
#include <sys/types.h>

enum mad_rank_state {
	MAD_RANK_MISSING, /* no marker yet */
	MAD_RANK_EMPTY,   /* an empty marker: a writer that is not atomic, mid-write */
	MAD_RANK_DONE,    /* exit status 0 */
	MAD_RANK_FAILED,  /* a non-zero exit status */
	MAD_RANK_INVALID, /* a marker that is not one (garbage, or empty too long) */
};

struct mad_rank {
	enum mad_rank_state state;
	long status;
	long time; /* time= of the marker, or -1 */
	char host[64];
	char note[256]; /* error= of the marker, or what is wrong with it */
	double empty_since;
	int ran; /* its script_rank<N>: the job script ran on its node */
};

/* One task of an srun step in nodes fan-out: its marker step<S>_rank<R>.
 * It never changes the verdict (the batch script's marker decides); it
 * names the node, task and step that failed. */
struct mad_step_task {
	long step, task;
	enum mad_rank_state state;
	long status;
	long time;
	char host[64];
	double empty_since;
};

/* One attempt of a job: SLURM re-runs a requeued job (preemption,
 * scontrol requeue, a node failure with --requeue) in a new job folder,
 * <id>.<restart>.  The job's current attempt lives in mad_wait_job; the
 * ones before it are kept as these, for --json. */
struct mad_wait_attempt {
	long restart; /* 0 for the first attempt */
	const char *dir;
	long expected;
	int held; /* its missing ranks without script_rank<N> held (spur): none is owed */
	const struct mad_rank *rank;
	long nrank;
	const struct mad_step_task *task;
	long ntask;
};

/* What the scheduler said of a failed marker: is the job being re-run? */
enum mad_rerun {
	MAD_RERUN_NONE,   /* no failed marker in this attempt */
	MAD_RERUN_ASK,    /* a failed marker; squeue not asked since */
	MAD_RERUN_UNSURE, /* completing: SLURM shows a requeued job so too, for a while */
	MAD_RERUN_YES,    /* squeue shows the job requeued: a new attempt comes */
	MAD_RERUN_NO,     /* not re-run: the failure is the verdict */
};

/* The exit codes of design.md §10. */
enum {
	MAD_WAIT_OK = 0,
	MAD_WAIT_FAILED = 1,
	MAD_WAIT_GONE = 2,
	MAD_WAIT_UNKNOWN = 3,
	MAD_WAIT_USAGE = 64,
	MAD_WAIT_TIMEOUT = 124,
	MAD_WAIT_INTERRUPTED = 130,
	MAD_WAIT_PENDING = -1,
};

struct mad_wait_cfg {
	double interval;       /* squeue at most once per this (--interval) */
	double unknown_budget; /* squeue failing this long ends the wait */
	double timeout;        /* give up after this; -1: from the time limits */
	double scan_period;    /* read the job folders at least this often */
	double grace;          /* after the job left the queue, for its markers */
	double overtime;       /* a job listed running this long past its time limit
				  is lost (--overtime; SLURM's OverTimeLimit and
				  KillWait, spur's 30 s grace) */
	double startup_grace;  /* a job never listed yet is pending this long */
	double empty_grace;    /* an empty marker may still be being written */
	int gone_polls;        /* squeue answers saying "gone" before we believe it */
	long nnodes;           /* --nnodes, or -1 */
	int no_requeue;        /* --no-requeue: the first failed marker decides */
	int ready;             /* --ready: rank 0's ready marker ends the wait (with 0);
				  any end of the job before it is a failure */
};

struct mad_wait_job {
	long id;
	/* Whose files count (jobdir.h, design.md §15): the job's user, and
	 * files no older than the earliest submit time squeue showed (a requeue
	 * moves it later).  Until squeue lists the job: the caller's uid, and
	 * files no older than the wait's start (a job submitted before is
	 * decided once squeue says when; one it never lists, once confirmed
	 * gone, by the caller's files, unchecked, and the reason says so),
	 * except what a run writes as it starts ('expected', the rendezvous
	 * record, script_rank<N>), bounded by the submit time only (scan.c
	 * stale(); the first submit time shown reads the folder again). */
	uid_t uid;
	long submitted; /* -1 unknown */
	/* The current run's start: files before it are an earlier attempt's.
	 * spur re-runs a requeued job under the same id, with the same submit
	 * time and no restart count, in the same folder (spur #629): the latest
	 * start squeue showed (%S) for a run with the submit time first shown
	 * (SLURM moves it on a requeue, and its next attempt has a folder of
	 * its own).  -1: none (N/A, Unknown, pending). */
	long attempt_from;
	int last_read;   /* the last read of a past attempt's folder: attempt_from does not apply */
	long wait_start; /* the wall clock when the wait began */
	int witnessed;   /* squeue listed the job at least once */
	int unbounded;   /* never listed, confirmed gone: no time bound */
	char ignored[1024]; /* what was passed over, for the reason and --json */
	char run_dir[4096];
	int run_fd;       /* run_dir, its whole path checked for run_fd_uid; -1 */
	uid_t run_fd_uid; /* (jobdir.h): opened once per job's user */
	char dir[4200];   /* run_dir/<id>[.<restart>] */
	long restart;
	long expected; /* markers to expect, -1 until known */
	const char *expected_from;
	int expected_own; /* the count is the job folder's 'expected' file's */
	int held;         /* decided by rank 0: its missing nodes held (spur) */
	struct mad_rank *rank;
	long nrank;          /* entries in RANK */
	long ndone, nfailed; /* ranks DONE; ranks FAILED or INVALID */
	int dir_seen;
	ino_t dir_ino; /* the folder read last: another under the same name is read afresh */
	dev_t dir_dev;
	struct mad_step_task *task; /* step tasks, sorted by step and task */
	long ntask, ntask_failed;
	enum mad_rerun rerun;
	int held_success; /* every marker a success, held: squeue last showed it waiting to run */
	int held_asked;   /* ... and squeue was asked since (at once, then as confirming) */
	/* 1: the first read of the folder after squeue last showed the job
	 * waiting to run found no marker, so every marker counted since was
	 * written after that answer, by the run it was waiting for, and none
	 * is held; 0: no such read (a marker was there, or squeue never showed
	 * it waiting); -1: the next read says */
	int empty_after_wait;
	/* the attempts before this one, oldest first */
	struct mad_wait_attempt *past;
	long npast;
	/* the scheduler's view */
	enum mad_listing listing;
	int array; /* listed as array tasks */
	char state[32];
	long time_limit;
	double clock_from; /* last seen pending: its time limit counts from here */
	double running_at; /* the last answer that listed it running (RUNNING,
			      COMPLETING), or 0 */
	double run_from;   /* the first answer that listed this run running
			      (after a pending, suspended or configuring one, a
			      new start or attempt): its limit counts from
			      here; -1 none */
	long run_restart;  /* the attempt run_from is of */
	double gone_since;
	int gone_polls;
	/* readiness (cfg->ready): rank 0's ready_rank0 */
	int ready; /* 1 read, -1 not a ready marker (READY_NOTE) */
	char endpoint[MAD_ENDPOINT_MAX];
	char ready_host[64];
	long ready_time;
	char ready_note[256];
	/* the outcome */
	int verdict; /* MAD_WAIT_PENDING until decided */
	char reason[MAD_ERR_MAX];
};

int mad_wait_job_init(struct mad_wait_job *j, long id, const char *run_dir);
void mad_wait_job_free(struct mad_wait_job *j);

/* Reads the job folder once (one directory read for the rank markers and
 * the step tasks' markers alike; a marker is opened only the first time it
 * is seen, or again while it is empty or ignored).  The folder is the
 * attempt's by jobdir.h's rules (any cluster), and a file counts only if it
 * is a regular file of the job's user written no earlier than the job's
 * submit time (less MAD_WAIT_CLOCK_SLACK); what is passed over is named in
 * j->ignored.  A newer attempt's folder
 * (<id>.<restart+1>) becomes the current one, the older is read a last
 * time and kept.  Returns how many ranks changed, or -1 when the folder
 * cannot be read (ERR). */
int mad_wait_scan(struct mad_wait_job *j, const struct mad_wait_cfg *cfg, double now, char *err,
		  size_t size);

/* Forgets what was read of the current attempt (ranks, step tasks,
 * readiness): the next mad_wait_scan reads its folder afresh.  Frees
 * memory, reads nothing. */
void mad_wait_forget(struct mad_wait_job *j);

/* Seconds a file's time may precede the job's submit time: node clocks and
 * the controller's differ a little, and an earlier job's files are older
 * than a controller restart. */
#define MAD_WAIT_CLOCK_SLACK 2

/* Takes one squeue answer for the job: its user, earliest submit time and
 * the start of the run shown (which make the folders be read again under
 * them: then 1, else 0; START is when the wait began), and then: after a
 * failed marker, the answer says whether the job is re-run:
 * PENDING or REQUEUED* (and RUNNING once it was seen requeued, or seen
 * COMPLETING: a quick requeue's PENDING can fall between two answers) hold
 * the failure until the next attempt's folder appears; COMPLETING, which a
 * requeued job shows too before PENDING, is asked again; any other answer,
 * an array job, or a job no longer listed make it the verdict. */
int mad_wait_observe(struct mad_wait_job *j, const struct mad_queue_entry *e,
		     const struct mad_wait_cfg *cfg, double start, double now);

/* Applies the rules; returns (and stores) the verdict, MAD_WAIT_PENDING while
 * there is none.  With cfg->ready: rank 0's ready marker is MAD_WAIT_OK; a
 * failed marker (unless the job is re-run), any completion marker, or the
 * job confirmed gone before it is MAD_WAIT_FAILED, at once (no grace).
 * A job without its markers that an answer still lists running (RUNNING,
 * COMPLETING) cfg->overtime past its time limit, counted from the first
 * answer that listed this run running, is lost: the scheduler no longer
 * follows it (spur #803: a restarted spurd neither re-adopts nor reaps
 * its jobs), MAD_WAIT_GONE (MAD_WAIT_FAILED with cfg->ready); never an
 * array (its rows mix tasks).  On spur in nodes fan-out, a job gone with
 * rank 0's marker 0 whose other missing nodes never ran the job script
 * (no script_rank<N>, marker.h) is MAD_WAIT_OK: spur runs a script that
 * launches steps on its first node only. */
int mad_wait_decide(struct mad_wait_job *j, const struct mad_wait_cfg *cfg, double now);

/* The ranks without a complete marker, folded ("1,3-5"), into BUF. */
void mad_wait_missing(const struct mad_wait_job *j, char *buf, size_t size);

/* Attempt K of the job, 0 <= K <= j->npast (the last is the current one),
 * into A; its pointers stay valid until the next scan. */
void mad_wait_attempt_view(const struct mad_wait_job *j, long k, struct mad_wait_attempt *a);

/* ------------------------------------------------- the timing policy
 * When to read the folders, when to ask squeue, and when to stop: the
 * tool's loop asks mad_wait_next() what to do, does it (the I/O) and
 * reports back with mad_wait_scanned(), mad_wait_answered() or
 * mad_wait_unanswered().  The rules:
 * - markers are read every cfg->scan_period, at once after a change in a
 *   watched folder (mad_wait_woken), and at once after an answer that may
 *   end a job, before it is decided (a requeued attempt can run and end
 *   between two answers: its folder decides, not the first attempt's);
 * - the first squeue comes at once, before the first read: it says
 *   whose markers count and since when;
 * - after an answer the guard slows down, x1.5 per answer up to 4
 *   intervals, jittered +-10% (RANDOM) so many waiters do not align;
 * - a job that vanished is re-asked after min(interval, 5 s) until
 *   cfg->gone_polls answers confirm it;
 * - a failing squeue is retried after 2 s, 4 s, 8 s ... (at most an
 *   interval, never past the budget); failing for cfg->unknown_budget
 *   ends the wait with MAD_WAIT_UNKNOWN; an answer resets both;
 * - the deadline is cfg->timeout, else a day from the start, which the
 *   jobs' time limits may only shorten, to the latest end plus
 *   cfg->overtime plus the grace (at least 60 s from the start; squeue is
 *   asked once more at that deadline, so a job still listed running there
 *   is found lost, not timed out; a job's clock starts at the first
 *   answer that listed it running (again after a pending, suspended or
 *   configuring one), so a requeued attempt gets its
 *   limit again, but never past the day; an unlimited job keeps the day);
 * - every undecided job goes into one squeue call per interval;
 * - a failed marker is asked about at once (is the job requeued?), unless
 *   --no-requeue, and again after min(interval, 5 s) while the job is
 *   completing; when squeue cannot answer, the marker decides;
 * - a failed job ends the wait at once; otherwise it ends when every job
 *   is decided, with the worst exit code (the lowest non-zero). */
enum mad_wait_action {
	MAD_WAIT_SCAN,  /* read every undecided job's folder now */
	MAD_WAIT_ASK,   /* ask squeue for the jobs mad_wait_queue_ids() names */
	MAD_WAIT_SLEEP, /* until AT, or a change in a watched folder */
	MAD_WAIT_END,   /* done: exit with CODE */
};

struct mad_wait_step {
	enum mad_wait_action action;
	double at; /* MAD_WAIT_SLEEP: when to look again */
	int code;  /* MAD_WAIT_END: the exit code */
};

struct mad_wait_timing {
	double start, deadline;
	int deadline_from_limits; /* no --timeout: the time limits set it */
	double next_scan, next_queue;
	double guard_interval; /* the next pause between two answers */
	double backoff;        /* the next pause after a failed squeue */
	double unknown_since;  /* the first of FAILURES in a row */
	int failures;
	long squeue_calls;
	int answered;          /* squeue has answered at least once */
	double asked_deadline; /* the deadline from the limits asked at, or 0 */
	int code;              /* MAD_WAIT_PENDING until the wait ends */
	char why[MAD_ERR_MAX]; /* the end, for jobs without a verdict */
};

void mad_wait_timing_init(struct mad_wait_timing *t, const struct mad_wait_cfg *cfg, double start);
/* What to do at NOW.  Decides each job (mad_wait_decide) on the way; on a
 * timeout, the undecided jobs get MAD_WAIT_TIMEOUT and a reason. */
struct mad_wait_step mad_wait_next(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
				   const struct mad_wait_cfg *cfg, double now);
/* The folders were read at NOW. */
void mad_wait_scanned(struct mad_wait_timing *t, const struct mad_wait_cfg *cfg, double now);
/* A watched folder changed: read the folders at once. */
void mad_wait_woken(struct mad_wait_timing *t);
/* The ids of the undecided jobs into E (one squeue call for all); their
 * count. */
size_t mad_wait_queue_ids(const struct mad_wait_job *jobs, int n, struct mad_queue_entry *e);
/* squeue answered E (as filled by mad_wait_queue_ids) at NOW; RANDOM in
 * [0, 1] jitters the next call. */
void mad_wait_answered(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
		       const struct mad_queue_entry *e, const struct mad_wait_cfg *cfg, double now,
		       double random);
/* squeue failed at NOW with ERR; 1 when that ends the wait (the budget is
 * spent: MAD_WAIT_UNKNOWN), 0 when it is retried. */
int mad_wait_unanswered(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
			const struct mad_wait_cfg *cfg, double now, const char *err);
/* Ends the wait with CODE (an interruption, a usage error): WHY becomes
 * the reason of every undecided job. */
void mad_wait_end(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n, int code,
		  const char *why);

#endif
