/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strbuf.h: a growable byte buffer that remembers an allocation failure,
 * so callers check once at the end instead of after every append. */
#ifndef MAD_STRBUF_H
#define MAD_STRBUF_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct strbuf {
	char *buf; /* always NUL-terminated when len > 0 or after sb_cstr() */
	size_t len;
	size_t cap;
	int failed; /* set once an allocation failed; later appends are no-ops */
};

#define STRBUF_INIT           \
	{                     \
		NULL, 0, 0, 0 \
	}

void sb_add(struct strbuf *sb, const char *data, size_t len);
void sb_addc(struct strbuf *sb, char c);
void sb_adds(struct strbuf *sb, const char *s);
/* Decimal NUM, zero-padded to at least WIDTH digits (SLURM's "%0*lu"). */
void sb_addu64(struct strbuf *sb, uint64_t num, unsigned width);
/* The contents as a C string ("" when empty), or NULL after a failure. */
const char *sb_cstr(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
/* Appends everything F holds, at most MAX bytes: 0, -1 on a read error
 * or out of memory (errno says which), -2 when F holds more than MAX. */
int sb_read(struct strbuf *sb, FILE *f, size_t max);
void sb_free(struct strbuf *sb);

/* Writes NUM zero-padded to WIDTH into OUT (room for 20 + WIDTH bytes),
 * returns the number of bytes written; no NUL. */
size_t fmt_u64(char *out, uint64_t num, unsigned width);

#endif
