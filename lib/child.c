/* SPDX-License-Identifier: GPL-2.0-or-later */
/* child.c: see child.h. */
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

int mad_child_reap(pid_t pid, struct mad_child_budget *budget, int *status)
{
	long pause = 100;
	pid_t got;

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
