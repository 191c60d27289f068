/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/job/barrier: which ranks are missing given a directory
 * listing (pure), how they are named, and the wait itself in a scratch
 * folder: it passes once every record is there and fails by its timeout
 * naming exactly the ranks that never wrote one. */
#include "job/barrier.h"
#include "clock.h"
#include "unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(names_per_step)
{
	char name[64];

	CHECK(mad_barrier_name(name, sizeof(name), -1, 12) == 0);
	CHECK_STR(name, "started_rank12");
	CHECK(mad_barrier_name(name, sizeof(name), 3, 0) == 0);
	CHECK_STR(name, "started.3_rank0");
	CHECK(mad_barrier_name(name, 8, -1, 12) == -1);
}

TEST(rank_of_reads_only_this_steps_records)
{
	CHECK(mad_barrier_rank_of("started_rank0", -1, 4) == 0);
	CHECK(mad_barrier_rank_of("started_rank3", -1, 4) == 3);
	CHECK(mad_barrier_rank_of("started_rank4", -1, 4) == -1);  /* past N - 1 */
	CHECK(mad_barrier_rank_of("started_rank03", -1, 4) == -1); /* leading zero */
	CHECK(mad_barrier_rank_of("started_rank", -1, 4) == -1);
	CHECK(mad_barrier_rank_of("started_rank1x", -1, 4) == -1);
	CHECK(mad_barrier_rank_of("started_rank-1", -1, 4) == -1);
	CHECK(mad_barrier_rank_of(".started_rank1.tmp.42", -1, 4) == -1); /* a write under way */
	CHECK(mad_barrier_rank_of("started.0_rank1", -1, 4) == -1); /* a step's, not the batch's */
	CHECK(mad_barrier_rank_of("started.0_rank1", 0, 4) == 1);
	CHECK(mad_barrier_rank_of("started.1_rank1", 0, 4) == -1);
	CHECK(mad_barrier_rank_of("done_rank1", -1, 4) == -1);
	CHECK(mad_barrier_rank_of("started_rank99999999999999999999", -1, 4) == -1);
}

TEST(missing_from_a_listing)
{
	const char *names[] = { "expected",      "started_rank0", "done_rank2", "started_rank2",
				"started_rank2", "started_rank4", "rendezvous", "started.0_rank1" };
	unsigned char present[6];
	char who[256];

	CHECK(mad_barrier_missing(names, 8, -1, 6, present) == 3);
	CHECK(present[0] && !present[1] && present[2] && !present[3] && present[4] && !present[5]);
	mad_barrier_describe(present, 6, who, sizeof(who));
	CHECK_STR(who, "ranks 1, 3, 5");
	CHECK(mad_barrier_missing(names, 8, -1, 3, present) == 1);
	mad_barrier_describe(present, 3, who, sizeof(who));
	CHECK_STR(who, "rank 1");
	CHECK(mad_barrier_missing(names, 0, -1, 2, present) == 2);
}

TEST(describe_caps_a_long_list)
{
	unsigned char present[100] = { 0 };
	char who[512];

	present[0] = 1;
	mad_barrier_describe(present, 100, who, sizeof(who));
	CHECK_STR(who,
		  "ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, ... (99 in all)");
	mad_barrier_describe(present, 100, who, 16); /* cut, never overrun */
	CHECK(strlen(who) == 15);
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void touch(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
}

/* A folder of its own for a test: DIR (a mkdtemp template), opened. */
static int scratch(char *dir)
{
	return mkdtemp(dir) ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

TEST(wait_passes_when_all_started_and_fails_naming_the_rest)
{
	char dir[] = "/tmp/test-barrier.XXXXXX", err[1024], cmd[600];
	double start;
	int fd;

	fd = scratch(dir);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	touch(dir, "started_rank0");
	touch(dir, "started_rank2");
	/* rank 1 is the last to arrive: nothing to wait for */
	CHECK(mad_barrier_wait(fd, dir, -1, 1, 3, "n2", getuid(), NULL, 5, err, sizeof(err)) == 0);
	CHECK(access(strcat(strcpy(cmd, dir), "/started_rank1"), F_OK) == 0);
	/* 5 ranks: 3 and 4 never come */
	start = mad_monotonic();
	CHECK(mad_barrier_wait(fd, dir, -1, 0, 5, "n1", getuid(), NULL, 1, err, sizeof(err)) == -1);
	CHECK(mad_monotonic() - start >= 1.0 && mad_monotonic() - start < 3.0);
	CHECK(starts_with(err, "barrier: ranks 3, 4 did not start within 1 s ("));
	CHECK(strstr(err, dir) != NULL);
	/* the same step's files only: step 7 has nobody but this rank */
	CHECK(mad_barrier_wait(fd, dir, 7, 1, 2, "n2", getuid(), NULL, 1, err, sizeof(err)) == -1);
	CHECK(starts_with(err,
			  "barrier: rank 0 did not start within 1 s (no started.7_rankR file for it"));
	/* a rank outside the barrier, or a folder that cannot hold records */
	CHECK(mad_barrier_wait(fd, dir, -1, 5, 5, "n1", getuid(), NULL, 1, err, sizeof(err)) == -1);
	CHECK(strstr(err, "out of range") != NULL);
	CHECK(mad_barrier_wait(-1, "/nonexistent/dir", -1, 0, 2, "n1", getuid(), NULL, 1, err,
			       sizeof(err)) == -1);
	CHECK(strstr(err, "barrier: rank 0: cannot write '/nonexistent/dir/started_rank0'") != NULL);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* The polling rule (lib/clock.h): 0.2 s at most for the first 30 s of
 * waiting, 1 s after; the barrier's own cap grows past 64 ranks. */
TEST(poll_delay_is_fast_for_30_s_then_one_a_second)
{
	double d = 0.02, waited = 0;

	while (waited < 30) {
		d = mad_poll_delay(d, waited, 0.2);
		CHECK(d <= 0.2);
		waited += d;
	}
	CHECK(mad_poll_delay(d, waited, 0.2) > 0.2 && mad_poll_delay(0.9, 31, 0.2) == 1.0);
	CHECK(mad_poll_delay(1.0, 31, 0.2) == 1.0 && mad_poll_delay(0.02, 0, 0.2) == 0.03);
	CHECK(mad_poll_delay(0.9, 1, 5.0) == 1.0);
}

/* A rank that has waited a few seconds passes within a poll of the last
 * start (design.md §5: within 1 s), not a second later: the last file
 * comes 2.35 s in, when a 1 s backoff (the rule before) looks next at
 * about 3.27 s; the bound, 0.7 s, leaves a loaded machine 0.5 s over the
 * 0.2 s poll. */
TEST(the_barrier_passes_soon_after_the_last_start)
{
	char dir[] = "/tmp/test-barrier.XXXXXX", err[1024], cmd[600];
	double start;
	pid_t pid;
	int fd;

	fd = scratch(dir);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	start = mad_monotonic();
	pid = fork();
	if (pid == 0) {
		mad_sleep(2.35);
		touch(dir, "started_rank1");
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK(mad_barrier_wait(fd, dir, -1, 0, 2, "n1", getuid(), NULL, 10, err, sizeof(err)) == 0);
	CHECK(mad_monotonic() - start < 2.35 + 0.7);
	CHECK(waitpid(pid, NULL, 0) == pid);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(names_per_step);
	RUN(rank_of_reads_only_this_steps_records);
	RUN(missing_from_a_listing);
	RUN(describe_caps_a_long_list);
	RUN(wait_passes_when_all_started_and_fails_naming_the_rest);
	RUN(poll_delay_is_fast_for_30_s_then_one_a_second);
	RUN(the_barrier_passes_soon_after_the_last_start);
	return unit_done();
}
