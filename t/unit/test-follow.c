/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/wait/follow: the output file names of --follow, and
 * its bounds: at most what a call is told to read, a line cut at
 * MAD_FOLLOW_LINE_MAX, anything but a regular file refused once. */
#include "wait/follow.h"
#include "strbuf.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

TEST(follow_bounded)
{
	char dir[] = "/tmp/test-follow-XXXXXX", path[64], err[256];
	struct strbuf out = STRBUF_INIT;
	struct mad_follow_file f;
	FILE *fp;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out", dir);
	CHECK(mad_follow_init(&f, path, 2) == 0);
	CHECK(mad_follow_poll(&f, 7, &out, 0, 100, err, sizeof(err)) == 0); /* not there yet */
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	fputs("one\ntwo\n", fp);
	for (int i = 0; i < MAD_FOLLOW_LINE_MAX + 10; i++)
		fputc('x', fp);
	fclose(fp);
	/* at most MAX bytes a call: the first line only */
	CHECK(mad_follow_poll(&f, 7, &out, 0, 6, err, sizeof(err)) == 6);
	CHECK_STR(sb_cstr(&out), "[rank 2] one\n");
	sb_reset(&out);
	/* a line longer than the bound is cut there, the rest kept for later */
	CHECK(mad_follow_poll(&f, 7, &out, 0, 1 << 20, err, sizeof(err)) ==
	      (ssize_t)(2 + MAD_FOLLOW_LINE_MAX + 10));
	CHECK(out.len == strlen("[rank 2] two\n") + 9 + MAD_FOLLOW_LINE_MAX + 1);
	sb_reset(&out);
	CHECK(mad_follow_poll(&f, 7, &out, 1, 1 << 20, err, sizeof(err)) == 0);
	CHECK_STR(sb_cstr(&out), "[rank 2] xxxxxxxxxx\n");
	sb_reset(&out);
	/* truncated and written again: read from the start */
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	fputs("again\n", fp);
	fclose(fp);
	CHECK(mad_follow_poll(&f, 7, &out, 0, 100, err, sizeof(err)) == 6);
	CHECK_STR(sb_cstr(&out), "[rank 2] again\n");
	mad_follow_close(&f);
	unlink(path);
	sb_free(&out);

	/* a link to a device, a FIFO, a folder: refused once, never read */
	const char *kinds[] = { "a character device", "a FIFO", "a folder" };

	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof(path), "%s/odd%d", dir, k);
		CHECK(k != 0 || symlink("/dev/zero", path) == 0);
		CHECK(k != 1 || mkfifo(path, 0600) == 0);
		CHECK(k != 2 || mkdir(path, 0700) == 0);
		CHECK(mad_follow_init(&f, path, -1) == 0);
		CHECK(mad_follow_poll(&f, 7, &out, 0, 100, err, sizeof(err)) == -1);
		CHECK(strstr(err, kinds[k]) != NULL && strstr(err, "not read") != NULL);
		CHECK(mad_follow_poll(&f, 7, &out, 1, 100, err, sizeof(err)) == 0);
		CHECK(out.len == 0 && f.fd < 0);
		mad_follow_close(&f);
		CHECK(k == 2 ? rmdir(path) == 0 : unlink(path) == 0);
	}
	CHECK(rmdir(dir) == 0);
}

int main(void)
{
	RUN(follow_names);
	RUN(follow_bounded);
	return unit_done();
}
