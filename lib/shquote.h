/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shquote.h: POSIX shell quoting that dash and bash read back alike. */
#ifndef MAD_SHQUOTE_H
#define MAD_SHQUOTE_H

#include <stddef.h>

struct strbuf;

/* Appends S (LEN bytes) to OUT as exactly one shell word: as is when every
 * byte is in [A-Za-z0-9_@%+:,./-], else inside single quotes with each '
 * written as '\''.  Never uses $'...' (dash lacks it).  '=' is quoted so a
 * value can never turn a command word into an assignment.  Returns 0, or -1
 * (nothing appended) when S holds a NUL byte, which no shell word can. */
int shell_quote(struct strbuf *out, const char *s, size_t len);

/* S as one argument of an #SBATCH line (the "sbatch" filter of
 * mad-render), which sbatch reads itself, not the shell: an unquoted '#'
 * ends the line, whitespace splits, a backslash escapes even inside quotes.
 * As is when every byte is in [A-Za-z0-9_@%+:,./=-], else inside single
 * quotes with each ' and \ escaped by a backslash.  Appends to OUT; -1
 * (nothing appended) for a newline, carriage return or NUL, which no
 * #SBATCH line can carry. */
int sbatch_quote(struct strbuf *out, const char *s, size_t len);

/* Whether S (LEN bytes) is a shell variable name, [A-Za-z_][A-Za-z0-9_]*:
 * names are checked, never quoted. */
int shell_name_ok(const char *s, size_t len);

#endif
