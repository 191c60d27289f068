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

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* slurmstepd's descriptors that were not close-on-exec: none is ours.
 * close_range where the kernel has it (5.9), else those /proc/self/fd
 * lists (the limit may be a million numbers), else each up to 65536. */
static void close_inherited(void)
{
	DIR *d;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	d = opendir("/proc/self/fd");
	if (d) {
		int self = dirfd(d), fds[256], n;

		/* read a batch, then close it: a folder is not closed under readdir */
		do {
			struct dirent *e;

			n = 0;
			rewinddir(d);
			while (n < (int)(sizeof(fds) / sizeof(fds[0])) && (e = readdir(d))) {
				int fd = atoi(e->d_name);

				if (fd > 2 && fd != self)
					fds[n++] = fd;
			}
			for (int i = 0; i < n; i++)
				close(fds[i]);
		} while (n > 0);
		closedir(d);
		return;
	}
	for (int fd = 3; fd < 65536; fd++)
		close(fd);
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
	char why[256] = "";
	size_t len = 0;
	void *req;
	int code;

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
	code = mad_writer_serve(req, len, why, sizeof(why));
	/* to mad.so, which puts it in slurmd's log */
	if (code)
		fprintf(stderr, "mad-writer: %s%s\n",
			code == MAD_WRITER_OTHER_BUILD || code == MAD_WRITER_BAD_REQUEST ?
				"standard input: " :
				"",
			*why ? why : mad_writer_strerror(code));
	free(req);
	return code;
}
