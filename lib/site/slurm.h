/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurm.h: the site's SLURM clients, run from PATH with a time limit
 * (squeue for lib/wait/queue, srun --version for mad-env).  Rules:
 * lib/site/plugstack.h. */
#ifndef MAD_SLURM_H
#define MAD_SLURM_H

#include "strbuf.h"

#include <stddef.h>

/* Runs ARGV (argv[0] from PATH, stdin /dev/null) and collects its stdout
 * and stderr into OUT and ERROUT.  0 when it ended by itself (STATUS is its
 * wait status), -1 with ERR when it could not start, printed more than
 * 16 MiB or did not end within TIMEOUT seconds (it is killed). */
int mad_slurm_run(char *const argv[], double timeout, struct strbuf *out, struct strbuf *errout,
		  int *status, char *err, size_t size);

/* The SLURM release the clients on PATH belong to (they must match the
 * controller's), from "srun --version": "24.11.7" into VERSION.  0, or -1
 * with ERR (no srun, no answer within TIMEOUT seconds, another answer). */
int mad_slurm_release(char *version, size_t vsize, double timeout, char *err, size_t size);

#endif
