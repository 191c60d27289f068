/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-writer: writes a step's completion markers for mad.so (design.md
 * §10), as the job's user.  mad.so starts it from slurmstepd by
 * posix_spawn (a fork of slurmstepd costs the step more than the whole
 * write), with an empty environment, every signal at its default and the
 * request (lib/writer.h) on its standard input; its exit status is
 * writer.h's.  Run by anyone else it can do nothing a user cannot: it drops
 * to the request's user first, which only root may become. */
#include "config.h"

#include "writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* slurmstepd's descriptors that were not close-on-exec: none is ours.
 * close_range where the kernel has it (5.9), else each up to the limit. */
static void close_inherited(void)
{
	struct rlimit rl;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1U << 20))
		rl.rlim_cur = 1U << 20;
	for (rlim_t fd = 3; fd < rl.rlim_cur; fd++)
		close((int)fd);
}

/* Reads standard input to its end, at most MAD_WRITER_REQUEST_MAX bytes,
 * before any id is dropped: the request, in memory malloc aligned, or NULL with errno (EFBIG: too long). */
static void *read_request(size_t *len)
{
	char *buf = malloc(MAD_WRITER_REQUEST_MAX + 1);
	size_t got = 0;

	if (!buf)
		return NULL;
	while (got <= MAD_WRITER_REQUEST_MAX) {
		ssize_t r = read(0, buf + got, MAD_WRITER_REQUEST_MAX + 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0) {
			*len = got;
			return buf;
		}
		got += (size_t)r;
	}
	free(buf);
	errno = EFBIG;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct mad_writer_marker *m;
	struct mad_writer_job j;
	char why[256];
	size_t len = 0;
	void *req;
	int n, code;

	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("mad-writer (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr,
			"mad-writer: no arguments: mad.so gives the request on standard input\n");
		return 64;
	}
	close_inherited();
	req = read_request(&len);
	if (!req) {
		fprintf(stderr, "mad-writer: standard input: %s\n",
			errno == EFBIG ? "longer than any request" : strerror(errno));
		return MAD_WRITER_BAD_REQUEST;
	}
	code = mad_writer_check(req, len, &j, &m, &n, why, sizeof(why));
	if (code) {
		fprintf(stderr, "mad-writer: standard input: %s\n", why);
		free(req);
		return code == -2 ? MAD_WRITER_OTHER_BUILD : MAD_WRITER_BAD_REQUEST;
	}
	code = mad_writer_run(&j, m, n);
	free(req);
	return code;
}
