/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dataload.h: the data of mad-render: YAML files (every scalar a string,
 * as the template decides what is a number), JSON files (strings, integers,
 * booleans, null, arrays, objects) and -D key=value, merged into one map.
 *
 * Part of lib/render/, for the tools only, never mad.so (the folder's rules
 * are in template.h).  Errors: -1 with ERR (SIZE bytes) naming the input,
 * as "FILE:LINE: why" where there is a line.  Never opens a file (the tool
 * reads it and passes its text), prints, exits or keeps a global of its
 * own; nesting is capped. */
#ifndef MAD_DATALOAD_H
#define MAD_DATALOAD_H

#include "value.h"

#include <stddef.h>

/* Parses TEXT (LEN bytes) of FILE, YAML or JSON by its name (.json is JSON,
 * anything else YAML), and merges its top-level map into DATA (a map):
 * later keys replace earlier ones.  0, or -1 with ERR as "FILE:LINE: why". */
int mad_data_load(struct arena *a, struct value *data, const char *file, const char *text,
		  size_t len, char *err, size_t size);

/* -D KEY=VALUE: KEY is NAME(.NAME)*, VALUE a string.  0, or -1 with ERR. */
int mad_data_define(struct arena *a, struct value *data, const char *def, char *err, size_t size);

#endif
