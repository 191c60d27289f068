/* clock.h: seconds on CLOCK_MONOTONIC, for timeouts and backoff (never
 * the wall clock, which can jump). */
#ifndef MAD_CLOCK_H
#define MAD_CLOCK_H

double mad_monotonic(void);

#endif
