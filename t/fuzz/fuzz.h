/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz.h: what the libFuzzer targets whose input is a name, then a file
 * (fuzz-hosts, fuzz-ncclconf), share: the split and the check that stops
 * the run on a broken property. */
#ifndef MAD_FUZZ_H
#define MAD_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property that must hold: libFuzzer reports the input that broke it. */
static inline void check(int ok)
{
	if (!ok)
		abort();
}

/* The input's first line into NAME (SIZE bytes), the rest in *TEXT and
 * *LEN: 0, or -1 when the line does not fit or holds a NUL. */
static inline int fuzz_name_then_file(const uint8_t *data, size_t size, char *name, size_t nsize,
				      const char **text, size_t *len)
{
	const char *in = (const char *)data, *nl = memchr(in, '\n', size);
	size_t n = nl ? (size_t)(nl - in) : size;

	if (n >= nsize || memchr(in, '\0', n))
		return -1;
	memcpy(name, in, n);
	name[n] = '\0';
	*text = in + (nl ? n + 1 : n);
	*len = size - (nl ? n + 1 : n);
	return 0;
}

#endif
