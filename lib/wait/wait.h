/* wait.h: what mad-wait knows about one job, the rules that turn it into
 * a verdict (doc/design.md §10), and when to look again.  Markers decide;
 * the scheduler only says whether the job can still write them.
 *
 * lib/wait/ (wait, queue, follow, plugstack) is the tools' library for
 * waiting on jobs and reading the site's plugstack line.  Its rules:
 * - Who links it: the tools only (mad-wait, mad-env, mad-mark, and the
 *   fuzz target of its parsers), through libmad.la; never mad.so, which
 *   runs inside SLURM's and spur's root daemons (libmad-plugin.la leaves
 *   this folder out).  It uses the core; the core never uses it.
 * - Pure decisions: the functions that decide (mad_wait_decide,
 *   mad_wait_next and the rest of the timing policy below) take the time
 *   (CLOCK_MONOTONIC seconds) and the scheduler's answers as arguments and
 *   read no clock, file or process, so test-wait.c checks every rule
 *   without sleeping.  I/O lives in separate calls (mad_wait_scan reads a
 *   job folder, mad_queue_ask runs squeue).
 * - Errors as in lib/error.h: -1 with (err, size), user bytes through
 *   mad_printable().  Never prints, exits or aborts: what a tool shows
 *   (followed output, warnings, reasons) is handed back as data. */
#ifndef MAD_WAIT_H
#define MAD_WAIT_H

#include "queue.h"

#include <stddef.h>

enum mad_rank_state {
	RANK_MISSING,   /* no marker yet */
	RANK_EMPTY,     /* an empty marker: a writer that is not atomic, mid-write */
	RANK_DONE,      /* exit status 0 */
	RANK_FAILED,    /* a non-zero exit status */
	RANK_INVALID,   /* a marker that is not one (garbage, or empty too long) */
};

struct mad_rank {
	enum mad_rank_state state;
	long status;
	long time;          /* time= of the marker, or -1 */
	char host[64];
	char note[256];     /* error= of the marker, or what is wrong with it */
	double empty_since;
};

/* The exit codes of SPEC §8. */
enum {
	WAIT_OK = 0, WAIT_FAILED = 1, WAIT_GONE = 2, WAIT_UNKNOWN = 3,
	WAIT_USAGE = 64, WAIT_TIMEOUT = 124, WAIT_INTERRUPTED = 130,
	WAIT_PENDING = -1,
};

struct mad_wait_cfg {
	double interval;       /* squeue at most once per this (--interval) */
	double unknown_budget; /* squeue failing this long ends the wait */
	double timeout;        /* give up after this; -1: from the time limits */
	double scan_period;    /* read the job folders at least this often */
	double grace;          /* after the job left the queue, for its markers */
	double startup_grace;  /* a job never listed yet is pending this long */
	double empty_grace;    /* an empty marker may still be being written */
	int gone_polls;        /* squeue answers saying "gone" before we believe it */
	long nnodes;           /* --nnodes, or -1 */
};

struct mad_wait_job {
	long id;
	char run_dir[4096];
	char dir[4200];             /* run_dir/<id>[.<restart>] */
	long restart;
	long expected;              /* markers to expect, -1 until known */
	const char *expected_from;
	struct mad_rank *rank;
	long nrank;                 /* entries in RANK */
	long ndone, nfailed;        /* ranks DONE; ranks FAILED or INVALID */
	int dir_seen;
	/* the scheduler's view */
	int seen;                   /* listed active at least once */
	enum mad_listing listing;
	int array;                  /* listed as array tasks */
	char state[32];
	long time_limit;
	double gone_since;
	int gone_polls;
	/* the outcome */
	int verdict;                /* WAIT_PENDING until decided */
	char reason[1024];
};

int mad_wait_job_init(struct mad_wait_job *j, long id, const char *run_dir);
void mad_wait_job_free(struct mad_wait_job *j);

/* Reads the job folder once (one directory read; a marker is opened only
 * the first time it is seen, or again while it is empty).  Returns how
 * many ranks changed, or -1 when the folder cannot be read (ERR). */
int mad_wait_scan(struct mad_wait_job *j, const struct mad_wait_cfg *cfg,
		  double now, char *err, size_t size);

/* Takes one squeue answer for the job.  START is when the wait began. */
void mad_wait_observe(struct mad_wait_job *j, const struct mad_queue_entry *e,
		      const struct mad_wait_cfg *cfg, double start, double now);

/* Applies the rules; returns (and stores) the verdict, WAIT_PENDING while
 * there is none. */
int mad_wait_decide(struct mad_wait_job *j, const struct mad_wait_cfg *cfg,
		    double now);

/* The ranks without a complete marker, folded ("1,3-5"), into BUF. */
void mad_wait_missing(const struct mad_wait_job *j, char *buf, size_t size);

/* ------------------------------------------------- the timing policy
 * When to read the folders, when to ask squeue, and when to stop: the
 * tool's loop asks mad_wait_next() what to do, does it (the I/O) and
 * reports back with mad_wait_scanned(), mad_wait_answered() or
 * mad_wait_unanswered().  The rules:
 * - markers are read every cfg->scan_period, and at once after a change
 *   in a watched folder (mad_wait_woken);
 * - the first squeue comes min(interval, 10 s) after the start: markers
 *   often answer first;
 * - after an answer the guard slows down, x1.5 per answer up to 4
 *   intervals, jittered +-10% (RANDOM) so many waiters do not align;
 * - a job that vanished is re-asked after min(interval, 5 s) until
 *   cfg->gone_polls answers confirm it;
 * - a failing squeue is retried after 2 s, 4 s, 8 s ... (at most an
 *   interval, never past the budget); failing for cfg->unknown_budget
 *   ends the wait with WAIT_UNKNOWN; an answer resets both;
 * - the deadline is cfg->timeout, else a day, which the jobs' time limits
 *   shorten to the latest end plus 600 s plus the grace (a pending job's
 *   clock starts when it is seen pending; an unlimited job keeps the day);
 * - every undecided job goes into one squeue call per interval;
 * - a failed job ends the wait at once; otherwise it ends when every job
 *   is decided, with the worst exit code (the lowest non-zero). */
enum mad_wait_action {
	MAD_WAIT_SCAN,    /* read every undecided job's folder now */
	MAD_WAIT_ASK,     /* ask squeue for the jobs mad_wait_queue_ids() names */
	MAD_WAIT_SLEEP,   /* until AT, or a change in a watched folder */
	MAD_WAIT_END,     /* done: exit with CODE */
};

struct mad_wait_step {
	enum mad_wait_action action;
	double at;        /* MAD_WAIT_SLEEP: when to look again */
	int code;         /* MAD_WAIT_END: the exit code */
};

struct mad_wait_timing {
	double start, deadline;
	int deadline_from_limits;  /* no --timeout: the time limits set it */
	double next_scan, next_queue;
	double guard_interval;     /* the next pause between two answers */
	double backoff;            /* the next pause after a failed squeue */
	double unknown_since;      /* the first of FAILURES in a row */
	int failures;
	long squeue_calls;
	int answered;              /* squeue has answered at least once */
	int code;                  /* WAIT_PENDING until the wait ends */
	char why[1024];            /* the end, for jobs without a verdict */
};

void mad_wait_timing_init(struct mad_wait_timing *t, const struct mad_wait_cfg *cfg,
			  double start);
/* What to do at NOW.  Decides each job (mad_wait_decide) on the way; on a
 * timeout, the undecided jobs get WAIT_TIMEOUT and a reason. */
struct mad_wait_step mad_wait_next(struct mad_wait_timing *t, struct mad_wait_job *jobs,
				   int n, const struct mad_wait_cfg *cfg, double now);
/* The folders were read at NOW. */
void mad_wait_scanned(struct mad_wait_timing *t, const struct mad_wait_cfg *cfg,
		      double now);
/* A watched folder changed: read the folders at once. */
void mad_wait_woken(struct mad_wait_timing *t);
/* The ids of the undecided jobs into E (one squeue call for all); their
 * count. */
size_t mad_wait_queue_ids(const struct mad_wait_job *jobs, int n,
			  struct mad_queue_entry *e);
/* squeue answered E (as filled by mad_wait_queue_ids) at NOW; RANDOM in
 * [0, 1] jitters the next call. */
void mad_wait_answered(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
		       const struct mad_queue_entry *e, const struct mad_wait_cfg *cfg,
		       double now, double random);
/* squeue failed at NOW with ERR; 1 when that ends the wait (the budget is
 * spent: WAIT_UNKNOWN), 0 when it is retried. */
int mad_wait_unanswered(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
			const struct mad_wait_cfg *cfg, double now, const char *err);
/* Ends the wait with CODE (an interruption, a usage error): WHY becomes
 * the reason of every undecided job. */
void mad_wait_end(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
		  int code, const char *why);

#endif
