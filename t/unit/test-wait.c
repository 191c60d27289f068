/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/wait/wait (mad-wait's verdict and its timing policy,
 * with the job folders read by lib/wait/scan), on a real folder with a
 * fake clock: no test sleeps. */
#include "marker.h"
#include "unit.h"
#include "wait/wait.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char run_dir[] = "/tmp/mad-test-wait.XXXXXX";

/* mad-wait's defaults (tools/mad-wait.c), the base of every cfg below */
#define DEFAULTS                                                                             \
	.interval = 30, .unknown_budget = 300, .timeout = -1, .scan_period = 1, .grace = 60, \
	.overtime = 600, .startup_grace = 300, .empty_grace = 5, .gone_polls = 3, .nnodes = -1

static const struct mad_wait_cfg cfg = { DEFAULTS };

/* --no-requeue: the first failed marker decides, with no squeue asked */
static const struct mad_wait_cfg strict = {
	DEFAULTS,
	.no_requeue = 1,
};

/* --ready: readiness decides */
static const struct mad_wait_cfg ready_cfg = {
	DEFAULTS,
	.ready = 1,
};

static void unlink_in(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	unlink(path);
}

static void put(const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A job folder as the writers make it (jobdir.h): "ID" or "ID.RESTART",
 * with its attempt file. */
static void mkjob(const char *name)
{
	char path[4096], text[256];
	long id = 0, restart = 0;

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	mkdir(path, 0755);
	sscanf(name, "%ld.%ld", &id, &restart);
	snprintf(path, sizeof(path), "%s/attempt", name);
	snprintf(text, sizeof(text), "cluster=test\njob=%ld\nrestart=%ld\nuid=%u\n", id, restart,
		 (unsigned)getuid());
	put(path, text);
}

/* ------------------------------------------------- the timing policy */

#define T0 1000.0

/* A job squeue has listed already: its markers may decide (the gate has
 * tests of its own). */
static void job_init(struct mad_wait_job *j, long id, const char *dir)
{
	mad_wait_job_init(j, id, dir);
	j->witnessed = 1;
	j->wait_start = 0; /* no file is older than the wait */
}

static struct mad_wait_step next_at(struct mad_wait_timing *t, struct mad_wait_job *j, int n,
				    const struct mad_wait_cfg *c, double now)
{
	struct mad_wait_step s = mad_wait_next(t, j, n, c, now);

	if (s.action == MAD_WAIT_SCAN) { /* as if the folders were read */
		mad_wait_scanned(t, c, now);
		s = mad_wait_next(t, j, n, c, now);
	}
	return s;
}

static void answer(struct mad_wait_timing *t, struct mad_wait_job *j, int n,
		   const struct mad_wait_cfg *c, const char *text, double now)
{
	struct mad_queue_entry e[4];
	size_t k = mad_wait_queue_ids(j, n, e);

	mad_queue_parse(text, strlen(text), e, k);
	mad_wait_answered(t, j, n, e, c, now, 0.5);
}

TEST(markers_decide)
{
	struct mad_wait_job j;
	char err[512], missing[64];

	job_init(&j, 100, run_dir);
	CHECK(mad_wait_scan(&j, &cfg, 0, err, sizeof(err)) == 0);
	CHECK(!j.dir_seen && mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_PENDING);
	mkjob("100");
	put("100/expected", "4\n");
	put("100/done_rank0", "0\nhost=a\n");
	put("100/done_rank2", "0\n");
	put("100/done_rank07", "1\n"); /* not a marker name */
	put("100/done_rank9", "1\n");  /* beyond the job's ranks */
	CHECK(mad_wait_scan(&j, &cfg, 1, err, sizeof(err)) == 2);
	CHECK(j.expected == 4 && j.ndone == 2 && j.nfailed == 0);
	mad_wait_missing(&j, missing, sizeof(missing));
	CHECK_STR(missing, "1,3");
	CHECK(mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_PENDING);
	put("100/done_rank1", "0\n");
	put("100/done_rank3", "0\n");
	CHECK(mad_wait_scan(&j, &cfg, 2, err, sizeof(err)) == 2);
	CHECK(mad_wait_decide(&j, &cfg, 2) == MAD_WAIT_OK);
	mad_wait_job_free(&j);

	job_init(&j, 101, run_dir);
	mkjob("101");
	put("101/expected", "2\n");
	put("101/done_rank1", "3\nhost=n2\nerror=oom\n");
	mad_wait_scan(&j, &strict, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 0) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "rank 1 failed with exit status 3 on n2: oom") != NULL);
	mad_wait_job_free(&j);
}

/* squeue's answer for job ID: listed, with its user's UID and SUBMITTED */
static struct mad_queue_entry listed(long id, long uid, long submitted)
{
	struct mad_queue_entry e = { .id = id,
				     .listing = MAD_LISTING_ACTIVE,
				     .state = "RUNNING",
				     .user = "someone",
				     .uid = uid,
				     .started = -1,
				     .submitted = submitted };

	return e;
}

TEST(trust_no_marker_decides_before_squeue_lists_the_job)
{
	struct mad_wait_job j;
	struct mad_queue_entry e = listed(310, (long)getuid(), 0);
	struct mad_queue_entry absent = { .id = 310, .listing = MAD_LISTING_ABSENT };
	char err[512];

	mad_wait_job_init(&j, 310, run_dir);
	j.wait_start += 100; /* the files are older than the wait */
	mkjob("310");
	put("310/expected", "1\n");
	put("310/done_rank0", "0\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_PENDING); /* whose? since when? */
	CHECK(strstr(j.ignored, "before this wait began") != NULL);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	CHECK(mad_wait_scan(&j, &cfg, 1, err, sizeof(err)) == 1);
	CHECK(mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_OK);
	mad_wait_job_free(&j);
	/* a job squeue never lists (it ended long ago): confirmed gone, the
	 * caller's files decide, and the reason says they were not checked;
	 * files written after the wait began decide at once */
	mad_wait_job_init(&j, 310, run_dir);
	j.wait_start += 100;
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	for (int i = 0; i < 3; i++)
		mad_wait_observe(&j, &absent, &cfg, 0, 400 + i);
	CHECK(mad_wait_scan(&j, &cfg, 402, err, sizeof(err)) == 1);
	CHECK(mad_wait_decide(&j, &cfg, 402) == MAD_WAIT_OK);
	CHECK(strstr(j.reason, "never listed the job") != NULL);
	mad_wait_job_free(&j);
}

/* What a run writes as it starts ('expected') is held to the submit time
 * only, never to the wait's start: a job that started before the wait and
 * ends within it is decided by its markers while squeue never answers. */
TEST(trust_the_count_written_at_the_start_counts_before_squeue_answers)
{
	struct mad_wait_job j;
	struct mad_queue_entry e;
	char err[512], text[64];

	mad_wait_job_init(&j, 315, run_dir);
	j.wait_start += 100; /* the job started well before the wait */
	mkjob("315");
	put("315/expected", "1\n");
	snprintf(text, sizeof(text), "0\ntime=%ld\n", j.wait_start + 5); /* ended within it */
	put("315/done_rank0", text);
	CHECK(mad_wait_scan(&j, &cfg, 0, err, sizeof(err)) == 1);
	CHECK(j.expected == 1 && mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_OK);
	mad_wait_job_free(&j);
	/* once squeue says when the job was submitted, the count is held to it:
	 * one written before is an earlier job's, read again and passed over */
	mad_wait_job_init(&j, 315, run_dir);
	j.wait_start += 100;
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(j.expected == 1);
	e = listed(315, (long)getuid(), j.wait_start - 50);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	CHECK(j.expected == -1);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(j.expected == -1 && mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_PENDING);
	CHECK(strstr(j.ignored, "ignored expected in ") != NULL);
	CHECK(strstr(j.ignored, "before the job was submitted") != NULL);
	mad_wait_job_free(&j);
}

TEST(trust_a_marker_older_than_the_job_is_an_earlier_jobs)
{
	struct mad_wait_job j;
	struct mad_queue_entry e = listed(311, (long)getuid(), 5000);
	char err[512];

	job_init(&j, 311, run_dir);
	mkjob("311");
	put("311/expected", "1\n");
	put("311/done_rank0", "0\nhost=old\ntime=4000\n"); /* the earlier job's success */
	CHECK(mad_wait_scan(&j, &cfg, 0, err, sizeof(err)) == 1);
	mad_wait_observe(&j, &e, &cfg, 0, 1); /* learnt: submitted at 5000 */
	CHECK(j.ndone == 0 && j.submitted == 5000);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(j.ndone == 0 && mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_PENDING);
	CHECK(strstr(j.ignored, "ignored done_rank0 in ") != NULL);
	CHECK(strstr(j.ignored, "before the job was submitted (5000)") != NULL);
	/* within the clock slack it is this job's */
	put("311/done_rank0", "3\nhost=new\ntime=4999\n");
	mad_wait_scan(&j, &cfg, 2, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 5) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "rank 0 failed with exit status 3 on new") != NULL);
	mad_wait_job_free(&j);
	/* a later attempt's folder made before the job was submitted is an
	 * earlier job's with the same id: it does not end this attempt */
	mkjob("314");
	put("314/expected", "1\n");
	put("314/done_rank0", "0\ntime=6000\n");
	mkjob("314.1");
	put("314.1/attempt", "cluster=test\njob=314\nrestart=1\nuid=0\ncreated=100\n");
	put("314.1/expected", "1\n");
	put("314.1/done_rank0", "3\ntime=100\n");
	job_init(&j, 314, run_dir);
	e = listed(314, (long)getuid(), 5000);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	CHECK(mad_wait_scan(&j, &cfg, 1, err, sizeof(err)) == 1 && j.ndone == 1 && j.restart == 0);
	CHECK(strstr(j.ignored, "/314.1': made before the job was submitted") != NULL);
	mad_wait_job_free(&j);
	/* a requeue moves the submit time later: the earliest counts */
	job_init(&j, 311, run_dir);
	e.submitted = 4990;
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	e.submitted = 6000;
	mad_wait_observe(&j, &e, &cfg, 0, 2);
	CHECK(j.submitted == 4990);
	mad_wait_job_free(&j);
}

TEST(trust_a_planted_folder_is_passed_over_and_named)
{
	struct mad_wait_job j;
	char err[512], path[4200], target[4200];

	job_init(&j, 312, run_dir);
	/* <id> is a link into a folder of someone else's choosing */
	mkjob("elsewhere");
	put("elsewhere/expected", "1\n");
	put("elsewhere/done_rank0", "0\n");
	snprintf(target, sizeof(target), "%s/elsewhere", run_dir);
	snprintf(path, sizeof(path), "%s/312", run_dir);
	CHECK(symlink(target, path) == 0);
	mkjob("312~00000000000000f1");
	put("312~00000000000000f1/attempt", "cluster=test\njob=312\nrestart=0\n");
	put("312~00000000000000f1/expected", "1\n");
	put("312~00000000000000f1/done_rank0", "3\n");
	mad_wait_scan(&j, &strict, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 0) == MAD_WAIT_FAILED);
	CHECK(strstr(j.dir, "/312~00000000000000f1") != NULL);
	CHECK(strstr(j.reason, "rank 0 failed with exit status 3") != NULL);
	CHECK(strstr(j.reason, "/312': a symbolic link") != NULL);
	mad_wait_job_free(&j);
	/* a folder of another user's: its files are not the job's */
	job_init(&j, 312, run_dir);
	{
		struct mad_queue_entry e = listed(312, (long)getuid() + 1, 0);

		mad_wait_observe(&j, &e, &cfg, 0, 1);
	}
	CHECK(mad_wait_scan(&j, &strict, 1, err, sizeof(err)) == 0);
	CHECK(mad_wait_decide(&j, &strict, 1) == MAD_WAIT_PENDING);
	CHECK(strstr(j.ignored, "owned by uid") != NULL);
	mad_wait_job_free(&j);
	/* a file in the job's folder another user owns (root may make one) */
	if (geteuid() == 0) {
		job_init(&j, 313, run_dir);
		mkjob("313");
		put("313/expected", "1\n");
		put("313/done_rank0", "0\n");
		snprintf(path, sizeof(path), "%s/313/done_rank0", run_dir);
		CHECK(chown(path, 4242, 4242) == 0);
		mad_wait_scan(&j, &strict, 0, err, sizeof(err));
		CHECK(j.ndone == 0 && mad_wait_decide(&j, &strict, 0) == MAD_WAIT_PENDING);
		CHECK(strstr(j.ignored, "ignored done_rank0 in ") != NULL);
		CHECK(strstr(j.ignored, "owned by uid 4242, not the job's user") != NULL);
		mad_wait_job_free(&j);
	}
}

/* Job ID's folder in the run folder RUN (a folder of run_dir): its
 * attempt file, 'expected' 1 and, STATUS not NULL, rank 0's marker. */
static void mkjob_in(const char *run, long id, const char *status)
{
	char name[256], text[4400];

	snprintf(name, sizeof(name), "%s/%ld", run, id);
	snprintf(text, sizeof(text), "%s/%s", run_dir, name);
	mkdir(text, 0755);
	snprintf(name, sizeof(name), "%s/%ld/attempt", run, id);
	snprintf(text, sizeof(text), "cluster=test\njob=%ld\nrestart=0\nuid=%u\n", id,
		 (unsigned)getuid());
	put(name, text);
	snprintf(name, sizeof(name), "%s/%ld/expected", run, id);
	put(name, "1\n");
	snprintf(name, sizeof(name), "%s/%ld/done_rank0", run, id);
	if (status)
		put(name, status);
}

/* The job's user renames the run folder away and puts a look-alike at its
 * path, a job folder of the same name and identity holding a success:
 * mad-wait reads the folder it found through the run folder it checked,
 * never what the path names now (design.md §15). */
TEST(trust_the_folder_found_is_read_whatever_its_path_names_later)
{
	struct mad_wait_job j;
	char err[512], run[4200], moved[4200];

	snprintf(run, sizeof(run), "%s/swap", run_dir);
	CHECK(mkdir(run, 0755) == 0);
	job_init(&j, 330, run);
	mkjob_in("swap", 330, NULL);
	CHECK(mad_wait_scan(&j, &strict, 0, err, sizeof(err)) == 0 && j.dir_seen);
	/* the swap: the job's folder, found, is at swap.moved/330 now */
	snprintf(moved, sizeof(moved), "%s/swap.moved", run_dir);
	CHECK(rename(run, moved) == 0 && mkdir(run, 0755) == 0);
	mkjob_in("swap", 330, "0\n");
	put("swap.moved/330/done_rank0", "3\nhost=n1\n");
	mad_wait_scan(&j, &strict, 1, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 1) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "rank 0 failed with exit status 3 on n1") != NULL);
	mad_wait_job_free(&j);
}

TEST(empty_and_garbage_markers)
{
	struct mad_wait_job j;
	char err[512];

	job_init(&j, 102, run_dir);
	mkjob("102");
	put("102/expected", "2\n");
	put("102/done_rank0", "");
	put("102/done_rank1", "0\n");
	mad_wait_scan(&j, &strict, 0, err, sizeof(err));
	CHECK(j.rank[0].state == MAD_RANK_EMPTY && mad_wait_decide(&j, &strict, 0) == MAD_WAIT_PENDING);
	mad_wait_scan(&j, &strict, 4, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 4) == MAD_WAIT_PENDING);
	mad_wait_scan(&j, &strict, 6, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 6) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "still empty") != NULL);
	mad_wait_job_free(&j);

	job_init(&j, 103, run_dir);
	mkjob("103");
	put("103/expected", "1\n");
	put("103/done_rank0", "Traceback (most recent call last):\n");
	mad_wait_scan(&j, &strict, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 0) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "is not an exit status") != NULL);
	mad_wait_job_free(&j);
}

TEST(liveness_rules)
{
	struct mad_wait_job j;
	struct mad_queue_entry absent = { .id = 104, .listing = MAD_LISTING_ABSENT };
	struct mad_queue_entry running = { .id = 104, .listing = MAD_LISTING_ACTIVE, .state = "RUNNING" };
	struct mad_queue_entry ended = { .id = 104, .listing = MAD_LISTING_ENDED, .state = "CANCELLED" };

	/* never listed: pending through the startup grace, then gone */
	mad_wait_job_init(&j, 104, run_dir);
	j.wait_start = 0;
	mad_wait_observe(&j, &absent, &cfg, 0, 100);
	mad_wait_observe(&j, &absent, &cfg, 0, 200);
	CHECK(j.gone_polls == 0 && mad_wait_decide(&j, &cfg, 200) == MAD_WAIT_PENDING);
	mad_wait_observe(&j, &absent, &cfg, 0, 300);
	mad_wait_observe(&j, &absent, &cfg, 0, 305);
	mad_wait_observe(&j, &absent, &cfg, 0, 310);
	CHECK(mad_wait_decide(&j, &cfg, 310) == MAD_WAIT_PENDING); /* grace not over */
	CHECK(mad_wait_decide(&j, &cfg, 360) == MAD_WAIT_GONE);
	CHECK(strstr(j.reason, "never appeared") != NULL);
	mad_wait_job_free(&j);

	/* seen, then gone: one missing answer is not enough; a return resets */
	job_init(&j, 104, run_dir);
	mad_wait_observe(&j, &running, &cfg, 0, 1);
	mad_wait_observe(&j, &absent, &cfg, 0, 2);
	mad_wait_observe(&j, &absent, &cfg, 0, 7);
	mad_wait_observe(&j, &running, &cfg, 0, 12); /* slurmctld back after a restart */
	CHECK(j.gone_polls == 0 && mad_wait_decide(&j, &cfg, 500) == MAD_WAIT_PENDING);
	mad_wait_observe(&j, &ended, &cfg, 0, 20);
	mad_wait_observe(&j, &absent, &cfg, 0, 25);
	CHECK(mad_wait_decide(&j, &cfg, 100) == MAD_WAIT_PENDING); /* two polls only */
	mad_wait_observe(&j, &absent, &cfg, 0, 30);
	CHECK(mad_wait_decide(&j, &cfg, 79) == MAD_WAIT_PENDING);
	CHECK(mad_wait_decide(&j, &cfg, 80) == MAD_WAIT_GONE);
	CHECK(strstr(j.reason, "CANCELLED") != NULL);
	mad_wait_job_free(&j);

	/* listed only as ended, then dropped (spur 0.8's requeue cancels the
	 * job, and MinJobAge drops it): listed once is known, so its absence
	 * counts at once, not after the startup grace (the ended answer alone
	 * makes it listed: not job_init, which says so beforehand) */
	mad_wait_job_init(&j, 104, run_dir);
	j.wait_start = 0;
	mad_wait_observe(&j, &ended, &cfg, 0, 1);
	mad_wait_observe(&j, &absent, &cfg, 0, 2);
	mad_wait_observe(&j, &absent, &cfg, 0, 3);
	CHECK(j.gone_polls == 3);
	CHECK(mad_wait_decide(&j, &cfg, 60) == MAD_WAIT_PENDING); /* grace not over */
	CHECK(mad_wait_decide(&j, &cfg, 61) == MAD_WAIT_GONE);
	CHECK(strstr(j.reason, "left the queue (last state CANCELLED)") != NULL);
	mad_wait_job_free(&j);
}

TEST(requeued_job_folder)
{
	struct mad_wait_job j;
	char err[512];

	job_init(&j, 105, run_dir);
	mkjob("105");
	put("105/expected", "1\n");
	put("105/done_rank0", "143\n");
	mkjob("105.1");
	put("105.1/expected", "1\n");
	put("105.1/done_rank0", "0\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(j.restart == 1 && mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_OK);
	/* the first attempt is kept, read once more before moving on */
	CHECK(j.npast == 1 && j.past[0].restart == 0 && j.past[0].nrank == 1);
	CHECK(j.past[0].rank[0].state == MAD_RANK_FAILED && j.past[0].rank[0].status == 143);
	CHECK_STR(j.reason, "attempt 2: rank 0 exited 0");
	mad_wait_job_free(&j);
}

/* squeue's answer for job ID in STATE: the caller's, submitted at 5000,
 * the run shown started at STARTED (-1: N/A). */
static struct mad_queue_entry run_of(long id, const char *state, long started)
{
	struct mad_queue_entry e = listed(id, (long)getuid(), 5000);

	snprintf(e.state, sizeof(e.state), "%s", state);
	e.started = started;
	return e;
}

/* spur re-runs a requeued job under the same id, submit time and folder
 * (design.md §15): a file written before the start of the run squeue
 * shows is an earlier run's, within the clock slack. */
TEST(rerun_a_marker_before_the_runs_start_is_an_earlier_runs)
{
	struct mad_wait_job j;
	struct mad_queue_entry e = run_of(320, "RUNNING", 6000);
	char err[512];

	mkjob("320");
	put("320/expected", "1\n");
	put("320/done_rank0", "1\nhost=n1\ntime=5500\n"); /* the first run's failure */
	job_init(&j, 320, run_dir);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	CHECK(j.attempt_from == 6000);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(j.nfailed == 0 && mad_wait_decide(&j, &strict, 1) == MAD_WAIT_PENDING);
	CHECK(strstr(j.ignored, "written at 5500, before this run of the job started (6000)") != NULL);
	/* the run's own marker, even 2 s (the clock slack) before its start */
	put("320/done_rank0", "0\nhost=n2\ntime=5998\n");
	mad_wait_scan(&j, &cfg, 2, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 2) == MAD_WAIT_OK);
	mad_wait_job_free(&j);
	/* a marker after the start is the run's: its failure decides */
	put("320/done_rank0", "1\nhost=n1\ntime=5500\n");
	e = run_of(320, "RUNNING", 5400);
	job_init(&j, 320, run_dir);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 1) == MAD_WAIT_FAILED);
	/* a later answer with no start (N/A) or an earlier one keeps the latest */
	e = run_of(320, "COMPLETED", -1);
	mad_wait_observe(&j, &e, &cfg, 0, 2);
	e = run_of(320, "COMPLETED", 5300);
	mad_wait_observe(&j, &e, &cfg, 0, 3);
	CHECK(j.attempt_from == 5400);
	mad_wait_job_free(&j);
}

/* What a run writes as it starts ('expected', the rendezvous record) is
 * read whatever the start squeue shows: a node's clock a few seconds
 * behind the controller's puts it before that start in every run. */
TEST(rerun_what_a_run_writes_as_it_starts_is_read_despite_clock_skew)
{
	struct mad_wait_job j;
	long now = (long)time(NULL);
	struct mad_queue_entry e = listed(322, (long)getuid(), now - 100);
	char err[512], marker[64];

	snprintf(e.state, sizeof(e.state), "%s", "RUNNING");
	e.started = now + 5; /* the controller's clock 5 s ahead of the file server's */
	mkjob("322");
	put("322/expected", "1\n");
	job_init(&j, 322, run_dir);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(j.expected == 1);
	snprintf(marker, sizeof(marker), "0\nhost=n1\ntime=%ld\n", now + 60);
	put("322/done_rank0", marker);
	mad_wait_scan(&j, &cfg, 2, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 2) == MAD_WAIT_OK);
	mad_wait_job_free(&j);
}

/* SLURM's %S is N/A or Unknown for a job waiting to run, or a forecast:
 * none of them is a run's start; a line without it is read as before. */
TEST(rerun_a_start_squeue_cannot_tell_changes_nothing)
{
	struct mad_queue_entry e[1] = { { .id = 321 } };
	const char *lines[] = {
		"321 RUNNING 10 someone 2026-01-01T00:00:00 N/A\n",
		"321 RUNNING 10 someone 2026-01-01T00:00:00 Unknown\n",
		"321 RUNNING 10 someone 2026-01-01T00:00:00 2026-13-01T00:00:00\n",
		"321 RUNNING 10 someone 2026-01-01T00:00:00\n",
		"321 PENDING 10 someone 2026-01-01T00:00:00 2026-01-01T05:00:00\n", /* a forecast */
		"321 REQUEUE_HOLD 10 someone 2026-01-01T00:00:00 2026-01-01T05:00:00\n",
	};
	struct mad_wait_job j;
	char err[512];

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		mad_queue_parse(lines[i], strlen(lines[i]), e, 1);
		CHECK(e[0].listing == MAD_LISTING_ACTIVE && e[0].submitted > 0);
		CHECK(e[0].started == -1);
	}
	{
		const char *ok = "321 RUNNING 10 u 2026-01-01T00:00:00 2026-01-01T00:00:09\n";

		mad_queue_parse(ok, strlen(ok), e, 1);
	}
	CHECK(e[0].started == e[0].submitted + 9);
	/* no start: the marker decides as before */
	mkjob("321");
	put("321/expected", "1\n");
	put("321/done_rank0", "0\nhost=n1\ntime=5500\n");
	job_init(&j, 321, run_dir);
	e[0] = run_of(321, "COMPLETED", -1);
	mad_wait_observe(&j, &e[0], &cfg, 0, 1);
	CHECK(j.attempt_from == -1);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_OK);
	mad_wait_job_free(&j);
}

/* A success in the first attempt's folder while squeue shows the job
 * waiting to run (again) is an earlier run's; SLURM's next attempt has a
 * folder of its own, whose markers decide as before. */
TEST(rerun_a_success_does_not_decide_while_the_job_waits_to_run)
{
	const char *states[] = { "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED" };
	struct mad_wait_job j;
	struct mad_queue_entry e;
	char err[512];

	mkjob("322");
	put("322/expected", "1\n");
	put("322/done_rank0", "0\nhost=n1\ntime=5500\n");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		job_init(&j, 322, run_dir);
		e = run_of(322, states[i], -1);
		mad_wait_observe(&j, &e, &cfg, 0, 1);
		mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
		CHECK(j.ndone == 1 && mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_PENDING);
		/* it runs again: the marker is the earlier run's */
		e = run_of(322, "RUNNING", 6000);
		mad_wait_observe(&j, &e, &cfg, 0, 2);
		mad_wait_scan(&j, &cfg, 2, err, sizeof(err));
		CHECK(j.ndone == 0 && mad_wait_decide(&j, &cfg, 2) == MAD_WAIT_PENDING);
		mad_wait_job_free(&j);
	}
	/* SLURM: the requeued attempt's own folder decides, whatever squeue said last */
	mkjob("322.1");
	put("322.1/expected", "1\n");
	put("322.1/done_rank0", "0\nhost=n2\ntime=7000\n");
	job_init(&j, 322, run_dir);
	e = run_of(322, "PENDING", -1);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(j.restart == 1 && mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_OK);
	mad_wait_job_free(&j);
	/* SLURM moves the submit time on a requeue: its run's start is not
	 * one for the first folder (its next attempt has a folder of its own) */
	job_init(&j, 323, run_dir);
	e = run_of(323, "RUNNING", 5100);
	mad_wait_observe(&j, &e, &cfg, 0, 1);
	e = run_of(323, "RUNNING", 7100);
	e.submitted = 7000;
	mad_wait_observe(&j, &e, &cfg, 0, 2);
	CHECK(j.submitted == 5000 && j.attempt_from == 5100);
	mad_wait_job_free(&j);
}

/* A job submitted just before the wait: squeue's first answer shows it
 * pending, then it runs and ends between two answers.  Its markers are
 * held only until squeue is asked again, at once, not an interval later
 * (bench/wait: a 2 s job was decided 25 s after its end). */
TEST(policy_a_success_held_while_pending_asks_squeue_at_once)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	char err[512];

	mkjob("324");
	job_init(&j, 324, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "324 PENDING 10\n", T0);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 0.1).action == MAD_WAIT_SLEEP);
	put("324/expected", "1\n");
	put("324/done_rank0", "0\nhost=n1\n");
	mad_wait_scan(&j, &cfg, T0 + 3, err, sizeof(err));
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 3).action == MAD_WAIT_ASK);
	/* squeue still says pending (spur lists late): asked again within 5 s */
	answer(&t, &j, 1, &cfg, "324 PENDING 10\n", T0 + 3);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 3.1).action == MAD_WAIT_SLEEP);
	CHECK(t.next_queue <= T0 + 3 + 5);
	answer(&t, &j, 1, &cfg, "324 COMPLETED 10\n", T0 + 8);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 8).code == MAD_WAIT_OK);
	mad_wait_job_free(&j);
}

/* The answer that first shows the job running gives its start (%S), which
 * forgets what was read before it: a success held while squeue showed the
 * job pending is read again at once, not at the next period (a second
 * later: bench/wait's jobs that ran between two answers). */
TEST(policy_the_answer_that_shows_the_start_reads_the_folder_at_once)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_queue_entry e;
	char err[512];

	mkjob("325");
	put("325/expected", "1\n");
	put("325/done_rank0", "0\nhost=n1\ntime=5500\n");
	job_init(&j, 325, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	e = run_of(325, "PENDING", -1);
	mad_wait_answered(&t, &j, 1, &e, &cfg, T0, 0.5);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 3).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0 + 3, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0 + 3);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 3).action == MAD_WAIT_ASK && j.held_success);
	e = run_of(325, "RUNNING", 5400);
	mad_wait_answered(&t, &j, 1, &e, &cfg, T0 + 3.05, 0.5);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 3.05).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0 + 3.06, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0 + 3.06);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 3.06).code == MAD_WAIT_OK);
	mad_wait_job_free(&j);
}

/* squeue showed the job pending and the folder held no marker then: the
 * markers that come later are the run it was waiting for, and decide at
 * once, without waiting for a controller that may answer seconds late;
 * markers already there then (an earlier run's, spur #629) are held. */
TEST(policy_markers_that_came_after_a_pending_answer_decide_at_once)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_queue_entry e;
	char err[512];

	job_init(&j, 326, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	e = run_of(326, "PENDING", -1);
	mad_wait_answered(&t, &j, 1, &e, &cfg, T0, 0.5);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0);
	CHECK(j.empty_after_wait == 1 && next_at(&t, &j, 1, &cfg, T0).action == MAD_WAIT_SLEEP);
	mkjob("326");
	put("326/expected", "1\n");
	put("326/done_rank0", "0\nhost=n1\ntime=5500\n");
	mad_wait_woken(&t);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 3).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0 + 3, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0 + 3);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 3).code == MAD_WAIT_OK && t.squeue_calls == 1);
	mad_wait_job_free(&j);
	/* shown pending again (requeued): its markers are held until asked */
	job_init(&j, 326, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	e = run_of(326, "RUNNING", 5400);
	mad_wait_answered(&t, &j, 1, &e, &cfg, T0, 0.5);
	e = run_of(326, "PENDING", -1);
	mad_wait_answered(&t, &j, 1, &e, &cfg, T0 + 1, 0.5);
	mad_wait_scan(&j, &cfg, T0 + 1, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0 + 1);
	CHECK(j.empty_after_wait == 0 && mad_wait_next(&t, &j, 1, &cfg, T0 + 1).action == MAD_WAIT_ASK);
	mad_wait_job_free(&j);
}

/* An answer for job J alone. */
static void answer1(struct mad_wait_job *j, const struct mad_wait_cfg *c, const char *text, double now)
{
	struct mad_queue_entry e = { .id = j->id };

	mad_queue_parse(text, strlen(text), &e, 1);
	mad_wait_observe(j, &e, c, 0, now);
}

TEST(requeue_a_failed_attempt_the_scheduler_reruns_does_not_end_the_wait)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_step s;
	char err[512];

	job_init(&j, 106, run_dir);
	mkjob("106");
	put("106/expected", "1\n");
	put("106/done_rank0", "143\nhost=n1\n");
	mad_wait_timing_init(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0);
	/* the failure is asked about at once, long before the first guard call */
	s = mad_wait_next(&t, &j, 1, &cfg, T0 + 0.1);
	CHECK(s.action == MAD_WAIT_ASK && j.rerun == MAD_RERUN_ASK && j.verdict == MAD_WAIT_PENDING);
	/* completing: a requeued job looks so first; asked again within 5 s */
	answer(&t, &j, 1, &cfg, "106 COMPLETING UNLIMITED\n", T0 + 0.2);
	CHECK(j.rerun == MAD_RERUN_UNSURE && t.next_queue == T0 + 5.2);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 1).action == MAD_WAIT_SLEEP);
	answer(&t, &j, 1, &cfg, "106 PENDING UNLIMITED\n", T0 + 5.2);
	CHECK(j.rerun == MAD_RERUN_YES);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 1).action == MAD_WAIT_SLEEP);
	/* running again, the new folder not there yet: still held */
	answer1(&j, &cfg, "106 RUNNING UNLIMITED\n", T0 + 2);
	CHECK(j.rerun == MAD_RERUN_YES && mad_wait_decide(&j, &cfg, T0 + 2) == MAD_WAIT_PENDING);
	/* completing, then running at the next answer (the pending spell fell
	 * between the two): requeued too */
	{
		struct mad_wait_job q;

		mad_wait_job_init(&q, 1060, run_dir);
		q.nfailed = 1;
		q.rerun = MAD_RERUN_ASK;
		answer1(&q, &cfg, "1060 COMPLETING UNLIMITED\n", T0);
		CHECK(q.rerun == MAD_RERUN_UNSURE);
		answer1(&q, &cfg, "1060 RUNNING UNLIMITED\n", T0 + 5);
		CHECK(q.rerun == MAD_RERUN_YES && mad_wait_decide(&q, &cfg, T0 + 5) == MAD_WAIT_PENDING);
		mad_wait_job_free(&q);
	}
	mkjob("106.1");
	put("106.1/expected", "1\n");
	mad_wait_scan(&j, &cfg, T0 + 3, err, sizeof(err));
	CHECK(j.restart == 1 && j.rerun == MAD_RERUN_NONE && j.nfailed == 0);
	CHECK(mad_wait_decide(&j, &cfg, T0 + 3) == MAD_WAIT_PENDING);
	put("106.1/done_rank0", "0\nhost=n2\n");
	mad_wait_scan(&j, &cfg, T0 + 4, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, T0 + 4) == MAD_WAIT_OK);
	CHECK_STR(j.reason, "attempt 2: rank 0 exited 0");
	CHECK(j.npast == 1 && j.past[0].rank[0].status == 143);
	mad_wait_job_free(&j);
}

TEST(requeue_an_attempt_without_a_folder_is_skipped)
{
	struct mad_wait_job j;
	char err[512];

	/* attempt 2 never started its script (a failed prolog): no 140.1 */
	job_init(&j, 140, run_dir);
	mkjob("140");
	put("140/expected", "1\n");
	put("140/done_rank0", "143\nhost=n1\n");
	mkjob("140.2");
	put("140.2/expected", "1\n");
	put("140.2/done_rank0", "0\nhost=n2\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(j.restart == 2 && j.npast == 1 && j.ndone == 1);
	CHECK(mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_OK);
	CHECK_STR(j.reason, "attempt 3: rank 0 exited 0");
	mad_wait_job_free(&j);
}

TEST(requeue_the_final_attempt_decides_a_failure)
{
	struct mad_wait_job j;
	char err[512];

	job_init(&j, 107, run_dir);
	mkjob("107");
	put("107/expected", "1\n");
	put("107/done_rank0", "143\n");
	mkjob("107.1");
	put("107.1/expected", "1\n");
	put("107.1/done_rank0", "1\nhost=n2\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_PENDING && j.rerun == MAD_RERUN_ASK);
	answer1(&j, &cfg, "107 FAILED UNLIMITED\n", 1);
	CHECK(j.rerun == MAD_RERUN_NO && mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_FAILED);
	CHECK_STR(j.reason, "attempt 2: rank 0 failed with exit status 1 on n2");
	mad_wait_job_free(&j);
}

/* A requeued job whose second attempt is released, runs and ends between
 * two answers: squeue goes COMPLETING (the first attempt's end) to FAILED
 * or COMPLETED (the second's).  The answer that ends the job comes after
 * the last scan: the folders are read again before anything is decided,
 * and the second attempt decides. */
TEST(requeue_an_attempt_that_ran_between_two_answers_decides)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_step s;
	char err[512];

	job_init(&j, 150, run_dir);
	mkjob("150");
	put("150/expected", "1\n");
	put("150/done_rank0", "143\nhost=n1\n");
	mad_wait_timing_init(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 0.1).action == MAD_WAIT_ASK);
	answer(&t, &j, 1, &cfg, "150 COMPLETING UNLIMITED\n", T0 + 0.2);
	CHECK(j.rerun == MAD_RERUN_UNSURE);
	/* the folders are read (nothing new), and the next read is due at
	 * T0 + 2.9; the second attempt runs and fails before the next answer */
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 1.9).action == MAD_WAIT_SLEEP);
	mad_wait_scan(&j, &cfg, T0 + 1.9, err, sizeof(err));
	mkjob("150.1");
	put("150.1/expected", "1\n");
	put("150.1/done_rank0", "5\nhost=n2\n");
	answer(&t, &j, 1, &cfg, "150 FAILED UNLIMITED\n", T0 + 2);
	s = mad_wait_next(&t, &j, 1, &cfg, T0 + 2);
	CHECK(s.action == MAD_WAIT_SCAN && j.verdict == MAD_WAIT_PENDING);
	mad_wait_scan(&j, &cfg, T0 + 2, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0 + 2);
	CHECK(j.restart == 1);
	/* attempt 2's failure is asked about once, then decides */
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 2).action == MAD_WAIT_ASK);
	answer(&t, &j, 1, &cfg, "150 FAILED UNLIMITED\n", T0 + 2.1);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 2.1).code == MAD_WAIT_FAILED);
	CHECK_STR(j.reason, "attempt 2: rank 0 failed with exit status 5 on n2");
	mad_wait_job_free(&j);
	/* the same when the second attempt succeeds: COMPLETING, then COMPLETED */
	job_init(&j, 151, run_dir);
	mkjob("151");
	put("151/expected", "1\n");
	put("151/done_rank0", "143\nhost=n1\n");
	mad_wait_timing_init(&t, &cfg, T0);
	mad_wait_scan(&j, &cfg, T0, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 0.1).action == MAD_WAIT_ASK);
	answer(&t, &j, 1, &cfg, "151 COMPLETING UNLIMITED\n", T0 + 0.2);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 1.9).action == MAD_WAIT_SLEEP);
	mad_wait_scan(&j, &cfg, T0 + 1.9, err, sizeof(err));
	mkjob("151.1");
	put("151.1/expected", "1\n");
	put("151.1/done_rank0", "0\nhost=n2\n");
	answer(&t, &j, 1, &cfg, "151 COMPLETED UNLIMITED\n", T0 + 2);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 2).action == MAD_WAIT_SCAN);
	mad_wait_scan(&j, &cfg, T0 + 2, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0 + 2);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 2).code == MAD_WAIT_OK);
	CHECK_STR(j.reason, "attempt 2: rank 0 exited 0");
	mad_wait_job_free(&j);
}

TEST(requeue_a_failure_stands_when_the_job_is_not_rerun)
{
	struct mad_wait_job j;
	struct mad_wait_timing t;
	char err[512];
	/* each answer (then a second one) makes the failure the verdict */
	const char *answers[][2] = {
		{ "108 RUNNING 10\n", NULL }, /* running on (spur's other nodes) */
		{ "108 FAILED 10\n", NULL },
		{ "", NULL },                   /* no longer listed */
		{ "108_0 PENDING 10\n", NULL }, /* an array: its tasks requeue one by one */
		{ "108 COMPLETING 10\n", "108 FAILED 10\n" },
		{ "108 REQUEUED 10\n", "108 CANCELLED 10\n" }, /* cancelled before it ran again */
	};

	mkjob("108");
	put("108/expected", "1\n");
	put("108/done_rank0", "2\n");
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		job_init(&j, 108, run_dir);
		mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
		CHECK(mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_PENDING);
		answer1(&j, &cfg, answers[i][0], 1);
		if (answers[i][1]) {
			CHECK(mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_PENDING);
			answer1(&j, &cfg, answers[i][1], 2);
		}
		CHECK(mad_wait_decide(&j, &cfg, 2) == MAD_WAIT_FAILED);
		mad_wait_job_free(&j);
	}
	/* --no-requeue: at once, nothing asked */
	job_init(&j, 108, run_dir);
	mad_wait_scan(&j, &strict, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &strict, 0) == MAD_WAIT_FAILED && j.rerun == MAD_RERUN_NONE);
	mad_wait_job_free(&j);
	/* squeue cannot be asked: the marker decides */
	job_init(&j, 108, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	mad_wait_scan(&j, &cfg, T0, err, sizeof(err));
	mad_wait_scanned(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_ASK);
	mad_wait_unanswered(&t, &j, 1, &cfg, T0, "no controller");
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).code == MAD_WAIT_FAILED);
	mad_wait_job_free(&j);
}

TEST(requeue_forever_hits_the_timeout)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_cfg c = cfg;
	struct mad_wait_step s;
	char err[512];

	c.timeout = 100;
	job_init(&j, 109, run_dir);
	mkjob("109");
	put("109/expected", "1\n");
	put("109/done_rank0", "143\n");
	mad_wait_timing_init(&t, &c, T0);
	mad_wait_scan(&j, &c, T0, err, sizeof(err));
	mad_wait_scanned(&t, &c, T0);
	mad_wait_next(&t, &j, 1, &c, T0);
	answer(&t, &j, 1, &c, "109 PENDING 10\n", T0 + 1);
	s = next_at(&t, &j, 1, &c, T0 + 100);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_TIMEOUT);
	CHECK(strstr(j.reason, "still being re-run after a failed marker (state PENDING)") != NULL);
	mad_wait_job_free(&j);
}

TEST(step_tasks_name_the_failed_node_and_never_change_the_verdict)
{
	struct mad_wait_job j;
	char err[512], name[64];

	mad_step_marker_name(name, sizeof(name), 12, 1023);
	CHECK_STR(name, "step12_rank1023");
	job_init(&j, 110, run_dir);
	mkjob("110");
	put("110/expected", "1\n");
	for (int r = 0; r < 8; r++) {
		char path[64];

		snprintf(path, sizeof(path), "110/step0_rank%d", r);
		put(path, r == 5 ? "3\nhost=n3\n" : r == 6 ? "139\nhost=n4\ntime=9\n" : "0\n");
	}
	put("110/step1_rank0", "");     /* mid-write */
	put("110/step01_rank0", "1\n"); /* not a marker name */
	put("110/step0_rank", "1\n");
	put("110/step_rank1", "1\n");
	put("110/step0_rank07", "1\n");
	CHECK(mad_wait_scan(&j, &cfg, 0, err, sizeof(err)) == 0);
	CHECK(j.ntask == 9 && j.ntask_failed == 2);
	CHECK(j.task[0].step == 0 && j.task[0].task == 0 && j.task[8].step == 1);
	CHECK(j.task[6].status == 139 && j.task[6].time == 9);
	CHECK_STR(j.task[5].host, "n3");
	CHECK(mad_wait_decide(&j, &cfg, 0) == MAD_WAIT_PENDING);
	put("110/done_rank0", "0\n");
	put("110/step1_rank0", "0\n");
	CHECK(mad_wait_scan(&j, &cfg, 1, err, sizeof(err)) == 1);
	CHECK(j.task[8].state == MAD_RANK_DONE && j.ntask == 9);
	CHECK(mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_OK);
	CHECK_STR(j.reason, "rank 0 exited 0; step 0 task 5 on n3 exited 3; "
			    "step 0 task 6 on n4 exited 139 (signal 11, Segmentation fault)");
	mad_wait_job_free(&j);
}

TEST(policy_a_requeued_job_gets_its_time_limit_again)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;

	job_init(&j, 111, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "111 RUNNING 10\n", T0 + 10); /* its clock: from here */
	CHECK(t.deadline == T0 + 10 + 600 + 600 + 60);
	answer(&t, &j, 1, &cfg, "111 PENDING 10\n", T0 + 500); /* requeued */
	CHECK(t.deadline == T0 + 500 + 600 + 600 + 60);
	answer(&t, &j, 1, &cfg, "111 RUNNING 10\n", T0 + 520); /* from its first running answer */
	CHECK(t.deadline == T0 + 520 + 600 + 600 + 60);
	answer(&t, &j, 1, &cfg, "111 SUSPENDED 10\n", T0 + 700); /* its clock stops */
	CHECK(t.deadline == T0 + 700 + 600 + 600 + 60);
	answer(&t, &j, 1, &cfg, "111 PENDING 10\n", T0 + 86000); /* requeued late */
	CHECK(t.deadline == T0 + 86400); /* its limit again, but never past the day */
	mad_wait_job_free(&j);
}

TEST(policy_reads_markers_each_period_and_at_once_when_woken)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_cfg fast = cfg;

	job_init(&j, 200, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	t.next_queue = T0 + 100; /* squeue is another rule's */
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_SCAN);
	mad_wait_scanned(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 0.5).action == MAD_WAIT_SLEEP);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 0.5).at == T0 + 1);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 1).action == MAD_WAIT_SCAN);
	mad_wait_scanned(&t, &cfg, T0 + 1);
	mad_wait_woken(&t);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0 + 1.1).action == MAD_WAIT_SCAN);
	/* --follow reads four times a second */
	fast.scan_period = 0.25;
	mad_wait_scanned(&t, &fast, T0 + 2);
	CHECK(mad_wait_next(&t, &j, 1, &fast, T0 + 2).at == T0 + 2.25);
	mad_wait_job_free(&j);
}

TEST(policy_first_squeue_at_once)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;

	/* it says whose markers count and since when: none decides before */
	mad_wait_job_init(&j, 201, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_ASK); /* before a read */
	CHECK(!t.answered);
	mad_wait_unanswered(&t, &j, 1, &cfg, T0, "no controller");
	CHECK(mad_wait_next(&t, &j, 1, &cfg, T0).action == MAD_WAIT_SCAN);
	mad_wait_job_free(&j);
}

TEST(policy_guard_slows_down_x1_5_up_to_4_intervals_with_jitter)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	const double want[] = { 30, 45, 67.5, 101.25, 120, 120 };
	double now = T0 + 10;

	job_init(&j, 202, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		answer(&t, &j, 1, &cfg, "202 RUNNING UNLIMITED\n", now);
		CHECK(t.next_queue - now > want[i] - 1e-9 && t.next_queue - now < want[i] + 1e-9);
		now = t.next_queue;
	}
	/* RANDOM 0 and 1: 10% either side */
	mad_wait_timing_init(&t, &cfg, T0);
	mad_wait_answered(&t, &j, 1,
			  &(struct mad_queue_entry){ .id = 202, .listing = MAD_LISTING_ACTIVE },
			  &cfg, T0, 0);
	CHECK(t.next_queue - T0 > 27 - 1e-9 && t.next_queue - T0 < 27 + 1e-9);
	mad_wait_timing_init(&t, &cfg, T0);
	mad_wait_answered(&t, &j, 1,
			  &(struct mad_queue_entry){ .id = 202, .listing = MAD_LISTING_ACTIVE },
			  &cfg, T0, 1);
	CHECK(t.next_queue - T0 > 33 - 1e-9 && t.next_queue - T0 < 33 + 1e-9);
	CHECK(t.squeue_calls == 1 && t.answered);
	mad_wait_job_free(&j);
}

TEST(policy_vanished_job_is_reasked_within_5s_until_confirmed)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_step s;
	double now = T0 + 10;

	job_init(&j, 203, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "203 RUNNING 10\n", now);
	answer(&t, &j, 1, &cfg, "", now += 30);
	CHECK(j.gone_polls == 1 && t.next_queue == now + 5);
	answer(&t, &j, 1, &cfg, "", now += 5);
	CHECK(t.next_queue == now + 5);
	answer(&t, &j, 1, &cfg, "", now += 5);
	CHECK(j.gone_polls == 3 && t.next_queue > now + 5); /* confirmed: back to the guard */
	/* gone for the grace (60 s since the first "gone"): exit 2 */
	s = next_at(&t, &j, 1, &cfg, now - 10 + 59);
	CHECK(s.action != MAD_WAIT_END);
	s = next_at(&t, &j, 1, &cfg, now - 10 + 60);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_GONE);
	mad_wait_job_free(&j);
}

TEST(policy_failing_squeue_backs_off_within_the_budget_then_exit_3)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_cfg c = cfg;
	struct mad_wait_step s;

	c.unknown_budget = 20;
	c.interval = 6;
	job_init(&j, 204, run_dir);
	mad_wait_timing_init(&t, &c, T0);
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 6, "no controller") == 0);
	CHECK(t.next_queue == T0 + 8); /* 2 s */
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 8, "no controller") == 0);
	CHECK(t.next_queue == T0 + 12); /* 4 s */
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 12, "no controller") == 0);
	CHECK(t.next_queue == T0 + 18); /* 8 s, capped at the 6 s interval */
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 24, "no controller") == 0);
	CHECK(t.next_queue == T0 + 26); /* never past the budget's end */
	/* an answer resets the run and the backoff */
	answer(&t, &j, 1, &c, "204 RUNNING 10\n", T0 + 26);
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 40, "no controller") == 0);
	CHECK(t.next_queue == T0 + 42);
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 59, "no controller") == 0);
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 60, "no controller") == 1);
	CHECK(strstr(t.why, "could not be asked for 20 s: no controller") != NULL);
	CHECK_STR(j.reason, t.why);
	s = mad_wait_next(&t, &j, 1, &c, T0 + 60);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_UNKNOWN);
	CHECK(t.squeue_calls == 8);
	mad_wait_job_free(&j);
	/* the reason names what was passed over, as a verdict's does */
	job_init(&j, 205, run_dir);
	snprintf(j.ignored, sizeof(j.ignored), "ignored done_rank0 in x: before this wait began");
	mad_wait_timing_init(&t, &c, T0);
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 6, "no controller") == 0);
	CHECK(mad_wait_unanswered(&t, &j, 1, &c, T0 + 26, "no controller") == 1);
	CHECK(strstr(j.reason, "no controller; ignored done_rank0 in x: before this wait began") !=
	      NULL);
	mad_wait_job_free(&j);
}

TEST(policy_deadline_from_timeout_or_time_limits)
{
	struct mad_wait_timing t;
	struct mad_wait_job j[2];
	struct mad_wait_cfg c = cfg;
	struct mad_wait_step s;

	/* --timeout: exit 124 at it, naming the missing ranks */
	c.timeout = 50;
	mad_wait_job_init(&j[0], 205, run_dir);
	mkjob("205");
	put("205/expected", "3\n");
	put("205/done_rank1", "0\n");
	CHECK(mad_wait_scan(&j[0], &c, T0, NULL, 0) == 1);
	mad_wait_timing_init(&t, &c, T0);
	CHECK(t.deadline == T0 + 50);
	answer(&t, j, 1, &c, "205 RUNNING 1\n", T0 + 10); /* a given timeout stays */
	CHECK(t.deadline == T0 + 50);
	s = next_at(&t, j, 1, &c, T0 + 50);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_TIMEOUT &&
	      j[0].verdict == MAD_WAIT_TIMEOUT);
	CHECK_STR(j[0].reason, "timed out after 50 s with ranks missing: 0,2");
	mad_wait_job_free(&j[0]);

	/* no --timeout: a day, until the limits say less */
	mad_wait_job_init(&j[0], 206, run_dir);
	mad_wait_job_init(&j[1], 207, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	CHECK(t.deadline == T0 + 86400);
	answer(&t, j, 2, &cfg, "206 RUNNING 10\n207 RUNNING UNLIMITED\n", T0 + 10);
	CHECK(t.deadline == T0 + 86400); /* one unlimited job keeps the day */
	mad_wait_job_free(&j[1]);
	mad_wait_job_init(&j[1], 207, run_dir);
	answer(&t, j, 2, &cfg, "206 RUNNING 10\n207 PENDING 20\n", T0 + 100);
	/* running: from the start; pending: its clock starts now */
	CHECK(t.deadline == T0 + 100 + 1200 + 600 + 60);
	mad_wait_job_free(&j[0]);
	mad_wait_job_free(&j[1]);
	mad_wait_job_init(&j[0], 208, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, j, 1, &cfg, "208 RUNNING 0:05\n", T0 + 1);
	CHECK(t.deadline == T0 + 1 + 605 + 60); /* from its first running answer */
	mad_wait_job_free(&j[0]);
}

/* A job squeue shows pending for ever, without --timeout: every answer
 * restarts its clock, yet the wait ends at the default day from its start. */
TEST(policy_a_job_pending_for_ever_ends_within_a_day)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_step s = { MAD_WAIT_SLEEP, 0, MAD_WAIT_PENDING };
	double now = T0;
	long asked = 0;

	mad_wait_job_init(&j, 209, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	/* at most 30 days of the fake clock, in case the wait never ends */
	while (now <= T0 + 30 * 86400.0) {
		s = next_at(&t, &j, 1, &cfg, now);
		if (s.action == MAD_WAIT_END)
			break;
		if (s.action == MAD_WAIT_ASK) {
			answer(&t, &j, 1, &cfg, "209 PENDING 10\n", now);
			asked++;
		} else {
			now = s.at > now ? s.at : now + 1;
		}
	}
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_TIMEOUT);
	CHECK(now <= T0 + 86400);
	CHECK(t.deadline <= T0 + 86400);
	CHECK(asked > 1);
	CHECK(j.verdict == MAD_WAIT_TIMEOUT);
	CHECK(strstr(j.reason, "timed out after 86400 s") != NULL);
	mad_wait_job_free(&j);

	/* a time limit longer than the day does not lengthen it either */
	mad_wait_job_init(&j, 209, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "209 RUNNING 3-00:00:00\n", T0 + 10);
	CHECK(t.deadline == T0 + 86400);
	mad_wait_job_free(&j);
}

TEST(policy_one_squeue_for_every_undecided_job)
{
	struct mad_wait_job j[3];
	struct mad_queue_entry e[3];
	struct mad_wait_timing t;

	for (int i = 0; i < 3; i++)
		mad_wait_job_init(&j[i], 210 + i, run_dir);
	j[1].verdict = MAD_WAIT_OK;
	CHECK(mad_wait_queue_ids(j, 3, e) == 2);
	CHECK(e[0].id == 210 && e[1].id == 212);
	/* the answers go to the jobs asked about, not to the decided one */
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, j, 3, &cfg, "212 PENDING 10\n210 RUNNING 10\n211 RUNNING 10\n", T0 + 10);
	CHECK_STR(j[0].state, "RUNNING");
	CHECK(j[1].state[0] == '\0');
	CHECK_STR(j[2].state, "PENDING");
	CHECK(t.squeue_calls == 1);
	for (int i = 0; i < 3; i++)
		mad_wait_job_free(&j[i]);
}

/* Whose job it is (design.md §15): squeue's %u is the job's user, a
 * number its uid; rows that disagree (several clusters answering) end the
 * wait with exit 3, naming the job's two values, as the tool prints them
 * ("job 230: ..."); the other jobs are left undecided, with the reason. */
TEST(trust_whose_job_rows_that_disagree_end_the_wait_with_3)
{
	struct mad_wait_job j[2];
	struct mad_wait_timing t;
	struct mad_wait_step s;

	/* a numeric %u is a uid: the job's user, not the caller's */
	mad_wait_job_init(&j[0], 230, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, j, 1, &cfg, "230 RUNNING 10 4321 2000-01-01T00:00:00\n", T0);
	CHECK(j[0].uid == 4321 && j[0].verdict == MAD_WAIT_PENDING);
	CHECK(mad_wait_next(&t, j, 1, &cfg, T0).action != MAD_WAIT_END);
	mad_wait_job_free(&j[0]);
	/* two users for one job */
	for (int i = 0; i < 2; i++)
		mad_wait_job_init(&j[i], 230 + i, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, j, 2, &cfg,
	       "231 RUNNING 10 carol 2000-01-01T00:00:00\n"
	       "230 RUNNING 10 alice 2000-01-01T00:00:00\n"
	       "230 PENDING 10 bob 2000-01-01T00:00:00\n",
	       T0);
	s = mad_wait_next(&t, j, 2, &cfg, T0);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_UNKNOWN);
	CHECK(j[0].verdict == MAD_WAIT_UNKNOWN && j[0].uid == getuid());
	CHECK(strstr(j[0].reason,
		     "squeue lists it under two users, 'alice' and 'bob': several clusters answering (SLURM_CLUSTERS, -M)?") ==
	      j[0].reason);
	CHECK(j[1].verdict == MAD_WAIT_PENDING);
	CHECK_STR(j[1].reason, "not decided: squeue's answer for job 230 cannot be trusted");
	for (int i = 0; i < 2; i++)
		mad_wait_job_free(&j[i]);
	/* one id twice with two submit times; an array's tasks may differ
	 * (a requeued task's moved), the same task may not */
	mad_wait_job_init(&j[0], 232, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, j, 1, &cfg,
	       "232_0 RUNNING 10 alice 2000-01-01T00:00:00\n"
	       "232_1 RUNNING 10 alice 2000-01-01T00:05:00\n",
	       T0);
	CHECK(j[0].verdict == MAD_WAIT_PENDING);
	answer(&t, j, 1, &cfg,
	       "232_1 RUNNING 10 alice 2000-01-01T00:05:00\n"
	       "232_0 RUNNING 10 alice 2000-01-01T00:00:00\n"
	       "232_1 RUNNING 10 alice 2000-01-02T00:00:00\n",
	       T0 + 30);
	s = mad_wait_next(&t, j, 1, &cfg, T0 + 30);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_UNKNOWN);
	CHECK(strstr(j[0].reason,
		     "squeue lists 232_1 twice, submitted at 2000-01-01T00:05:00 and at 2000-01-02T00:00:00: several clusters") ==
	      j[0].reason);
	mad_wait_job_free(&j[0]);
}

TEST(policy_a_failure_ends_at_once_else_the_worst_code_when_all_decided)
{
	struct mad_wait_job j[3];
	struct mad_wait_timing t;
	struct mad_wait_step s;

	for (int i = 0; i < 3; i++)
		mad_wait_job_init(&j[i], 220 + i, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	t.next_queue = T0 + 100; /* squeue is another rule's */
	j[0].verdict = MAD_WAIT_GONE;
	s = next_at(&t, j, 3, &cfg, T0 + 1);
	CHECK(s.action == MAD_WAIT_SLEEP); /* two still pending */
	j[1].verdict = MAD_WAIT_FAILED;
	s = next_at(&t, j, 3, &cfg, T0 + 2);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_FAILED && j[2].verdict == MAD_WAIT_PENDING);
	for (int i = 0; i < 3; i++)
		j[i].verdict = i ? MAD_WAIT_OK : MAD_WAIT_GONE;
	mad_wait_timing_init(&t, &cfg, T0);
	s = next_at(&t, j, 3, &cfg, T0 + 1);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_GONE);
	/* an interruption: the undecided jobs get its reason */
	mad_wait_timing_init(&t, &cfg, T0);
	j[2].verdict = MAD_WAIT_PENDING;
	mad_wait_end(&t, j, 3, MAD_WAIT_INTERRUPTED, "interrupted by signal 2");
	s = mad_wait_next(&t, j, 3, &cfg, T0 + 1);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_INTERRUPTED);
	CHECK_STR(j[2].reason, "interrupted by signal 2");
	for (int i = 0; i < 3; i++)
		mad_wait_job_free(&j[i]);
}

TEST(ready_rank0s_marker_makes_the_job_ready)
{
	struct mad_wait_job j;
	char err[512];

	job_init(&j, 130, run_dir);
	mkjob("130");
	put("130/expected", "2\n");
	put("130/ready_rank1", "http://n2:1/\nhost=n2\n"); /* not rank 0's: not the job's */
	mad_wait_scan(&j, &ready_cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &ready_cfg, 0) == MAD_WAIT_PENDING);
	put("130/ready_rank0", "http://10.1.0.11:8000/\nrank=0\nhost=n1\njob=130\ntime=5\n");
	mad_wait_scan(&j, &ready_cfg, 1, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &ready_cfg, 1) == MAD_WAIT_OK);
	CHECK_STR(j.endpoint, "http://10.1.0.11:8000/");
	CHECK_STR(j.ready_host, "n1");
	CHECK_STR(j.reason, "ready: http://10.1.0.11:8000/ (rank 0 on n1)");
	mad_wait_job_free(&j);
	/* without --ready the same folder is only a job still running */
	job_init(&j, 130, run_dir);
	mad_wait_scan(&j, &cfg, 1, err, sizeof(err));
	CHECK(j.ready == 0 && mad_wait_decide(&j, &cfg, 1) == MAD_WAIT_PENDING);
	mad_wait_job_free(&j);
}

TEST(ready_a_job_that_ends_first_fails_at_once)
{
	struct mad_wait_job j;
	char err[512];

	/* a failed marker: the scheduler is asked, and completing is enough */
	job_init(&j, 131, run_dir);
	mkjob("131");
	put("131/expected", "1\n");
	put("131/done_rank0", "7\nhost=n1\n");
	mad_wait_scan(&j, &ready_cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &ready_cfg, 0) == MAD_WAIT_PENDING && j.rerun == MAD_RERUN_ASK);
	answer1(&j, &ready_cfg, "131 COMPLETING UNLIMITED\n", 0.1);
	CHECK(mad_wait_decide(&j, &ready_cfg, 0.1) == MAD_WAIT_FAILED);
	CHECK_STR(j.reason, "rank 0 failed with exit status 7 on n1, before it was ready");
	mad_wait_job_free(&j);
	/* a success before readiness is a failure too */
	job_init(&j, 132, run_dir);
	mkjob("132");
	put("132/expected", "1\n");
	put("132/done_rank0", "0\nhost=n1\n");
	mad_wait_scan(&j, &ready_cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &ready_cfg, 0) == MAD_WAIT_FAILED);
	CHECK_STR(j.reason, "rank 0 exited 0: the job ended before it was ready");
	mad_wait_job_free(&j);
	/* gone from the queue: no grace for markers */
	job_init(&j, 133, run_dir);
	answer1(&j, &ready_cfg, "133 RUNNING UNLIMITED\n", 0);
	for (int k = 1; k <= 3; k++)
		answer1(&j, &ready_cfg, "", k);
	CHECK(mad_wait_decide(&j, &ready_cfg, 3) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "ended before it was ready") != NULL);
	mad_wait_job_free(&j);
	/* a marker that is not one */
	job_init(&j, 134, run_dir);
	mkjob("134");
	put("134/ready_rank0", "has space\n");
	mad_wait_scan(&j, &ready_cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &ready_cfg, 0) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "rank 0's ready marker") != NULL);
	mad_wait_job_free(&j);
}

/* spur #803: a restarted spurd forgets the job and the controller lists it
 * RUNNING for hours; past its time limit and --overtime it is lost. */
TEST(lost_a_job_listed_running_past_its_limit_and_the_overtime)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_cfg c = cfg;
	struct mad_wait_step s;
	char err[512];

	/* the limits' deadline: asked once more there, then lost (2), not 124 */
	job_init(&j, 212, run_dir);
	mkjob("212");
	put("212/expected", "2\n");
	put("212/done_rank0", "0\n");
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "212 RUNNING 10\n", T0 + 10);
	mad_wait_scan(&j, &cfg, T0 + 10, err, sizeof(err));
	CHECK(t.deadline == T0 + 10 + 600 + 600 + 60);
	answer(&t, &j, 1, &cfg, "212 RUNNING 10\n", T0 + 1209); /* not yet: 599 s over */
	CHECK(mad_wait_decide(&j, &cfg, T0 + 1209) == MAD_WAIT_PENDING);
	s = next_at(&t, &j, 1, &cfg, T0 + 1270);
	CHECK(s.action == MAD_WAIT_ASK);
	answer(&t, &j, 1, &cfg, "212 RUNNING 10\n", T0 + 1270);
	s = next_at(&t, &j, 1, &cfg, T0 + 1270);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_GONE && j.verdict == MAD_WAIT_GONE);
	CHECK(strstr(j.reason,
		     "squeue still lists the job RUNNING 660 s past its time limit (600 s") != NULL);
	CHECK(strstr(j.reason, "ranks missing: 1: the scheduler has lost it") != NULL);
	CHECK(strstr(j.reason, "spur #803") != NULL);
	mad_wait_job_free(&j);

	/* the deadline's answer fails: a time-out, as before */
	job_init(&j, 212, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "212 RUNNING 10\n", T0 + 10);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 1270).action == MAD_WAIT_ASK);
	mad_wait_unanswered(&t, &j, 1, &cfg, T0 + 1270, "no controller");
	s = next_at(&t, &j, 1, &cfg, T0 + 1270);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_TIMEOUT);
	mad_wait_job_free(&j);

	/* a --timeout longer than that: lost at the first answer past it */
	c.timeout = 5000;
	job_init(&j, 212, run_dir);
	mad_wait_timing_init(&t, &c, T0);
	mad_wait_scan(&j, &c, T0, err, sizeof(err));
	answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 10);
	answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 1210);
	CHECK(mad_wait_decide(&j, &c, T0 + 1210) == MAD_WAIT_GONE);
	mad_wait_job_free(&j);

	/* its clock starts at the first answer that lists the run running:
	 * after a pending one (a requeue), a suspended or configuring one
	 * (SLURM stops or restarts it), never before the run started */
	for (int k = 0; k < 3; k++) {
		static const char *const held[] = { "PENDING", "SUSPENDED", "CONFIGURING" };
		char text[64];

		job_init(&j, 212, run_dir);
		mad_wait_timing_init(&t, &c, T0);
		answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 10);
		snprintf(text, sizeof(text), "212 %s 10\n", held[k]);
		answer(&t, &j, 1, &c, text, T0 + 1000);
		answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 1300);
		CHECK(mad_wait_decide(&j, &c, T0 + 1300) == MAD_WAIT_PENDING);
		answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 2499);
		CHECK(mad_wait_decide(&j, &c, T0 + 2499) == MAD_WAIT_PENDING);
		answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 2500);
		CHECK(mad_wait_decide(&j, &c, T0 + 2500) == MAD_WAIT_GONE);
		mad_wait_job_free(&j);
	}

	/* an array's rows mix its tasks: never lost */
	job_init(&j, 214, run_dir);
	mad_wait_timing_init(&t, &c, T0);
	answer(&t, &j, 1, &c, "214_1 RUNNING 10\n", T0 + 10);
	answer(&t, &j, 1, &c, "214_1 RUNNING 10\n", T0 + 3000);
	CHECK(j.array && mad_wait_decide(&j, &c, T0 + 3000) == MAD_WAIT_PENDING);
	mad_wait_job_free(&j);

	/* suspended, or unlimited: never lost */
	job_init(&j, 212, run_dir);
	mad_wait_timing_init(&t, &c, T0);
	answer(&t, &j, 1, &c, "212 SUSPENDED 10\n", T0 + 3000);
	CHECK(mad_wait_decide(&j, &c, T0 + 3000) == MAD_WAIT_PENDING);
	mad_wait_job_free(&j);
	job_init(&j, 212, run_dir);
	mad_wait_timing_init(&t, &c, T0);
	answer(&t, &j, 1, &c, "212 RUNNING UNLIMITED\n", T0 + 3000);
	CHECK(mad_wait_decide(&j, &c, T0 + 3000) == MAD_WAIT_PENDING);
	mad_wait_job_free(&j);

	/* every marker written: they decide, whatever squeue lists */
	job_init(&j, 212, run_dir);
	put("212/done_rank1", "0\n");
	mad_wait_timing_init(&t, &c, T0);
	mad_wait_scan(&j, &c, T0, err, sizeof(err));
	answer(&t, &j, 1, &c, "212 RUNNING 10\n", T0 + 4000);
	CHECK(mad_wait_decide(&j, &c, T0 + 4000) == MAD_WAIT_OK);
	mad_wait_job_free(&j);

	/* --ready: lost before it was ready is a failure */
	c.ready = 1;
	job_init(&j, 213, run_dir);
	mad_wait_timing_init(&t, &c, T0);
	answer(&t, &j, 1, &c, "213 RUNNING 1\n", T0 + 10);
	answer(&t, &j, 1, &c, "213 RUNNING 1\n", T0 + 700);
	CHECK(mad_wait_decide(&j, &c, T0 + 700) == MAD_WAIT_FAILED);
	CHECK(strstr(j.reason, "no marker: the scheduler has lost it") != NULL);
	CHECK(strstr(j.reason, ", before it was ready") != NULL);
	mad_wait_job_free(&j);
}

/* An answer that moves the limits' deadline (the job requeued) gets its
 * own last ask there. */
TEST(lost_the_limits_deadline_is_asked_at_again_when_it_moves)
{
	struct mad_wait_timing t;
	struct mad_wait_job j;
	struct mad_wait_step s;

	job_init(&j, 215, run_dir);
	mad_wait_timing_init(&t, &cfg, T0);
	answer(&t, &j, 1, &cfg, "215 RUNNING 10\n", T0 + 10);
	CHECK(t.deadline == T0 + 10 + 1260);
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 1270).action == MAD_WAIT_ASK);
	answer(&t, &j, 1, &cfg, "215 PENDING 10\n", T0 + 1270); /* requeued: a new deadline */
	CHECK(t.deadline == T0 + 1270 + 1260);
	answer(&t, &j, 1, &cfg, "215 RUNNING 10\n", T0 + 1300);
	CHECK(t.deadline == T0 + 1300 + 1260);
	t.next_queue = T0 + 9999; /* only the deadline asks */
	CHECK(next_at(&t, &j, 1, &cfg, T0 + 2560).action == MAD_WAIT_ASK);
	answer(&t, &j, 1, &cfg, "215 RUNNING 10\n", T0 + 2560);
	s = next_at(&t, &j, 1, &cfg, T0 + 2560);
	CHECK(s.action == MAD_WAIT_END && s.code == MAD_WAIT_GONE);
	mad_wait_job_free(&j);
}

/* spur runs a script that launches steps on its first node only (the
 * others hold): a node that never ran the script (no script_rank<N>) owes
 * no marker once the job is gone; one that ran it does. */
TEST(held_a_spur_node_that_never_ran_the_script_owes_no_marker)
{
	struct mad_wait_job j;
	struct mad_wait_cfg c = cfg;
	struct mad_queue_entry absent = { .id = 216, .listing = MAD_LISTING_ABSENT };
	char err[512];

	c.grace = 0;
	job_init(&j, 216, run_dir);
	mkjob("216");
	put("216/expected", "3\n");
	put("216/script_rank0", "host=n1\n");
	put("216/done_rank0", "0\n");
	mad_wait_scan(&j, &c, T0, err, sizeof(err));
	CHECK(j.rank[0].ran && !j.rank[1].ran);
	for (int i = 0; i < 3; i++)
		mad_wait_observe(&j, &absent, &c, T0, T0 + 400 + i);
	/* at once, without the grace: no held node writes late */
	CHECK(mad_wait_decide(&j, &cfg, T0 + 403) == MAD_WAIT_OK);
	CHECK(strstr(j.reason, "rank 0 exited 0; ranks 1-2 never ran the job script") != NULL);
	CHECK(strstr(j.reason, "spur runs a script that launches steps") != NULL);
	mad_wait_job_free(&j);

	/* node 2 ran it and left no marker: missing, exit 2 */
	job_init(&j, 216, run_dir);
	put("216/script_rank2", "host=n3\n");
	mad_wait_scan(&j, &c, T0, err, sizeof(err));
	for (int i = 0; i < 3; i++)
		mad_wait_observe(&j, &absent, &c, T0, T0 + 400 + i);
	CHECK(mad_wait_decide(&j, &c, T0 + 403) == MAD_WAIT_GONE);
	CHECK(strstr(j.reason, "ranks 1-2 wrote no marker") != NULL);
	mad_wait_job_free(&j);

	/* not when the count is --nnodes's, or it ended in a failed state; last
	 * seen pending is a short job that ran between two answers: held */
	for (int k = 0; k < 3; k++) {
		struct mad_wait_cfg ck = c;
		struct mad_queue_entry e = { .id = 216,
					     .listing = MAD_LISTING_ACTIVE,
					     .time_limit = -1,
					     .uid = -1,
					     .started = -1,
					     .submitted = -1 };

		ck.nnodes = k == 0 ? 3 : -1;
		job_init(&j, 216, run_dir);
		unlink_in("216/script_rank2");
		mad_wait_scan(&j, &ck, T0, err, sizeof(err));
		snprintf(e.state, sizeof(e.state), "%s", k == 1 ? "PENDING" : "RUNNING");
		if (k == 2) {
			e.listing = MAD_LISTING_ENDED;
			snprintf(e.state, sizeof(e.state), "NODE_FAIL");
		}
		mad_wait_observe(&j, &e, &ck, T0, T0 + 399);
		for (int i = 0; i < 3; i++)
			mad_wait_observe(&j, &absent, &ck, T0, T0 + 400 + i);
		CHECK(mad_wait_decide(&j, &ck, T0 + 403) == (k == 1 ? MAD_WAIT_OK : MAD_WAIT_GONE));
		mad_wait_job_free(&j);
	}

	/* rank 0 never said it ran the script (SLURM, an older writer): as before */
	job_init(&j, 217, run_dir);
	mkjob("217");
	put("217/expected", "2\n");
	put("217/done_rank0", "0\n");
	mad_wait_scan(&j, &c, T0, err, sizeof(err));
	for (int i = 0; i < 3; i++)
		mad_wait_observe(&j, &absent, &c, T0, T0 + 400 + i);
	CHECK(mad_wait_decide(&j, &c, T0 + 403) == MAD_WAIT_GONE);
	mad_wait_job_free(&j);
}

int main(void)
{
	unit_mkdtemp(run_dir);
	RUN(ready_rank0s_marker_makes_the_job_ready);
	RUN(ready_a_job_that_ends_first_fails_at_once);
	RUN(markers_decide);
	RUN(trust_no_marker_decides_before_squeue_lists_the_job);
	RUN(trust_the_count_written_at_the_start_counts_before_squeue_answers);
	RUN(trust_a_marker_older_than_the_job_is_an_earlier_jobs);
	RUN(trust_a_planted_folder_is_passed_over_and_named);
	RUN(trust_the_folder_found_is_read_whatever_its_path_names_later);
	RUN(empty_and_garbage_markers);
	RUN(liveness_rules);
	RUN(requeued_job_folder);
	RUN(requeue_a_failed_attempt_the_scheduler_reruns_does_not_end_the_wait);
	RUN(requeue_an_attempt_without_a_folder_is_skipped);
	RUN(requeue_the_final_attempt_decides_a_failure);
	RUN(requeue_an_attempt_that_ran_between_two_answers_decides);
	RUN(requeue_a_failure_stands_when_the_job_is_not_rerun);
	RUN(requeue_forever_hits_the_timeout);
	RUN(rerun_a_marker_before_the_runs_start_is_an_earlier_runs);
	RUN(rerun_what_a_run_writes_as_it_starts_is_read_despite_clock_skew);
	RUN(rerun_a_start_squeue_cannot_tell_changes_nothing);
	RUN(rerun_a_success_does_not_decide_while_the_job_waits_to_run);
	RUN(policy_a_success_held_while_pending_asks_squeue_at_once);
	RUN(policy_the_answer_that_shows_the_start_reads_the_folder_at_once);
	RUN(policy_markers_that_came_after_a_pending_answer_decide_at_once);
	RUN(step_tasks_name_the_failed_node_and_never_change_the_verdict);
	RUN(lost_a_job_listed_running_past_its_limit_and_the_overtime);
	RUN(lost_the_limits_deadline_is_asked_at_again_when_it_moves);
	RUN(held_a_spur_node_that_never_ran_the_script_owes_no_marker);
	RUN(policy_a_requeued_job_gets_its_time_limit_again);
	RUN(policy_reads_markers_each_period_and_at_once_when_woken);
	RUN(policy_first_squeue_at_once);
	RUN(policy_guard_slows_down_x1_5_up_to_4_intervals_with_jitter);
	RUN(policy_vanished_job_is_reasked_within_5s_until_confirmed);
	RUN(policy_failing_squeue_backs_off_within_the_budget_then_exit_3);
	RUN(policy_deadline_from_timeout_or_time_limits);
	RUN(policy_a_job_pending_for_ever_ends_within_a_day);
	RUN(policy_one_squeue_for_every_undecided_job);
	RUN(trust_whose_job_rows_that_disagree_end_the_wait_with_3);
	RUN(policy_a_failure_ends_at_once_else_the_worst_code_when_all_decided);
	return unit_done_in(run_dir);
}
