/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/wait/ready: the ready marker's format, reader and
 * endpoint check (what mad-wait --ready decides with it: test-wait). */
#include "wait/ready.h"
#include "unit.h"

TEST(ready_marker_format_and_reader)
{
	char buf[2048], ep[MAD_ENDPOINT_MAX], host[64], err[256];
	long t;
	size_t n = mad_ready_format(buf, sizeof(buf), "http://10.0.0.1:8000/", 0, "n1", 12, 1700);

	CHECK(n > 0);
	CHECK(mad_ready_parse(buf, n, ep, sizeof(ep), host, sizeof(host), &t, err, sizeof(err)) == 1);
	CHECK_STR(ep, "http://10.0.0.1:8000/");
	CHECK_STR(host, "n1");
	CHECK(t == 1700);
	/* mid-write: nothing, or a first line without its newline */
	CHECK(mad_ready_parse("", 0, ep, sizeof(ep), host, sizeof(host), &t, err, sizeof(err)) == 0);
	CHECK(mad_ready_parse("http://a", 8, ep, sizeof(ep), host, sizeof(host), &t, err,
			      sizeof(err)) == 0);
	CHECK(mad_ready_parse("a b\n", 4, ep, sizeof(ep), host, sizeof(host), &t, err, sizeof(err)) ==
	      -1);
	CHECK(strstr(err, "'a b' is not an endpoint") != NULL);
	CHECK(mad_ready_check("tcp://n1:29500", err, sizeof(err)) == 0);
	CHECK(mad_ready_check("", err, sizeof(err)) == -1);
	CHECK_STR(err, "the endpoint is empty");
	CHECK(mad_ready_check("a\nb", err, sizeof(err)) == -1);
	CHECK(strstr(err, "'a\\x0ab'") != NULL);
	mad_ready_name(buf, sizeof(buf), 12);
	CHECK_STR(buf, "ready_rank12");
}

int main(void)
{
	RUN(ready_marker_format_and_reader);
	return unit_done();
}
