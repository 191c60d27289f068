/* SPDX-License-Identifier: GPL-2.0-or-later */
/* decimal.c: see decimal.h. */
#include "decimal.h"

#include <string.h>

int mad_decimal_span(const char *s, size_t len, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t n = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	if (n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

int mad_decimal(const char *s, long lo, long hi, long *out)
{
	uint64_t n;

	if (!s || lo < 0 || hi < lo || mad_decimal_span(s, strlen(s), (uint64_t)lo, (uint64_t)hi, &n))
		return -1;
	*out = (long)n;
	return 0;
}

size_t mad_decimal_len(const char *s)
{
	return strspn(s, "0123456789");
}
