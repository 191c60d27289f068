/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for what rank 0 of mad-env --check reads from the
 * network: one line per rank.  Beyond "no crash": an accepted line has every
 * field, numbers that were digits, and words that fit their buffers. */
#include "job/check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mad_check_values v;
	char line[1024];

	/* rank 0 reads at most one buffer of a line, and stops at the newline */
	if (size >= sizeof(line))
		size = sizeof(line) - 1;
	memcpy(line, data, size);
	line[size] = '\0';
	if (mad_check_parse_line(line, &v) != 0)
		return 0;
	check(v.rank >= 0 && v.world_size >= 0 && v.nnodes >= 0 && v.master_port >= 0);
	check(strlen(v.master_addr) < sizeof(v.master_addr) && strlen(v.host) < sizeof(v.host));
	check(!strchr(v.master_addr, ' ') && !strchr(v.host, ' '));
	return 0;
}
