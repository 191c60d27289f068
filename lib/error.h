/* SPDX-License-Identifier: GPL-2.0-or-later */
/* error.h: the one way lib/ reports an error.
 *
 * A function that can fail takes (char *err, size_t errsize) as its last
 * two arguments and returns -1 (or NULL) with ERR holding one line, no
 * trailing newline, no program name: the front-end adds "mad: " or
 * "mad-env: " and decides what to do.  Never -errno, never a print.
 * mad_error() formats and returns -1 so a failure is one statement:
 *
 *	if (fd < 0)
 *		return mad_error(err, errsize, "%s: %s", path, strerror(errno));
 *
 * A value a user or a file gave goes into a message through
 * mad_printable(), so a message never carries raw terminal bytes. */
#ifndef MAD_ERROR_H
#define MAD_ERROR_H

#include <stddef.h>

/* The size of every buffer that holds an error message (ERR, a "why", a
 * reason): one message, quoting another cut with "%.Ns" where it must fit. */
#define MAD_ERR_MAX 2048

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int mad_error(char *err, size_t errsize, const char *fmt, ...);

/* Copies up to MAD_PRINTABLE_MAX bytes of S (LEN bytes) into OUT, each
 * control or non-ASCII byte as \xHH, "..." when cut.  OUT always ends in
 * NUL; SIZE of MAD_PRINTABLE_SIZE holds any result. */
#define MAD_PRINTABLE_MAX 60
#define MAD_PRINTABLE_SIZE (MAD_PRINTABLE_MAX * 4 + 4)
void mad_printable(char *out, size_t size, const char *s, size_t len);
/* The same, cut after MAX bytes of S instead (a file's line of its own,
 * such as a marker's error=, which is the message). */
void mad_printable_max(char *out, size_t size, const char *s, size_t len, size_t max);

#endif
