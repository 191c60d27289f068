/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ready.c: see ready.h. */
#include "ready.h"
#include "decimal.h"
#include "error.h"
#include "marker.h"
#include "jobdir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int printable_word(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

int mad_ready_check(const char *endpoint, char *err, size_t size)
{
	char shown[MAD_PRINTABLE_SIZE];
	size_t n = strlen(endpoint);

	if (n == 0)
		return mad_error(err, size, "the endpoint is empty");
	mad_printable(shown, sizeof(shown), endpoint, n);
	if (n >= MAD_ENDPOINT_MAX)
		return mad_error(err, size, "the endpoint '%s' is longer than %d bytes", shown,
				 MAD_ENDPOINT_MAX - 1);
	if (!printable_word(endpoint, n))
		return mad_error(err, size,
				 "the endpoint '%s' has a space or a byte that is not printable ASCII",
				 shown);
	return 0;
}

void mad_ready_name(char *name, size_t size, long rank)
{
	mad_rank_file_name(name, size, "ready_rank", rank);
}

size_t mad_ready_format(char *buf, size_t size, const char *endpoint, long rank, const char *host,
			long job_id, long time)
{
	int n = snprintf(buf, size, "%s\nrank=%ld\nhost=%s\njob=%ld\ntime=%ld\n", endpoint, rank,
			 host, job_id, time);

	return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}

int mad_ready_leave(int dirfd, const char *job_dir, long rank, long job_id, const char *endpoint,
		    char *err, size_t size)
{
	char content[MAD_ENDPOINT_MAX + 512], host[256] = "", name[32];
	size_t len;

	if (mad_ready_check(endpoint, err, size))
		return -1;
	gethostname(host, sizeof(host) - 1);
	len = mad_ready_format(content, sizeof(content), endpoint, rank, host, job_id,
			       (long)time(NULL));
	if (!len)
		return mad_error(err, size, "the ready marker of rank %ld does not fit", rank);
	mad_ready_name(name, sizeof(name), rank);
	return mad_write_file_at(dirfd, job_dir, name, content, len, 0, err, size);
}

int mad_ready_parse(const char *text, size_t len, char *endpoint, size_t esize, char *host,
		    size_t hsize, long *time, char *err, size_t size)
{
	const char *p = text, *end = text + len, *eol;
	size_t n;

	*time = -1;
	if (esize)
		*endpoint = '\0';
	if (hsize)
		*host = '\0';
	if (len == 0)
		return 0;
	if (memchr(text, '\0', len))
		return mad_error(err, size, "a NUL byte: not a ready marker");
	eol = memchr(p, '\n', len);
	n = (size_t)((eol ? eol : end) - p);
	if (!eol)
		return 0; /* the first line is not complete yet */
	if (n == 0 || n >= esize || n >= MAD_ENDPOINT_MAX || !printable_word(p, n)) {
		char shown[MAD_PRINTABLE_SIZE];

		mad_printable(shown, sizeof(shown), p, n);
		return mad_error(err, size, "first line '%s' is not an endpoint", shown);
	}
	memcpy(endpoint, p, n);
	endpoint[n] = '\0';
	for (p = eol + 1; p < end; p = eol ? eol + 1 : end) {
		eol = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((eol ? eol : end) - p);
		if (n > 5 && memcmp(p, "host=", 5) == 0 && hsize) {
			mad_printable(host, hsize, p + 5, n - 5);
		} else if (n > 5 && memcmp(p, "time=", 5) == 0) {
			uint64_t t;

			*time = mad_decimal_span(p + 5, n - 5, 0, LONG_MAX, &t) ? -1 : (long)t;
		}
	}
	return 1;
}
