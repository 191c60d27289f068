/* spur-spank.h: spur's SPANK API, emulated (see spur-spank.c). */
#ifndef MAD_SPUR_SPANK_H
#define MAD_SPUR_SPANK_H

#include <stddef.h>
#include <stdint.h>

/* NAME=VALUE strings, NULL-terminated: spur's HashMap<String, String>. */
struct spur_env {
	char **v;
	size_t n, cap;
};

/* spur's SpankHandle (crates/spur-spank/src/lib.rs): the job context, the job env, and the
 * job-control env that spank_job_control_* fill and nothing reads. */
struct spank_handle {
	struct spur_env env, job_control;
	uint32_t job_id, uid, gid;
};

/* Seeds SP with NAME=VALUE strings (entries without '=' are skipped); the job id comes
 * from SLURM_JOB_ID, uid and gid from the process. */
void spur_handle_seed(struct spank_handle *sp, char **vars, int n);
void spur_handle_free(struct spank_handle *sp);
int spur_getenv(struct spank_handle *sp, const char *var, char *buf, int len);
/* Non-zero: the log functions print nothing (the fuzz target's millions of launches). */
extern int spur_quiet;

#endif
