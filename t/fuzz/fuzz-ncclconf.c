/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for NCCL's configuration file as mad reads it
 * (mad_ncclconf_parse in lib/ncclconf): the input's first line is the
 * variable's name, the rest the file.  Beyond "no crash": a value found
 * fits its buffer, is what follows "NAME=" on the first line, not a
 * comment, that names it, and a smaller buffer gets its prefix. */
#include "fuzz.h"
#include "ncclconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], value[1100], small[8];
	const char *text;
	size_t n;
	int found;

	if (fuzz_name_then_file(data, size, name, sizeof(name), &text, &size) || strchr(name, '='))
		return 0;
	n = strlen(name);
	found = mad_ncclconf_parse(text, size, name, value, sizeof(value));
	check(mad_ncclconf_parse(text, size, name, small, sizeof(small)) == found);
	if (!found)
		return 0;
	check(strlen(value) <= 1023);
	check(strncmp(small, value, sizeof(small) - 1) == 0);
	/* the first line that names it, as NCCL's first setenv wins */
	for (const char *p = text, *end = text + size; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t len = e ? (size_t)(e - p) : (size_t)(end - p);

		len = strnlen(p, len);
		if (len > n && p[0] != '#' && !memcmp(p, name, n) && p[n] == '=') {
			size_t v = len - n - 1;

			if (v > 1023)
				v = 1023;
			check(strlen(value) == v && !memcmp(value, p + n + 1, v));
			return 0;
		}
		p += (e ? (size_t)(e - p) + 1 : (size_t)(end - p));
	}
	/* a name of 1023 bytes or more matches a longer key cut to it */
	check(n >= 1023);
	return 0;
}
