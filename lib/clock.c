/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clock.c: see clock.h. */
#include "clock.h"

#include <time.h>

double mad_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mad_sleep(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

double mad_poll_delay(double delay, double waited, double fast)
{
	double cap = waited > 30 || fast > 1.0 ? 1.0 : fast;

	return delay * 1.5 > cap ? cap : delay * 1.5;
}
