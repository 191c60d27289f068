/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurm.c: see slurm.h. */
#include "slurm.h"
#include "clock.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTPUT_MAX (16u << 20)

extern char **environ;

int mad_slurm_run(char *const argv[], double timeout, struct strbuf *out, struct strbuf *errout,
		  int *status, char *err, size_t size)
{
	int opipe[2] = { -1, -1 }, epipe[2] = { -1, -1 }, rc = -1, open_fds = 2;
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	double deadline = mad_monotonic() + timeout;

	if (pipe2(opipe, O_CLOEXEC) || pipe2(epipe, O_CLOEXEC)) {
		mad_error(err, size, "cannot run %s: %s", argv[0], strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, opipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, epipe[1], 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(opipe[1]);
	close(epipe[1]);
	opipe[1] = epipe[1] = -1;
	if (rc) {
		mad_error(err, size, "cannot run %s: %s", argv[0], strerror(rc));
		rc = -1;
		pid = -1;
		goto out;
	}
	rc = -1;
	while (open_fds) {
		struct pollfd pf[2] = { { opipe[0], POLLIN, 0 }, { epipe[0], POLLIN, 0 } };
		double left = deadline - mad_monotonic();
		char buf[65536];

		if (left <= 0) {
			kill(pid, SIGKILL);
			mad_error(err, size, "%s did not answer within %.0f s", argv[0], timeout);
			goto out;
		}
		if (poll(pf, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			mad_error(err, size, "poll: %s", strerror(errno));
			goto out;
		}
		for (int k = 0; k < 2; k++) {
			int *fd = k ? &epipe[0] : &opipe[0];
			ssize_t r;

			if (*fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(*fd, buf, sizeof(buf));
			if (r > 0) {
				struct strbuf *sb = k ? errout : out;

				if (sb->len + (size_t)r > OUTPUT_MAX) {
					kill(pid, SIGKILL);
					mad_error(err, size, "%s printed more than %u MiB", argv[0],
						  OUTPUT_MAX >> 20);
					goto out;
				}
				sb_add(sb, buf, (size_t)r);
			} else if (r == 0 || errno != EINTR) {
				close(*fd);
				*fd = -1;
				open_fds--;
			}
		}
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (!sb_cstr(out) || !sb_cstr(errout)) {
		mad_error(err, size, "out of memory");
		goto out;
	}
	rc = 0;
out:
	if (pid > 0)
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
	for (int k = 0; k < 2; k++) {
		if (opipe[k] >= 0)
			close(opipe[k]);
		if (epipe[k] >= 0)
			close(epipe[k]);
	}
	return rc;
}

int mad_slurm_release(char *version, size_t vsize, double timeout, char *err, size_t size)
{
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	char *argv[] = { "srun", "--version", NULL };
	const char *v;
	size_t n;
	int status = 0, rc = -1;

	if (mad_slurm_run(argv, timeout, &out, &errout, &status, err, size))
		goto out;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		mad_error(err, size, "srun --version failed");
		goto out;
	}
	/* "slurm 24.11.7" (SchedMD) or "slurm-wlm 22.05.8" (Debian) */
	v = strchr(out.buf, ' ');
	v = v ? v + 1 : out.buf;
	n = strspn(v, "0123456789.");
	if (n == 0 || !strchr(v, '.') || n >= vsize) {
		char said[MAD_PRINTABLE_SIZE];

		mad_printable(said, sizeof(said), out.buf, strcspn(out.buf, "\n"));
		mad_error(err, size, "srun --version said '%s', not a release", said);
		goto out;
	}
	memcpy(version, v, n);
	version[n] = '\0';
	rc = 0;
out:
	sb_free(&out);
	sb_free(&errout);
	return rc;
}
