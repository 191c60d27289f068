/* SPDX-License-Identifier: GPL-2.0-or-later */
/* child.h: waiting for a short-lived writer child within a time shared by
 * every wait of one process (design.md §10).  mad.so writes its markers
 * from slurmstepd's task-reaping loop, one task after another: a hung
 * shared folder must cost that loop the budget once, not once per task. */
#ifndef MAD_CHILD_H
#define MAD_CHILD_H

#include <sys/types.h>

struct mad_child_budget {
	long left_us; /* what the waits of this process may still take, in all */
};

/* Waits for PID, woken by its end (a pidfd: a writer takes about a
 * millisecond, and slurmstepd's reaping loop waits for it, so a poll's
 * granularity would be most of the wait), else polling from 100 us and
 * doubling up to 25.6 ms, for at most what BUDGET has left, which it
 * spends.  Returns 0 with *STATUS once the child ended; 1 when the budget
 * ran out first (the child is killed, and reaped if it ends within 100 ms;
 * the budget is empty);
 * -1 (errno) when waitpid failed. */
int mad_child_reap(pid_t pid, struct mad_child_budget *budget, int *status);

#endif
