/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shquote.c: see shquote.h. */
#include "shquote.h"
#include "strbuf.h"

#include <string.h>

static int is_shell_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_@%+:,./-", c) != NULL;
}

int shell_quote(struct strbuf *out, const char *s, size_t len)
{
	size_t i, start;
	int plain = len > 0;

	if (memchr(s, '\0', len))
		return -1;
	for (i = 0; i < len && plain; i++)
		plain = is_shell_safe((unsigned char)s[i]);
	if (plain) {
		sb_add(out, s, len);
		return 0;
	}
	sb_addc(out, '\'');
	for (start = i = 0; i < len; i++) {
		if (s[i] != '\'')
			continue;
		sb_add(out, s + start, i - start);
		sb_add(out, "'\\''", 4);
		start = i + 1;
	}
	sb_add(out, s + start, len - start);
	sb_addc(out, '\'');
	return 0;
}

int sbatch_quote(struct strbuf *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '\n' || s[i] == '\r' || s[i] == '\0')
			return -1;
	/* '=' stays bare: an #SBATCH argument is never a shell command word */
	for (i = 0; i < len; i++)
		if (!is_shell_safe((unsigned char)s[i]) && s[i] != '=')
			break;
	if (len && i == len) {
		sb_add(out, s, len);
		return 0;
	}
	/* a backslash escapes the next byte even inside quotes, so both ' and
	 * \ are escaped inside '...' */
	sb_addc(out, '\'');
	for (i = 0; i < len; i++) {
		if (s[i] == '\\' || s[i] == '\'')
			sb_addc(out, '\\');
		sb_addc(out, s[i]);
	}
	sb_addc(out, '\'');
	return 0;
}

int shell_name_ok(const char *s, size_t len)
{
	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}
