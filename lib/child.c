/* SPDX-License-Identifier: GPL-2.0-or-later */
/* child.c: see child.h. */
#include "child.h"
#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A descriptor that becomes readable when PID ends (Linux 5.3), or -1:
 * then the wait polls.  Through syscall(): glibc 2.36's wrapper is newer
 * than some hosts' libc. */
static int pid_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Waits for the end of PID on FD within LEFT_US, which it spends; 0 once
 * it ended (or FD cannot tell: the caller then polls), 1 when the time ran
 * out.  The writer's end wakes the wait at once, not at the next poll. */
static int wait_fd(int fd, long *left_us)
{
	struct pollfd p = { fd, POLLIN, 0 };
	double start = mad_monotonic();
	int rc;

	for (;;) {
		long ms = *left_us <= 0 ? 0 : (*left_us + 999) / 1000;

		rc = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
		*left_us -= (long)((mad_monotonic() - start) * 1e6);
		start = mad_monotonic();
		if (rc != 0 && !(rc < 0 && errno == EINTR))
			return 0;
		if (*left_us <= 0)
			return 1;
	}
}

int mad_child_reap(pid_t pid, struct mad_child_budget *budget, int *status)
{
	long pause = 100;
	pid_t got;
	int fd = pid_fd(pid);

	if (fd >= 0) {
		int late = wait_fd(fd, &budget->left_us);

		close(fd);
		if (late)
			budget->left_us = 0;
	}
	for (;;) {
		got = waitpid(pid, status, WNOHANG);
		if (got > 0)
			return 0;
		if (got < 0 && errno != EINTR)
			return -1;
		if (budget->left_us <= 0)
			break;
		if (pause > budget->left_us)
			pause = budget->left_us;
		nanosleep(&(struct timespec){ pause / 1000000L, pause % 1000000L * 1000L }, NULL);
		budget->left_us -= pause;
		if (pause < 20000)
			pause *= 2;
	}
	budget->left_us = 0;
	kill(pid, SIGKILL);
	/* a writer stuck in the kernel on a dead file server may outlive
	 * SIGKILL for a while: reap it if it goes within 100 ms, else leave it */
	for (int i = 0; i < 100; i++) {
		got = waitpid(pid, status, WNOHANG);
		if (got != 0 && !(got < 0 && errno == EINTR))
			break;
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	}
	return 1;
}
