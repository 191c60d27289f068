/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for NCCL's configuration file as mad reads it
 * (mad_ncclconf_parse in lib/ncclconf): the input's first line is the
 * variable's name, the rest the file.  Beyond "no crash": the answer is
 * NCCL's own, from NCCL's setEnvFile (src/misc/param.cc, v2.30.7-1) run on
 * the same bytes through fmemopen and fgets, its first setenv that names
 * NAME winning; a value fits its buffer and a smaller buffer gets its
 * prefix. */
#include "fuzz.h"
#include "ncclconf.h"

#include <stdio.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* setEnvFile, line for line, for the one NAME: 1 with its value. */
static int nccl_set_env_file(const char *text, size_t size, const char *name, char *out)
{
	char line[4096], envVar[1024], envValue[1024];
	int found = 0;
	FILE *file;

	if (size == 0)
		return 0;
	file = fmemopen((void *)text, size, "r");
	check(file != NULL);
	while (!found && fgets(line, (int)sizeof(line), file) != NULL) {
		size_t len = strlen(line);
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (line[0] == '#')
			continue;
		int s = 0;
		while (line[s] != '\0' && line[s] != '=')
			s++;
		if (line[s] == '\0')
			continue;
		strncpy(envVar, line, MIN(1023, s));
		envVar[MIN(1023, s)] = '\0';
		s++;
		strncpy(envValue, line + s, 1023);
		envValue[1023] = '\0';
		/* setenv(envVar, envValue, 0): an empty name is refused */
		if (envVar[0] && !strcmp(envVar, name)) {
			strcpy(out, envValue);
			found = 1;
		}
	}
	fclose(file);
	return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[1100], value[1100], nccl[1024], small[8];
	const char *text;
	int found;

	if (fuzz_name_then_file(data, size, name, sizeof(name), &text, &size))
		return 0;
	found = mad_ncclconf_parse(text, size, name, value, sizeof(value));
	check(found == nccl_set_env_file(text, size, name, nccl));
	check(mad_ncclconf_parse(text, size, name, small, sizeof(small)) == found);
	check(mad_ncclconf_parse(text, size, name, NULL, 0) == found);
	if (!found)
		return 0;
	check(strlen(value) <= 1023 && !strcmp(value, nccl));
	check(strncmp(small, value, sizeof(small) - 1) == 0 && strlen(small) < sizeof(small));
	return 0;
}
