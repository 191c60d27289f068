/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/wait/follow: the output file names of --follow. */
#include "wait/follow.h"
#include "unit.h"

TEST(follow_names)
{
	char out[256], err[256];

	CHECK(mad_follow_name("slurm-%A_%a.out", 7, 3, out, sizeof(out), err, sizeof(err)) == 0);
	CHECK_STR(out, "slurm-7_3.out");
	CHECK(mad_follow_name("log-%j-%r-%%.txt", 7, 0, out, sizeof(out), err, sizeof(err)) == 0);
	CHECK_STR(out, "log-7-0-%.txt");
	CHECK(mad_follow_name("x-%t", 7, 0, out, sizeof(out), err, sizeof(err)) == -1);
	CHECK(mad_follow_per_rank("a-%a") && !mad_follow_per_rank("a-%j") &&
	      !mad_follow_per_rank("a%%a"));
}

int main(void)
{
	RUN(follow_names);
	return unit_done();
}
