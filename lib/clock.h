/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clock.h: seconds on CLOCK_MONOTONIC, for timeouts and backoff (never
 * the wall clock, which can jump). */
#ifndef MAD_CLOCK_H
#define MAD_CLOCK_H

double mad_monotonic(void);

/* Sleeps SECONDS (nothing when <= 0); a signal may end it early, which a
 * caller polling with backoff tolerates. */
void mad_sleep(double seconds);

#endif
