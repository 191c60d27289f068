/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/wait/queue: SLURM time limits, states and squeue's
 * output. */
#include "wait/queue.h"
#include "unit.h"

TEST(time_limits)
{
	CHECK(mad_time_limit_parse("30") == 1800);
	CHECK(mad_time_limit_parse("5:00") == 300);
	CHECK(mad_time_limit_parse("1:00:00") == 3600);
	CHECK(mad_time_limit_parse("2-00:00:00") == 172800);
	CHECK(mad_time_limit_parse("1-2") == 93600);
	CHECK(mad_time_limit_parse("1-2:30") == 95400);
	CHECK(mad_time_limit_parse("UNLIMITED") == -1);
	CHECK(mad_time_limit_parse("NOT_SET") == -1);
	CHECK(mad_time_limit_parse("1:2:3:4") == -1);
	CHECK(mad_time_limit_parse("1:") == -1);
	CHECK(mad_time_limit_parse("") == -1);
}

TEST(queue_output)
{
	struct mad_queue_entry e[3] = { { .id = 12 }, { .id = 13 }, { .id = 14 } };
	const char *out = "12_0 RUNNING 1:00:00\n"
			  "12_1 COMPLETED 1:00:00\n"
			  "garbage\n"
			  "120 RUNNING UNLIMITED\n" /* another job: never matched by prefix */
			  "13 CANCELLED 5:00\n"
			  "\n"
			  "x12 RUNNING\n";

	CHECK(mad_queue_parse(out, strlen(out), e, 3) == 2);
	CHECK(e[0].listing == MAD_LISTING_ACTIVE && e[0].array == 1);
	CHECK_STR(e[0].state, "RUNNING");
	CHECK(e[0].time_limit == 3600);
	CHECK(e[1].listing == MAD_LISTING_ENDED);
	CHECK_STR(e[1].state, "CANCELLED");
	CHECK(e[2].listing == MAD_LISTING_ABSENT);
	/* spur's squeue ignores custom delimiters: whitespace is all we need */
	CHECK(mad_queue_parse("14   PENDING\t 30\n", 17, e + 2, 1) == 0);
	CHECK(e[2].listing == MAD_LISTING_ACTIVE && e[2].time_limit == 1800);
	/* the user and the submit time (the earliest of an array's tasks) */
	e[0] = (struct mad_queue_entry){ .id = 12 };
	out = "12_1 RUNNING 1:00 alice 2026-12-02T01:02:05\n12_0 RUNNING 1:00 alice 2026-12-02T01:02:03\n";
	CHECK(mad_queue_parse(out, strlen(out), e, 1) == 0);
	CHECK_STR(e[0].user, "alice");
	CHECK(e[0].submitted == mad_submit_time_parse("2026-12-02T01:02:03"));
	CHECK(mad_submit_time_parse("2026-12-02T01:02:05") - e[0].submitted == 2);
	CHECK(mad_submit_time_parse("N/A") == -1 && mad_submit_time_parse("2026-12-02") == -1);
	/* a numeric user is its uid; a name is looked up later (mad_queue_ask) */
	out = "12 RUNNING 1:00 1001 2026-12-02T01:02:03\n";
	CHECK(mad_queue_parse(out, strlen(out), e, 1) == 0);
	CHECK(e[0].uid == 1001 && e[0].problem[0] == '\0');
	out = "12 RUNNING 1:00 alice 2026-12-02T01:02:03\n";
	CHECK(mad_queue_parse(out, strlen(out), e, 1) == 0);
	CHECK(e[0].uid == -1 && e[0].problem[0] == '\0');
	/* rows that disagree: two users; one id with two submit times */
	out = "12 RUNNING 1:00 alice 2026-12-02T01:02:03\n12 RUNNING 1:00 1001 2026-12-02T01:02:03\n";
	CHECK(mad_queue_parse(out, strlen(out), e, 1) == 0);
	CHECK(strstr(e[0].problem, "two users, 'alice' and '1001'") != NULL);
	out = "12 RUNNING 1:00 alice 2026-12-02T01:02:03\n12 COMPLETED 1:00 alice 2026-11-02T01:02:03\n";
	CHECK(mad_queue_parse(out, strlen(out), e, 1) == 0);
	CHECK(strstr(e[0].problem,
		     "squeue lists 12 twice, submitted at 2026-11-02T01:02:03 and at 2026-12-02T01:02:03") !=
		      NULL ||
	      strstr(e[0].problem,
		     "squeue lists 12 twice, submitted at 2026-12-02T01:02:03 and at 2026-11-02T01:02:03") !=
		      NULL);
	/* the same row twice agrees; another job's rows are not compared */
	out = "12 RUNNING 1:00 alice 2026-12-02T01:02:03\n12 RUNNING 1:00 alice 2026-12-02T01:02:03\n"
	      "120 RUNNING 1:00 bob 2020-12-02T01:02:03\n";
	CHECK(mad_queue_parse(out, strlen(out), e, 1) == 0);
	CHECK(e[0].problem[0] == '\0');
	/* a pending array range */
	CHECK(mad_queue_parse("12_[0-3%2] PENDING 10\n", 22, e, 1) == 0 &&
	      e[0].listing == MAD_LISTING_ACTIVE);
}

int main(void)
{
	RUN(time_limits);
	RUN(queue_output);
	return unit_done();
}
