/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strbuf.c: see strbuf.h. */
#include "strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->failed)
		return -1;
	if (extra > SIZE_MAX - sb->len - 1)
		goto fail;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(sb->buf, cap);
	if (!p)
		goto fail;
	sb->buf = p;
	sb->cap = cap;
	return 0;
fail:
	sb->failed = 1;
	return -1;
}

void sb_add(struct strbuf *sb, const char *data, size_t len)
{
	if (sb_reserve(sb, len))
		return;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sb_addc(struct strbuf *sb, char c)
{
	sb_add(sb, &c, 1);
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

size_t fmt_u64(char *out, uint64_t num, unsigned width)
{
	char digits[20];
	size_t n = 0, i, len = 0;

	do {
		digits[n++] = (char)('0' + num % 10);
		num /= 10;
	} while (num);
	for (i = n; i < width; i++)
		out[len++] = '0';
	while (n)
		out[len++] = digits[--n];
	return len;
}

void sb_addu64(struct strbuf *sb, uint64_t num, unsigned width)
{
	if (sb_reserve(sb, 20 + (size_t)width))
		return;
	sb->len += fmt_u64(sb->buf + sb->len, num, width);
	sb->buf[sb->len] = '\0';
}

const char *sb_cstr(struct strbuf *sb)
{
	if (sb_reserve(sb, 0))
		return NULL;
	sb->buf[sb->len] = '\0';
	return sb->buf;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->failed = 0;
}

int sb_read(struct strbuf *sb, FILE *f, size_t max)
{
	char chunk[65536];
	size_t n, start = sb->len;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (n > max - (sb->len - start))
			return -2;
		sb_add(sb, chunk, n);
		if (sb->failed) {
			errno = ENOMEM;
			return -1;
		}
	}
	return ferror(f) ? -1 : 0;
}
