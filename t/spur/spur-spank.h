/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/* The 15 functions spurd exports (crates/spurd/build.rs), for the host and for plugins. */
typedef struct spank_handle *spank_t;

int spank_getenv(spank_t sp, const char *var, char *buf, int len);
int spank_setenv(spank_t sp, const char *var, const char *val, int overwrite);
int spank_unsetenv(spank_t sp, const char *var);
int spank_get_item(spank_t sp, int item, ...);
int spank_job_control_setenv(spank_t sp, const char *var, const char *val, int overwrite);
int spank_job_control_getenv(spank_t sp, const char *var, char *buf, int len);
int spank_job_control_unsetenv(spank_t sp, const char *var);
const char *spank_strerror(int err);
void slurm_error(const char *fmt, ...);
void slurm_info(const char *fmt, ...);
void slurm_verbose(const char *fmt, ...);
void slurm_debug(const char *fmt, ...);
void slurm_debug2(const char *fmt, ...);
void slurm_debug3(const char *fmt, ...);
void slurm_spank_log(const char *fmt, ...);

/* Seeds SP with NAME=VALUE strings (entries without '=' are skipped); the job id comes
 * from SLURM_JOB_ID, uid and gid from the process. */
void spur_handle_seed(struct spank_handle *sp, char **vars, int n);
void spur_handle_free(struct spank_handle *sp);
int spur_getenv(struct spank_handle *sp, const char *var, char *buf, int len);
/* Non-zero: the log functions print nothing (the fuzz target's millions of launches). */
extern int spur_quiet;

#endif
