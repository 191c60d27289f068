/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/run: a job run again in its earlier run's folder
 * (spur #629) tells that run's files from its own.  The bound (pure); the
 * script record, kept by a later mad-env of the same run and replaced by
 * the next run's; and the rendezvous wait and the barrier in a folder that
 * holds the earlier run's record and started files, which must not count
 * until this run's rank 0 and ranks have written their own. */
#include "run.h"
#include "clock.h"
#include "job/barrier.h"
#include "marker.h"
#include "rendezvous.h"
#include "unit.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/test-run.XXXXXX";
static int dfd = -1; /* dir, opened */

__attribute__((format(printf, 2, 3))) static void put(const char *name, const char *fmt, ...)
{
	char path[512], text[256];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

TEST(the_bound_lies_between_the_two_starts)
{
	CHECK(mad_run_bound(-1, 1000) == -1);   /* a first run: no rule */
	CHECK(mad_run_bound(990, 1000) == 995); /* a short earlier run: half way */
	CHECK(mad_run_bound(100, 1000) == 1000 - MAD_RUN_SPREAD);
	CHECK(mad_run_bound(1000, 1000) == -1); /* clocks that disagree: no rule */
	CHECK(mad_run_bound(1005, 1000) == -1);
}

/* The key of the oldest ancestor of the caller that is the same user's,
 * from a child in a session and group of its own (as timeout and setsid
 * make one): the same as the parent's. */
TEST(the_key_names_the_job_script_whatever_group_a_child_is_in)
{
	char key[64], child[64] = "", small[2];
	long start, child_start = -1;
	int pipefd[2];
	pid_t pid;

	CHECK(mad_run_script(key, sizeof(key), &start) == 0);
	CHECK(strchr(key, '.') != NULL); /* "<pid>.<start>" from /proc */
	CHECK(start > 0 && start <= (long)time(NULL));
	CHECK(mad_run_script(small, sizeof(small), &child_start) == -1);
	child_start = -1;
	if (pipe(pipefd)) {
		CHECK(0);
		return;
	}
	pid = fork();
	if (pid == 0) {
		char out[128];
		long s;

		setsid();
		if (mad_run_script(out, 64, &s))
			_exit(1);
		snprintf(out + strlen(out), 64, " %ld", s);
		_exit(write(pipefd[1], out, strlen(out)) > 0 ? 0 : 1);
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], child, sizeof(child) - 1) > 0) {
		char *sp = strchr(child, ' ');

		if (sp) {
			*sp = '\0';
			child_start = atol(sp + 1);
		}
	}
	close(pipefd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	CHECK_STR(child, key);
	CHECK(child_start >= start - 1 && child_start <= start + 1); /* from /proc/uptime: to 1 s */
}

TEST(a_first_run_has_no_rule_and_a_later_call_keeps_its_record)
{
	struct mad_run run, again;
	char err[256], why[256];

	CHECK(mad_run_begin(dfd, dir, 1, getuid(), "n2", "77.5", (long)time(NULL), &run, err,
			    sizeof(err)) == 0);
	CHECK(run.previous == -1 && run.not_before == -1);
	CHECK(run.start >= (long)time(NULL) - 2);
	/* any file counts, however old */
	CHECK(mad_run_counts(&run, dfd, getuid(), 0, 5, why, sizeof(why)) == 1);
	CHECK(mad_run_counts(NULL, dfd, getuid(), 0, 5, why, sizeof(why)) == 1);
	/* the same run's second mad-env (same host, same key) finds its own */
	put("script_rank1", "host=n2\ntime=%ld\nkey=77.5\n", run.start - 4);
	CHECK(mad_run_begin(dfd, dir, 1, getuid(), "n2", "77.5", (long)time(NULL), &again, err,
			    sizeof(err)) == 0);
	CHECK(again.start == run.start - 4 && again.previous == -1);
}

TEST(a_rerun_counts_only_what_this_run_wrote)
{
	long now = (long)time(NULL), t = -1;
	struct mad_run run;
	char err[256], why[256], name[32];

	/* the earlier run, 100 s ago: rank 0 and rank 1 started, rank 0 published */
	put("script_rank0", "host=n1\ntime=%ld\nkey=10.1\n", now - 100);
	put("script_rank1", "host=n2\ntime=%ld\nkey=11.1\n", now - 100);
	/* this run's rank 1 (another process group) */
	CHECK(mad_run_begin(dfd, dir, 1, getuid(), "n2", "12.9", (long)time(NULL), &run, err,
			    sizeof(err)) == 0);
	CHECK(run.previous == now - 100);
	CHECK(run.not_before == run.start - MAD_RUN_SPREAD);
	mad_script_name(name, sizeof(name), 1);
	CHECK(mad_run_file_time(dfd, name, getuid(), &t) == 1 && t == run.start);
	/* rank 0 has not started this run: its old record is the earlier run's */
	CHECK(mad_run_counts(&run, dfd, getuid(), 0, now - 99, why, sizeof(why)) == 0);
	CHECK(strstr(why, "rank 0 has not started this run yet") != NULL);
	/* rank 0 started 2 s before this node: its record from then counts */
	put("script_rank0", "host=n1\ntime=%ld\nkey=13.4\nprevious=1\n", run.start - 2);
	CHECK(mad_run_counts(&run, dfd, getuid(), 0, run.start - 2, why, sizeof(why)) == 1);
	/* a file of rank 0 written before it started this run does not */
	CHECK(mad_run_counts(&run, dfd, getuid(), 0, now - 99, why, sizeof(why)) == 0);
	CHECK(strstr(why, "before rank 0 started this run") != NULL);
	CHECK(mad_run_counts(&run, dfd, getuid(), 0, -1, why, sizeof(why)) == 0);
	/* a rank with no script record at all has not started */
	CHECK(mad_run_counts(&run, dfd, getuid(), 3, run.start, why, sizeof(why)) == 0);
	CHECK(strstr(why, "script_rank3 is not there") != NULL);
}

TEST(the_rendezvous_waits_for_this_runs_record)
{
	long now = (long)time(NULL);
	struct mad_run run;
	struct mad_rdzv r = { .addr = "10.0.0.1", .port = 29400, .host = "n1", .job_id = 42 };
	char err[1024];
	double start;

	/* the earlier run's rank 0 and its record (100 s old) */
	put("script_rank0", "host=n1\ntime=%ld\nkey=10.1\n", now - 100);
	put("rendezvous",
	    "addr=10.0.0.9\nport=29400\nhost=old\njob=42\nnnodes=2\ntasks_per_node=1\ntime=%ld\n",
	    now - 100);
	put("script_rank1", "host=n2\ntime=%ld\nkey=11.1\n", now - 100);
	CHECK(mad_run_begin(dfd, dir, 1, getuid(), "n2", "14.2", (long)time(NULL), &run, err,
			    sizeof(err)) == 0);
	start = mad_monotonic();
	CHECK(mad_rdzv_wait(dfd, dir, MAD_RDZV_RECORD, 42, getuid(), 1, 1, 0, &run, &r, err,
			    sizeof(err)) == -1);
	CHECK(mad_monotonic() - start >= 1.0);
	CHECK(strstr(err, "found a record that is an earlier run's: rank 0 has not started") != NULL);
	/* without the rule (SLURM, a first run) the old record is taken */
	CHECK(mad_rdzv_wait(dfd, dir, MAD_RDZV_RECORD, 42, getuid(), 1, 1, 0, NULL, &r, err,
			    sizeof(err)) == 0);
	CHECK_STR(r.addr, "10.0.0.9");
	/* this run's rank 0 starts and publishes */
	put("script_rank0", "host=n1\ntime=%ld\nkey=15.3\n", (long)time(NULL));
	strcpy(r.addr, "10.0.0.1");
	CHECK(mad_rdzv_publish(dfd, dir, MAD_RDZV_RECORD, &r, err, sizeof(err)) == 0);
	CHECK(mad_rdzv_wait(dfd, dir, MAD_RDZV_RECORD, 42, getuid(), 1, 5, 0, &run, &r, err,
			    sizeof(err)) == 0);
	CHECK_STR(r.addr, "10.0.0.1");
}

TEST(the_barrier_counts_only_this_runs_starts)
{
	long now = (long)time(NULL);
	struct mad_run run;
	char err[1024];

	/* every rank of the earlier run started and passed the barrier */
	for (int r = 0; r < 3; r++) {
		char name[32];

		snprintf(name, sizeof(name), "script_rank%d", r);
		put(name, "host=n\ntime=%ld\nkey=20.1\n", now - 100);
		snprintf(name, sizeof(name), "started_rank%d", r);
		put(name, "rank=0\nhost=n\npid=1\ntime=%ld\n", now - 99);
	}
	CHECK(mad_run_begin(dfd, dir, 2, getuid(), "n", "21.7", (long)time(NULL), &run, err,
			    sizeof(err)) == 0);
	/* this run's rank 2 is alone: the earlier run's files do not let it pass */
	CHECK(mad_barrier_wait(dfd, dir, -1, 2, 3, "n", getuid(), &run, 1, err, sizeof(err)) == -1);
	CHECK(strstr(err, "barrier: ranks 0, 1 did not start within 1 s") != NULL);
	/* rank 0 starts this run but has not reached the barrier; rank 1 has */
	put("script_rank0", "host=n\ntime=%ld\nkey=22.1\n", now);
	put("script_rank1", "host=n\ntime=%ld\nkey=23.1\n", now);
	put("started_rank1", "rank=1\nhost=n\npid=1\ntime=%ld\n", now);
	CHECK(mad_barrier_wait(dfd, dir, -1, 2, 3, "n", getuid(), &run, 1, err, sizeof(err)) == -1);
	CHECK(strstr(err, "barrier: rank 0 did not start within 1 s") != NULL);
	put("started_rank0", "rank=0\nhost=n\npid=1\ntime=%ld\n", now);
	CHECK(mad_barrier_wait(dfd, dir, -1, 2, 3, "n", getuid(), &run, 1, err, sizeof(err)) == 0);
}

/* read(2) calls of this process so far (/proc/self/io syscr), -1 unknown */
static long reads_so_far(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/self/io", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "syscr: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* In a re-run each poll reads only the files of ranks it has not counted:
 * 63 of 64 ranks started this run, the last comes 1.5 s later (some ten
 * polls), and the wait reads each started file and script record about
 * once (the earlier rule read all 126 on every poll). */
TEST(a_rerun_barrier_reads_each_rank_once)
{
	long now = (long)time(NULL), before;
	struct mad_run run;
	char err[1024], name[32];
	pid_t pid;

	for (int r = 0; r < 64; r++) {
		snprintf(name, sizeof(name), "script_rank%d", r);
		put(name, "host=n\ntime=%ld\nkey=30.1\n", now - 100);
	}
	CHECK(mad_run_begin(dfd, dir, 0, getuid(), "n", "31.7", now, &run, err, sizeof(err)) == 0);
	for (int r = 0; r < 63; r++) {
		snprintf(name, sizeof(name), "script_rank%d", r);
		put(name, "host=n\ntime=%ld\nkey=%d.1\n", now, 40 + r);
		snprintf(name, sizeof(name), "started_rank%d", r);
		put(name, "rank=%d\nhost=n\npid=1\ntime=%ld\n", r, now);
	}
	pid = fork();
	if (pid == 0) {
		mad_sleep(1.5);
		put("script_rank63", "host=n\ntime=%ld\nkey=99.1\n", now);
		put("started_rank63", "rank=63\nhost=n\npid=1\ntime=%ld\n", now);
		_exit(0);
	}
	CHECK(pid > 0);
	before = reads_so_far();
	CHECK(mad_barrier_wait(dfd, dir, -1, 0, 64, "n", getuid(), &run, 10, err, sizeof(err)) == 0);
	CHECK(before >= 0 && reads_so_far() - before < 400);
	CHECK(waitpid(pid, NULL, 0) == pid);
}

int main(void)
{
	unit_mkdtemp(dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perror(dir);
		return 1;
	}
	RUN(the_bound_lies_between_the_two_starts);
	RUN(the_key_names_the_job_script_whatever_group_a_child_is_in);
	RUN(a_first_run_has_no_rule_and_a_later_call_keeps_its_record);
	RUN(a_rerun_counts_only_what_this_run_wrote);
	RUN(the_rendezvous_waits_for_this_runs_record);
	RUN(the_barrier_counts_only_this_runs_starts);
	RUN(a_rerun_barrier_reads_each_rank_once);
	close(dfd);
	return unit_done_in(dir);
}
