/* spur-spank.h: spur's SPANK API, emulated (see spur-spank.c). */
#ifndef MAD_SPUR_SPANK_H
#define MAD_SPUR_SPANK_H

#include <stddef.h>
#include <stdint.h>

struct spank_handle {
	char **env;             /* NAME=VALUE, NULL-terminated */
	size_t n, cap;
	uint32_t job_id, uid, gid;
};

/* Seeds SP with NAME=VALUE strings (entries without '=' are skipped). */
void spur_handle_seed(struct spank_handle *sp, char **vars, int n);
void spur_handle_free(struct spank_handle *sp);
int spur_getenv(struct spank_handle *sp, const char *var, char *buf, int len);
/* Non-zero: the log functions print nothing (the fuzz target's millions of
 * launches). */
extern int spur_quiet;

#endif
