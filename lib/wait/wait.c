/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wait.c: the pure decisions of wait.h (the verdict and the timing
 * policy): no clock, file or process is read here. */
#include "wait.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* States of a job SLURM will run (again): requeued, or waiting to start. */
static int waiting_to_run(const char *state)
{
	return strcmp(state, "PENDING") == 0 || strncmp(state, "REQUEUE", 7) == 0;
}

/* States of a job whose time limit runs: not suspended (SLURM and spur
 * stop the clock), not configuring (SLURM restarts it when the nodes are
 * up, job_config_fini), not waiting. */
static int running(const char *state)
{
	return strcmp(state, "RUNNING") == 0 || strcmp(state, "COMPLETING") == 0;
}

int mad_wait_observe(struct mad_wait_job *j, const struct mad_queue_entry *e,
		     const struct mad_wait_cfg *cfg, double start, double now)
{
	long bound = j->submitted >= 0 ? j->submitted : j->unbounded ? -1 : j->wait_start;
	int again = 0;

	/* whose files count, and since when: what was read under another user
	 * or a looser bound is read again (a tighter bound only lets more in,
	 * and the files passed over are read again anyway) */
	if (e->listing != MAD_LISTING_ABSENT && e->user[0] && e->uid >= 0 && (uid_t)e->uid != j->uid) {
		j->uid = (uid_t)e->uid;
		again = 1;
	}
	if (e->listing != MAD_LISTING_ABSENT && e->submitted >= 0 &&
	    (j->submitted < 0 || e->submitted < j->submitted)) {
		/* the first submit time bounds what a run writes as it starts
		 * ('expected', ...), which nothing bounded before (scan.c) */
		again |= j->submitted < 0 || e->submitted > bound;
		j->submitted = e->submitted;
	}
	/* The start of the run shown (design.md §15): files before it are an
	 * earlier run's.  Only a run with the submit time first shown: spur
	 * keeps it over a requeue, in the same folder; SLURM moves it and its
	 * next attempt has a folder of its own.  An array's tasks have their
	 * own folders; an unknown start (N/A, a pending job's) changes nothing. */
	if (e->listing != MAD_LISTING_ABSENT && !j->array && !e->array && e->started >= 0 &&
	    e->submitted >= 0 && e->submitted == j->submitted && e->started > j->attempt_from) {
		j->attempt_from = e->started;
		again = 1;
	}
	if (again)
		mad_wait_forget(j);
	if (e->listing != MAD_LISTING_ABSENT)
		j->witnessed = 1;
	if (e->listing == MAD_LISTING_ACTIVE && waiting_to_run(e->state))
		j->empty_after_wait = -1;
	j->listing = e->listing;
	if (e->listing != MAD_LISTING_ABSENT)
		snprintf(j->state, sizeof(j->state), "%s", e->state);
	if (e->time_limit > j->time_limit)
		j->time_limit = e->time_limit;
	j->array |= e->array;
	/* its time limit's clock is stopped: it counts from the next start */
	if (e->listing == MAD_LISTING_ACTIVE && !running(e->state))
		j->clock_from = now;
	/* the run's clock for --overtime: from the first answer that shows
	 * it running, never earlier than the run started (design.md §10) */
	j->running_at = 0;
	if (e->listing == MAD_LISTING_ACTIVE && running(e->state)) {
		if (j->run_from < 0 || again || j->run_restart != j->restart) {
			j->run_from = now;
			j->run_restart = j->restart;
		}
		j->running_at = now;
	} else if (e->listing == MAD_LISTING_ACTIVE) {
		j->run_from = -1;
	}
	/* A failed marker: is the scheduler re-running the job?  An array's
	 * tasks are requeued one by one, each into a folder of its own, so
	 * there a failure stands. */
	if (j->rerun == MAD_RERUN_ASK || j->rerun == MAD_RERUN_UNSURE || j->rerun == MAD_RERUN_YES) {
		if (j->array || e->listing != MAD_LISTING_ACTIVE)
			j->rerun = MAD_RERUN_NO;
		else if (waiting_to_run(e->state))
			j->rerun = MAD_RERUN_YES;
		else if (strcmp(e->state, "COMPLETING") == 0)
			/* SLURM shows a requeued job COMPLETING, then PENDING */
			j->rerun = j->rerun == MAD_RERUN_YES ? MAD_RERUN_YES : MAD_RERUN_UNSURE;
		else if (j->rerun == MAD_RERUN_UNSURE && strcmp(e->state, "RUNNING") == 0)
			/* seen completing, now running: only a requeue does that,
			 * when its pending spell fell between two answers */
			j->rerun = MAD_RERUN_YES;
		else if (j->rerun != MAD_RERUN_YES)
			j->rerun = MAD_RERUN_NO; /* running on: this attempt's end */
		/* MAD_RERUN_YES and running: the next attempt starts, its folder comes */
	}
	if (e->listing == MAD_LISTING_ACTIVE) {
		j->gone_polls = 0;
		j->gone_since = 0;
		return again;
	}
	/* Never listed: pending while the startup grace lasts (spur lists a
	 * new job only after a minute or two).  A job listed once, if only as
	 * ended (spur 0.8's requeue cancels it, and it is dropped seconds
	 * later), is known: its absence counts at once. */
	if (e->listing == MAD_LISTING_ABSENT && !j->witnessed && now - start < cfg->startup_grace)
		return again;
	if (!j->gone_polls)
		j->gone_since = now;
	j->gone_polls++;
	/* never listed and gone: squeue will never say whose and since when */
	if (!j->witnessed && !j->unbounded && j->gone_polls >= cfg->gone_polls) {
		j->unbounded = 1;
		mad_wait_forget(j);
		again = 1;
	}
	return again;
}

void mad_wait_missing(const struct mad_wait_job *j, char *buf, size_t size)
{
	size_t off = 0;
	long n = j->expected > 0 ? j->expected : j->nrank;

	if (size)
		*buf = '\0';
	for (long i = 0; i < n && off + 1 < size; i++) {
		long k = i;
		int w;

		if (i < j->nrank && j->rank[i].state != MAD_RANK_MISSING &&
		    j->rank[i].state != MAD_RANK_EMPTY)
			continue;
		while (k + 1 < n && (k + 1 >= j->nrank || j->rank[k + 1].state == MAD_RANK_MISSING ||
				     j->rank[k + 1].state == MAD_RANK_EMPTY))
			k++;
		w = k > i ? snprintf(buf + off, size - off, "%s%ld-%ld", off ? "," : "", i, k) :
			    snprintf(buf + off, size - off, "%s%ld", off ? "," : "", i);
		if (w < 0 || (size_t)w >= size - off)
			break;
		off += (size_t)w;
		i = k;
	}
}

/* " (signal N, name)" for a shell's status of a child killed by a signal
 * (scancel: 15), else "". */
static void signal_note(char *buf, size_t size, long status)
{
	if (status > 128 && status < 128 + 65)
		snprintf(buf, size, " (signal %ld, %s)", status - 128, strsignal((int)(status - 128)));
	else if (size)
		*buf = '\0';
}

static void failed_reason(struct mad_wait_job *j)
{
	for (long i = 0; i < j->nrank; i++) {
		const struct mad_rank *r = &j->rank[i];

		if (r->state == MAD_RANK_FAILED) {
			char sig[96];

			signal_note(sig, sizeof(sig), r->status);
			snprintf(j->reason, sizeof(j->reason),
				 "rank %ld failed with exit status %ld%s%s%s%s%s", i, r->status, sig,
				 *r->host ? " on " : "", r->host, *r->note ? ": " : "", r->note);
			return;
		}
		if (r->state == MAD_RANK_INVALID) {
			snprintf(j->reason, sizeof(j->reason), "rank %ld: %s", i, r->note);
			return;
		}
	}
}

#define TASKS_NAMED 3

/* The verdict V with its reason completed: which attempt, when the job
 * was re-run, and the step tasks that failed. */
static int verdict(struct mad_wait_job *j, int v)
{
	char text[sizeof(j->reason)];
	size_t off;
	long named = 0;

	if (j->restart > 0) {
		int w = snprintf(text, sizeof(text), "attempt %ld: ", j->restart + 1);

		snprintf(text + w, sizeof(text) - (size_t)w, "%.*s", (int)(sizeof(text) - 40),
			 j->reason);
		memcpy(j->reason, text, sizeof(text));
	}
	off = strlen(j->reason);
	if (j->unbounded && off < sizeof(j->reason))
		off += (size_t)snprintf(j->reason + off, sizeof(j->reason) - off, "%s",
					" (the scheduler never listed the job: its files were taken as the caller's, unchecked against its submit time)");
	if (off >= sizeof(j->reason))
		off = sizeof(j->reason) - 1;
	for (long i = 0; i < j->ntask && named < j->ntask_failed; i++) {
		const struct mad_step_task *t = &j->task[i];
		char sig[96] = "";
		int w;

		if (t->state != MAD_RANK_FAILED && t->state != MAD_RANK_INVALID)
			continue;
		if (named == TASKS_NAMED) {
			w = snprintf(j->reason + off, sizeof(j->reason) - off,
				     "; %ld more step tasks failed", j->ntask_failed - named);
			break;
		}
		signal_note(sig, sizeof(sig), t->status);
		if (t->state == MAD_RANK_INVALID)
			w = snprintf(j->reason + off, sizeof(j->reason) - off,
				     "; step %ld task %ld wrote a marker that is not one", t->step,
				     t->task);
		else
			w = snprintf(j->reason + off, sizeof(j->reason) - off,
				     "; step %ld task %ld%s%s exited %ld%s", t->step, t->task,
				     *t->host ? " on " : "", t->host, t->status, sig);
		if (w < 0 || (size_t)w >= sizeof(j->reason) - off)
			break;
		off += (size_t)w;
		named++;
	}
	/* what was passed over, last: the outcome reads first */
	off = strlen(j->reason);
	if (*j->ignored && off < sizeof(j->reason))
		snprintf(j->reason + off, sizeof(j->reason) - off, "; %.*s",
			 (int)(sizeof(j->reason) - off - 3), j->ignored);
	return j->verdict = v;
}

/* Still listed running cfg->overtime past its time limit, by an answer
 * given then: no scheduler runs a job so long over, unless it has lost it
 * (spur #803: a restarted spurd forgets its running jobs, and the
 * controller lists them RUNNING until the node fails; design.md §10).
 * Writes the reason. */
static int overdue(struct mad_wait_job *j, const struct mad_wait_cfg *cfg)
{
	char missing[512];

	char have[64] = "";

	if (j->array || j->time_limit < 0 || j->run_from < 0 || j->running_at <= 0 ||
	    j->running_at < j->run_from + (double)j->time_limit + cfg->overtime)
		return 0;
	mad_wait_missing(j, missing, sizeof(missing));
	if (j->expected < 0 && j->ndone > 0)
		snprintf(have, sizeof(have), "%ld ranks done, how many to expect unknown", j->ndone);
	snprintf(j->reason, sizeof(j->reason),
		 "squeue still lists the job %s %.0f s past its time limit (%ld s, counted from "
		 "the first answer that listed this run running) with %s%s: the scheduler has "
		 "lost it (its node daemon restarted mid-job: spur #803), or it lets jobs run "
		 "longer over their limit than --overtime (%.0f s)",
		 j->state, j->running_at - j->run_from - (double)j->time_limit, j->time_limit,
		 *have    ? have :
		 *missing ? "ranks missing: " :
			    "no marker",
		 *have ? "" : missing, cfg->overtime);
	return 1;
}

/* A spur job in nodes fan-out, gone, whose rank 0 ran the script and
 * exited 0 and whose missing ranks never ran it (no script_rank<N>):
 * spur ran the script on its first node only, since it launches steps
 * (crates/spur-core/src/task_launch.rs batch_script_uses_step_launch,
 * batch_companion_hold_script), and decides the job by that node as
 * SLURM does (job.rs derived_completion: the batch node's exit). */
static int held_nodes(const struct mad_wait_job *j)
{
	long missing = 0;

	/* the count the job wrote (not --nnodes), and no end the scheduler
	 * calls a failure.  Last seen pending is allowed, as for a job whose
	 * markers are all there: a short job runs between two answers */
	if (j->array || !j->expected_own || j->expected < 2 || j->nrank < j->expected ||
	    !j->rank[0].ran || j->rank[0].state != MAD_RANK_DONE || j->nfailed ||
	    (mad_state_final(j->state) && strcmp(j->state, "COMPLETED")))
		return 0;
	for (long i = 1; i < j->expected; i++) {
		if (j->rank[i].state == MAD_RANK_DONE)
			continue;
		if (j->rank[i].state != MAD_RANK_MISSING || j->rank[i].ran)
			return 0;
		missing++;
	}
	return missing > 0;
}

/* The rules of --ready: readiness, not the end, is the outcome. */
static int decide_ready(struct mad_wait_job *j, const struct mad_wait_cfg *cfg)
{
	size_t off;

	if (j->ready == 1) {
		snprintf(j->reason, sizeof(j->reason), "ready: %.900s (rank 0%s%s)", j->endpoint,
			 *j->ready_host ? " on " : "", j->ready_host);
		return verdict(j, MAD_WAIT_OK);
	}
	if (j->ready < 0) {
		snprintf(j->reason, sizeof(j->reason), "rank 0's ready marker in '%.600s': %s",
			 j->dir, j->ready_note);
		return verdict(j, MAD_WAIT_FAILED);
	}
	if (j->nfailed) {
		/* "At once": only a job squeue shows requeued is waited for; one
		 * still completing is not given the benefit of the doubt here. */
		if (!cfg->no_requeue && !j->array && j->rerun != MAD_RERUN_NO &&
		    j->rerun != MAD_RERUN_UNSURE) {
			if (j->rerun == MAD_RERUN_NONE)
				j->rerun = MAD_RERUN_ASK;
			return MAD_WAIT_PENDING;
		}
		failed_reason(j);
		off = strlen(j->reason);
		snprintf(j->reason + off, sizeof(j->reason) - off, ", before it was ready");
		return verdict(j, MAD_WAIT_FAILED);
	}
	if (j->ndone) {
		for (long i = 0; i < j->nrank; i++)
			if (j->rank[i].state == MAD_RANK_DONE) {
				snprintf(j->reason, sizeof(j->reason),
					 "rank %ld exited 0: the job ended before it was ready", i);
				break;
			}
		return verdict(j, MAD_WAIT_FAILED);
	}
	if (overdue(j, cfg)) {
		off = strlen(j->reason);
		snprintf(j->reason + off, sizeof(j->reason) - off, ", before it was ready");
		return verdict(j, MAD_WAIT_FAILED);
	}
	if (j->gone_polls >= cfg->gone_polls) {
		snprintf(j->reason, sizeof(j->reason),
			 "the job left the queue%s%s%s: it ended before it was ready",
			 *j->state ? " (last state " : "", j->state, *j->state ? ")" : "");
		return verdict(j, MAD_WAIT_FAILED);
	}
	return MAD_WAIT_PENDING;
}

int mad_wait_decide(struct mad_wait_job *j, const struct mad_wait_cfg *cfg, double now)
{
	char missing[512];

	if (j->verdict != MAD_WAIT_PENDING)
		return j->verdict;
	if (cfg->ready)
		return decide_ready(j, cfg);
	if (j->nfailed) {
		/* Not yet the verdict while the scheduler may be re-running the job. */
		if (!cfg->no_requeue && !j->array && j->rerun != MAD_RERUN_NO) {
			if (j->rerun == MAD_RERUN_NONE)
				j->rerun = MAD_RERUN_ASK;
			return MAD_WAIT_PENDING;
		}
		failed_reason(j);
		return verdict(j, MAD_WAIT_FAILED);
	}
	if (j->expected > 0 && j->ndone >= j->expected) {
		/* squeue shows the job waiting to run (again): the first attempt's
		 * folder holds an earlier run's markers (spur re-runs a requeued
		 * job there); a later attempt's folder is a run after the requeue */
		if (!j->array && j->restart == 0 && j->listing == MAD_LISTING_ACTIVE &&
		    waiting_to_run(j->state) && j->empty_after_wait != 1) {
			/* a short job runs between two answers: squeue is asked
			 * at once whether it ran, not an interval later */
			j->held_success = 1;
			return MAD_WAIT_PENDING;
		}
		if (j->expected == 1)
			snprintf(j->reason, sizeof(j->reason), "rank 0 exited 0");
		else
			snprintf(j->reason, sizeof(j->reason), "all %ld ranks exited 0", j->expected);
		return verdict(j, MAD_WAIT_OK);
	}
	if (overdue(j, cfg))
		return verdict(j, MAD_WAIT_GONE);
	/* no grace: a node that never started the script writes nothing
	 * late, and one that did wrote its script_rank when it started */
	if (j->gone_polls >= cfg->gone_polls && (j->held = held_nodes(j))) {
		mad_wait_missing(j, missing, sizeof(missing));
		snprintf(j->reason, sizeof(j->reason),
			 "rank 0 exited 0; ranks %s never ran the job script (no script_rank file): spur runs a script that launches steps (srun, mpirun, mpiexec) on its first node only, the others hold",
			 missing);
		return verdict(j, MAD_WAIT_OK);
	}
	if (j->gone_polls >= cfg->gone_polls && now - j->gone_since >= cfg->grace) {
		mad_wait_missing(j, missing, sizeof(missing));
		if (!j->dir_seen)
			snprintf(j->reason, sizeof(j->reason),
				 "the job left the queue%s%s%s and its folder '%.600s' never appeared "
				 "(was it submitted with --mad-model, or does its script call mad-env/mad-mark?)",
				 *j->state ? " (last state " : "", j->state, *j->state ? ")" : "",
				 j->dir);
		else if (j->expected < 0)
			snprintf(j->reason, sizeof(j->reason),
				 "the job left the queue%s%s%s; %ld ranks done, and '%.600s' does not say how many to expect (give --nnodes)",
				 *j->state ? " (last state " : "", j->state, *j->state ? ")" : "",
				 j->ndone, j->dir);
		else
			snprintf(j->reason, sizeof(j->reason),
				 "the job left the queue%s%s%s and ranks %s wrote no marker within %.0f s",
				 *j->state ? " (last state " : "", j->state, *j->state ? ")" : "",
				 missing, cfg->grace);
		return verdict(j, MAD_WAIT_GONE);
	}
	return MAD_WAIT_PENDING;
}

/* ------------------------------------------------- the timing policy */

#define DAY 86400.0       /* the default timeout, and the most the limits give */
#define CONFIRM_MAX 5.0   /* between answers confirming a vanished job */
#define BACKOFF_FIRST 2.0 /* after the first failed squeue */
#define GUARD_GROWTH 1.5
#define GUARD_MAX 4 /* intervals */
#define DEADLINE_MIN 60.0

static double min2(double a, double b)
{
	return a < b ? a : b;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

void mad_wait_timing_init(struct mad_wait_timing *t, const struct mad_wait_cfg *cfg, double start)
{
	memset(t, 0, sizeof(*t));
	t->start = start;
	t->deadline_from_limits = cfg->timeout < 0;
	t->deadline = start + (cfg->timeout < 0 ? DAY : cfg->timeout);
	t->next_scan = start;
	t->next_queue = start; /* it says whose markers count, and since when: first */
	/* the first answer grows it to one interval */
	t->guard_interval = cfg->interval / GUARD_GROWTH;
	t->backoff = BACKOFF_FIRST;
	t->code = MAD_WAIT_PENDING;
}

void mad_wait_end(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n, int code, const char *why)
{
	if (t->code != MAD_WAIT_PENDING)
		return;
	t->code = code;
	snprintf(t->why, sizeof(t->why), "%s", why);
	/* what was passed over, as a verdict names it (design.md §15) */
	for (int i = 0; i < n; i++)
		if (jobs[i].verdict == MAD_WAIT_PENDING)
			snprintf(jobs[i].reason, sizeof(jobs[i].reason), "%s%s%.*s", why,
				 *why && *jobs[i].ignored ? "; " : "",
				 *why ? (int)(sizeof(jobs[i].reason) / 2) : 0, jobs[i].ignored);
}

static void time_out(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n, double now)
{
	char missing[512];

	for (int i = 0; i < n; i++) {
		struct mad_wait_job *j = &jobs[i];

		if (j->verdict != MAD_WAIT_PENDING)
			continue;
		mad_wait_missing(j, missing, sizeof(missing));
		if (j->nfailed)
			snprintf(j->reason, sizeof(j->reason),
				 "timed out after %.0f s, the job still being re-run after a failed marker (state %s)",
				 now - t->start, *j->state ? j->state : "unknown");
		else if (j->expected > 0 && j->ndone >= j->expected)
			snprintf(j->reason, sizeof(j->reason),
				 "timed out after %.0f s, the job waiting to run again (state %s): its markers are an earlier run's",
				 now - t->start, *j->state ? j->state : "unknown");
		else
			snprintf(j->reason, sizeof(j->reason), "timed out after %.0f s with %s%s",
				 now - t->start, *missing ? "ranks missing: " : "no marker yet",
				 missing);
		verdict(j, MAD_WAIT_TIMEOUT);
	}
	t->code = MAD_WAIT_TIMEOUT;
}

struct mad_wait_step mad_wait_next(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
				   const struct mad_wait_cfg *cfg, double now)
{
	struct mad_wait_step s = { MAD_WAIT_SLEEP, 0, MAD_WAIT_PENDING };
	int decided = 0, failed = 0, rerun_ask = 0;

	if (t->code != MAD_WAIT_PENDING) {
		s.action = MAD_WAIT_END;
		s.code = t->code;
		return s;
	}
	/* the first answer says whose files count and since when: it comes
	 * before the first read of a job squeue has not listed */
	if (t->squeue_calls == 0 && now >= t->next_queue)
		for (int i = 0; i < n; i++)
			if (jobs[i].verdict == MAD_WAIT_PENDING && !jobs[i].witnessed) {
				s.action = MAD_WAIT_ASK;
				return s;
			}
	if (now >= t->next_scan) {
		s.action = MAD_WAIT_SCAN;
		return s;
	}
	for (int i = 0; i < n; i++) {
		int v = mad_wait_decide(&jobs[i], cfg, now);

		decided += v != MAD_WAIT_PENDING;
		failed |= v == MAD_WAIT_FAILED;
		rerun_ask |= v == MAD_WAIT_PENDING && (jobs[i].rerun == MAD_RERUN_ASK ||
						       (jobs[i].held_success && !jobs[i].held_asked));
	}
	if (failed || decided == n) {
		t->code = MAD_WAIT_OK;
		for (int i = 0; i < n; i++)
			if (jobs[i].verdict != MAD_WAIT_OK && jobs[i].verdict != MAD_WAIT_PENDING &&
			    (t->code == MAD_WAIT_OK || jobs[i].verdict < t->code))
				t->code = jobs[i].verdict;
	} else if (now >= t->deadline && t->deadline_from_limits && t->answered &&
		   t->asked_deadline != t->deadline) {
		/* the limits' deadline: one more answer says which jobs are
		 * still listed running past them (lost), not merely slow; a
		 * deadline an answer moved is asked at again */
		t->asked_deadline = t->deadline;
		s.action = MAD_WAIT_ASK;
		return s;
	} else if (now >= t->deadline) {
		time_out(t, jobs, n, now);
	} else if (now >= t->next_queue || rerun_ask) {
		s.action = MAD_WAIT_ASK;
		return s;
	}
	if (t->code != MAD_WAIT_PENDING) {
		s.action = MAD_WAIT_END;
		s.code = t->code;
		return s;
	}
	s.at = min2(min2(t->next_scan, t->next_queue), t->deadline);
	return s;
}

void mad_wait_scanned(struct mad_wait_timing *t, const struct mad_wait_cfg *cfg, double now)
{
	t->next_scan = now + cfg->scan_period;
}

void mad_wait_woken(struct mad_wait_timing *t)
{
	t->next_scan = t->start;
}

size_t mad_wait_queue_ids(const struct mad_wait_job *jobs, int n, struct mad_queue_entry *e)
{
	size_t k = 0;

	for (int i = 0; i < n; i++)
		if (jobs[i].verdict == MAD_WAIT_PENDING)
			e[k++].id = jobs[i].id;
	return k;
}

void mad_wait_answered(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
		       const struct mad_queue_entry *e, const struct mad_wait_cfg *cfg, double now,
		       double random)
{
	double latest = t->start;
	int unlimited = 0, confirming = 0, rescan = 0;
	long distrusted = -1;

	t->squeue_calls++;
	t->answered = 1;
	t->failures = 0;
	t->backoff = BACKOFF_FIRST;
	for (int i = 0, k = 0; i < n; i++) {
		struct mad_wait_job *j = &jobs[i];

		if (j->verdict != MAD_WAIT_PENDING)
			continue;
		/* an answer that cannot say whose files count (design.md §15):
		 * the files cannot be checked, so nothing may decide by them */
		if (e[k].problem[0]) {
			snprintf(j->reason, sizeof(j->reason), "%s", e[k++].problem);
			verdict(j, MAD_WAIT_UNKNOWN);
			if (distrusted < 0)
				distrusted = j->id;
			continue;
		}
		/* what it forgot is read again at once: the answer that shows
		 * a job running for the first time (its start, %S) forgets what
		 * was read before it, the success of a job that ran between two
		 * answers among it, which would wait for the next scan */
		rescan |= mad_wait_observe(j, &e[k++], cfg, t->start, now);
		/* An answer that may end the job (it left the running states, or
		 * a failed marker is now final) was given after the last scan: a
		 * requeued attempt can start and end between two answers, and its
		 * folder must be read before the first attempt's marker decides. */
		rescan |= j->listing != MAD_LISTING_ACTIVE || (j->nfailed && j->rerun == MAD_RERUN_NO);
		confirming |= (j->gone_polls > 0 && j->gone_polls < cfg->gone_polls) ||
			      j->rerun == MAD_RERUN_UNSURE || j->held_success;
		/* a held success asked about: again as a vanished job is */
		j->held_asked = j->held_success;
		j->held_success = 0;
		if (j->time_limit < 0)
			unlimited = 1;
		else if (j->listing != MAD_LISTING_ABSENT) /* a pending job's clock has not started */
			latest = max2(latest, max2(max2(t->start, j->clock_from), j->run_from) +
						      (double)j->time_limit);
	}
	/* The limits only shorten the day: a pending job's clock restarts at
	 * each answer, so without the cap a job pending for ever (or a limit
	 * of days) would keep the wait going past it. */
	if (t->deadline_from_limits && !unlimited && latest > t->start)
		t->deadline = min2(t->start + DAY, max2(t->start + DEADLINE_MIN,
							latest + cfg->overtime + cfg->grace));
	/* Markers decide, so the guard may slow down (30 s, 45 s, ... 2 min by
	 * default); confirming a disappearance is fast. */
	t->guard_interval = min2(t->guard_interval * GUARD_GROWTH, GUARD_MAX * cfg->interval);
	t->next_queue = now + (confirming ? min2(cfg->interval, CONFIRM_MAX) :
					    t->guard_interval * (0.9 + 0.2 * random));
	if (rescan)
		t->next_scan = now;
	if (distrusted >= 0) {
		char why[128];

		snprintf(why, sizeof(why),
			 "not decided: squeue's answer for job %ld cannot be trusted", distrusted);
		mad_wait_end(t, jobs, n, MAD_WAIT_UNKNOWN, why);
	}
}

int mad_wait_unanswered(struct mad_wait_timing *t, struct mad_wait_job *jobs, int n,
			const struct mad_wait_cfg *cfg, double now, const char *err)
{
	char why[MAD_ERR_MAX];

	t->squeue_calls++;
	/* a failed marker the scheduler cannot be asked about decides */
	for (int i = 0; i < n; i++)
		if (jobs[i].rerun == MAD_RERUN_ASK || jobs[i].rerun == MAD_RERUN_UNSURE)
			jobs[i].rerun = MAD_RERUN_NO;
	if (!t->failures++)
		t->unknown_since = now;
	if (now - t->unknown_since >= cfg->unknown_budget) {
		snprintf(why, sizeof(why), "the scheduler could not be asked for %.0f s: %.700s",
			 now - t->unknown_since, err);
		mad_wait_end(t, jobs, n, MAD_WAIT_UNKNOWN, why);
		return 1;
	}
	t->next_queue = now + min2(min2(t->backoff, cfg->interval),
				   t->unknown_since + cfg->unknown_budget - now);
	t->backoff *= 2;
	return 0;
}
