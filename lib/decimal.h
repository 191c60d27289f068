/* SPDX-License-Identifier: GPL-2.0-or-later */
/* decimal.h: the one parser of whole decimal numbers, for every count, id,
 * port, status and time read as text (options, the job environment,
 * squeue's output, markers, the tools' arguments).  Its rules:
 * - ASCII digits only: no sign, no space before, inside or after, no base
 *   prefix; "" is not a number;
 * - leading zeros are read as decimal ("08" is 8); a caller that needs the
 *   one spelling of a number (a file name) refuses them itself;
 * - a value past UINT64_MAX is refused, never wrapped or clamped;
 * - so is a value outside [LO, HI].
 * Returns 0 with *OUT, or -1 with *OUT untouched.  Reads no errno and no
 * locale; system calls only (safe in a forked child). */
#ifndef MAD_DECIMAL_H
#define MAD_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* The LEN bytes at S. */
int mad_decimal_span(const char *s, size_t len, uint64_t lo, uint64_t hi, uint64_t *out);

/* The string S up to its NUL, into a long; 0 <= LO <= HI. */
int mad_decimal(const char *s, long lo, long hi, long *out);

/* The digits at S up to the first non-digit: their count, 0 when S does
 * not start with one (for the callers that read a number inside a token,
 * "12_3", "2(x3)", "1-00:00:00", and check what follows it). */
size_t mad_decimal_len(const char *s);

#endif
