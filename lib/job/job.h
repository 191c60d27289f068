/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job.h: a job as a tool inside it sees it (mad-env, mad-mark, mad-wait).
 *
 * lib/job/ (job, check) is the tools' side of a job.  Its rules:
 * - Who links it: the tools only, through libmad.la; never mad.so
 *   (libmad-plugin.la leaves this folder out): the plugin reads the job
 *   through SPANK, never through the process environment of slurmstepd or
 *   spurd.  It uses the core; the core never uses it.
 * - It may read the process environment (getenv) and files, and open
 *   sockets (check); a tool is one job's process, so that is its own.
 * - Errors as in lib/ (error.h): -1 with an (err, size) message; never a
 *   print, an exit or an abort. */
#ifndef MAD_JOB_H
#define MAD_JOB_H

#include "contract.h"
#include "options.h"

#include <stddef.h>

/* getenv(3) as mad_getenv_fn (CTX unused). */
int mad_process_getenv(void *ctx, const char *name, char *buf, size_t size);

/* What a job script has: options from the environment (and AC/AV, the
 * site's plugstack arguments, as the plugin gets them), facts from the
 * environment, and the contract computed from both (mad-env, mad-mark).
 * 0, 1 (ERR says so) when no model is set anywhere, -1 with ERR: the same
 * rule as the plugin, through mad_options_model_asked(). */
int mad_job_from_env(struct mad_options *opts, struct mad_facts *facts, struct mad_contract *c,
		     char *nodelist, size_t nsize, int ac, char *const av[], char *err, size_t size);

#endif
