/* dataload.h: the data of mad-render: YAML files (every scalar a string,
 * as the template decides what is a number), JSON files (strings, integers,
 * booleans, null, arrays, objects) and -D key=value, merged into one map. */
#ifndef MAD_DATALOAD_H
#define MAD_DATALOAD_H

#include "value.h"

#include <stddef.h>

/* Parses TEXT (LEN bytes) of FILE, YAML or JSON by its name (.json is JSON,
 * anything else YAML), and merges its top-level map into DATA (a map):
 * later keys replace earlier ones.  0, or -1 with ERR as "FILE:LINE: why". */
int mad_data_load(struct arena *a, struct value *data, const char *file,
		  const char *text, size_t len, char *err, size_t size);

/* -D KEY=VALUE: KEY is NAME(.NAME)*, VALUE a string.  0, or -1 with ERR. */
int mad_data_define(struct arena *a, struct value *data, const char *def,
		    char *err, size_t size);

#endif
