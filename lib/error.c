/* SPDX-License-Identifier: GPL-2.0-or-later */
/* error.c: see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mad_error(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (err && errsize) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void mad_printable(char *out, size_t size, const char *s, size_t len)
{
	mad_printable_max(out, size, s, len, MAD_PRINTABLE_MAX);
}

void mad_printable_max(char *out, size_t size, const char *s, size_t len, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	if (!size)
		return;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == max) {
			if (o + 4 > size)
				break;
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c >= 0x7f) {
			if (o + 5 > size)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			if (o + 2 > size)
				break;
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}
