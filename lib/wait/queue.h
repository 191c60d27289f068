/* SPDX-License-Identifier: GPL-2.0-or-later */
/* queue.h: the scheduler as a liveness guard (design.md §10), and the witness
 * of whose files count (§15).  One squeue call for every watched job,
 * "squeue -h -t all -j ID,... -o '%i %T %l %u %V %S'", parsed by whitespace
 * (spur before 0.5 drops custom delimiters) and filtered by job id on our
 * side, never by name. */
#ifndef MAD_QUEUE_H
#define MAD_QUEUE_H

#include <stddef.h>
#include <sys/types.h>

enum mad_listing {
	MAD_LISTING_ABSENT, /* not in the output */
	MAD_LISTING_ACTIVE, /* some task pending, running, completing, ... */
	MAD_LISTING_ENDED,  /* listed, every task in a final state */
};

struct mad_queue_entry {
	long id; /* the job (array job) id asked for */
	enum mad_listing listing;
	char state[32];  /* the last state seen for it ("" if absent) */
	long time_limit; /* seconds; -1 unlimited or unknown */
	int array;       /* listed as array tasks (ID_N) */
	char user[64];   /* the job's user (%u), "" unknown */
	long uid;        /* USER's uid: a numeric %u (SLURM prints the uid of a
			    user its controller cannot name), else looked up by
			    mad_queue_ask; -1 unknown */
	long started;    /* the start (%S) of the run shown running or ended, -1
				     unknown (design.md §15: spur re-runs a job in its folder) */
	long submitted;  /* the submit time (%V), -1 unknown; the
				     earliest listed (an array's tasks agree) */
	/* Why the answer cannot say whose files count, or "": rows of the job
	 * that disagree on the user, or one id listed twice with different
	 * submit times (several clusters answering: SLURM_CLUSTERS, -M), or
	 * (mad_queue_ask) a user this host cannot resolve.  The wait ends,
	 * exit 3 (design.md §15). */
	char problem[1024];
};

/* Seconds in a SLURM time limit ("30", "5:00", "1:00:00", "2-00:00:00"),
 * or -1 for UNLIMITED, NOT_SET and anything else. */
long mad_time_limit_parse(const char *s);

/* Whether STATE (squeue's %T) is a final one (COMPLETED, FAILED, ...). */
int mad_state_final(const char *state);

/* Seconds since the epoch for squeue's %V, "2026-12-02T01:02:03" in local
 * time (SLURM's; spur prints UTC, crates/spur-cli/src/squeue.rs
 * format_timestamp, the same on a UTC host), or -1. */
long mad_submit_time_parse(const char *s);

/* Fills E[N] (ids set by the caller) from squeue's output TEXT.  Lines not
 * of the form "ID STATE [LIMIT [USER [SUBMIT [START]]]]" are skipped; returns how
 * many were.  A numeric USER is its uid; rows of a job that disagree (on
 * the user; on the submit time for the same squeue id, since an array's
 * tasks each have theirs) set its problem. */
size_t mad_queue_parse(const char *text, size_t len, struct mad_queue_entry *e, size_t n);

/* Runs squeue (from PATH) for E[N], parses its answer and looks up each
 * listed user's uid (one getpwnam cannot find is the entry's problem).  A
 * call that
 * fails, times out after TIMEOUT seconds or says nothing parseable on
 * error is -1 with ERR (the scheduler is "unknown"), else 0. */
int mad_queue_ask(struct mad_queue_entry *e, size_t n, double timeout, char *err, size_t size);

#endif
