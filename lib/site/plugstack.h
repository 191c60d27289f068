/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plugstack.h: finds mad.so's line in a plugstack.conf, so the tools get
 * the site's settings (run-dir=, timeout=, ...) the way the plugin does.
 * Where: $SPUR_PLUGSTACK when set, else SLURM's (PlugStackConfig in
 * slurm.conf, else plugstack.conf beside $SLURM_CONF or
 * /etc/slurm/slurm.conf, following its "include" lines), else spur's
 * /etc/spur/plugstack.conf.
 *
 * lib/site/ (plugstack, slurm) is the tools' view of the site's
 * installation: mad.so's plugstack line and the SLURM clients on PATH.
 * Its rules:
 * - Who links it: the tools only (mad-env, mad-mark, mad-wait, and the
 *   fuzz target of its parsers), through libmad.la; never mad.so
 *   (libmad-plugin.la leaves this folder out).  It uses the core; the core
 *   never uses it, and it never uses lib/wait/ (lib/wait/queue runs squeue
 *   through slurm.h).
 * - What it reads is the site's, not a job's: it decides nothing about a
 *   job, it says what the site configured and runs.
 * - Errors as in lib/error.h: -1 with (err, size), user bytes through
 *   mad_printable().  Never prints, exits or aborts: a file that cannot be
 *   read is an error for the tool to print (a warning in mad-env and
 *   mad-mark). */
#ifndef MAD_PLUGSTACK_H
#define MAD_PLUGSTACK_H

#include <stddef.h>

#define MAD_PLUGSTACK_ARGS 32

struct mad_plugstack {
	char file[4096]; /* the file holding the line */
	int line;
	char so[4096];       /* the plugin's path on the line */
	int spur_file;       /* FILE is spur's plugstack ($SPUR_PLUGSTACK, /etc/spur) */
	int spur_empty_path; /* two blanks before the path: spur reads "" (see .c) */
	int argc;            /* the arguments after the plugin's path */
	char *argv[MAD_PLUGSTACK_ARGS];
	char buf[8192];   /* argv points in here */
	char tried[8192]; /* the files looked at, for messages */
};

/* Parses TEXT, the contents of FILE, for mad.so's line.  Include lines are
 * followed with INCLUDE_DEPTH left (0: not at all).  1 found (PS filled),
 * 0 not there, -1 with ERR naming FILE:LINE. */
int mad_plugstack_parse(const char *text, size_t len, const char *file, int include_depth,
			struct mad_plugstack *ps, char *err, size_t size);

/* Looks in the places above, in that order.  1 found, 0 nowhere (PS->tried
 * lists the files read), -1 with ERR (a file that exists but cannot be read
 * or parsed). */
int mad_plugstack_find(struct mad_plugstack *ps, char *err, size_t size);

/* The site's arguments for mad.so, for mad-env and mad-mark: AC and AV
 * point into PS (0 and NULL without a line).  A plugstack.conf that cannot
 * be read is skipped: -1 with ERR, a warning for the tool to print; else 0. */
int mad_site_args(struct mad_plugstack *ps, int *ac, char ***av, char *err, size_t size);

/* The value of KEY=... on the line, or NULL. */
const char *mad_plugstack_value(const struct mad_plugstack *ps, const char *key);

/* The SLURM release mad.so at SO was built for (the record after
 * MAD_BUILT_FOR in its file, see version.h), "24.11.7" into VERSION.
 * 1 found, 0 the file has no record, -2 no such file, -1 with ERR. */
int mad_plugin_built_for(const char *so, char *version, size_t vsize, char *err, size_t size);

/* Why mad.so did not run in a job that asked for a model: the likeliest
 * reason, from the plugstack line found (FOUND is mad_plugstack_find's
 * result for PS), the plugin file on this node and RUNNING, the SLURM
 * release running the job ("" when unknown, NULL on spur), into WHY. */
void mad_plugin_absent_reason(const struct mad_plugstack *ps, int found, const char *running,
			      char *why, size_t size);

#endif
