/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/marker: the completion marker's reader. */
#include "marker.h"
#include "unit.h"

TEST(marker_reader)
{
	long st, t;
	char host[64], note[256];

	CHECK(mad_marker_parse("0\nrank=1\nhost=n2\ntime=7\n", 23, &st, &t, host, 64, note, 256) == 1);
	CHECK(st == 0 && t == 7);
	CHECK_STR(host, "n2");
	CHECK(mad_marker_parse("3", 1, &st, &t, host, 64, note, 256) == 1 && st == 3);
	CHECK(mad_marker_parse(" 4 \r\n", 5, &st, &t, host, 64, note, 256) == 1 && st == 4);
	CHECK(mad_marker_parse("1\nerror=late\n", 13, &st, &t, host, 64, note, 256) == 1);
	CHECK_STR(note, "late");
	CHECK(mad_marker_parse("", 0, &st, &t, host, 64, note, 256) == 0);
	CHECK(mad_marker_parse("\n \n", 3, &st, &t, host, 64, note, 256) == 0);
	CHECK(mad_marker_parse("ok\n", 3, &st, &t, host, 64, note, 256) == -1);
	CHECK(strstr(note, "'ok'") != NULL);
	CHECK(mad_marker_parse("-1\n", 3, &st, &t, host, 64, note, 256) == -1);
	CHECK(mad_marker_parse("1x\n", 3, &st, &t, host, 64, note, 256) == -1);
	CHECK(mad_marker_parse("99999999999999999999\n", 21, &st, &t, host, 64, note, 256) == -1);
	CHECK(mad_marker_parse("0\0\n", 3, &st, &t, host, 64, note, 256) == -1);
}

int main(void)
{
	RUN(marker_reader);
	return unit_done();
}
