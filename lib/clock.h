/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clock.h: seconds on CLOCK_MONOTONIC, for timeouts and backoff (never
 * the wall clock, which can jump). */
#ifndef MAD_CLOCK_H
#define MAD_CLOCK_H

double mad_monotonic(void);

/* Sleeps SECONDS (nothing when <= 0); a signal may end it early, which a
 * caller polling with backoff tolerates. */
void mad_sleep(double seconds);

/* The pause after DELAY for a reader polling a shared folder (the
 * rendezvous, the barrier) that has waited WAITED seconds: up by half each
 * time, to at most FAST (0.2 s: an array that starts together meets within
 * a fifth of a second) for the first 30 s, then to 1 s, so a rank that
 * waits out a long queue costs the file server one look a second. */
double mad_poll_delay(double delay, double waited, double fast);

#endif
