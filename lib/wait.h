/* wait.h: what mad-wait knows about one job, and the rules that turn it
 * into a verdict (SPEC §8).  Markers decide; the scheduler only says
 * whether the job can still write them.  Times are CLOCK_MONOTONIC
 * seconds, passed in, so the rules are tested without sleeping. */
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

#endif
