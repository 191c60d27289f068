/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-mark STATUS: writes this rank's completion marker, done_rank<N> in
 * the job folder, as the calling user: once (a second call keeps the first
 * marker), atomically, first line STATUS.  Where the plugin cannot (spur
 * calls task_exit with an empty environment), job scripts end with
 *   mad-mark "$?"
 * mad-mark --ready ENDPOINT: the same for readiness, ready_rank<N> with
 * ENDPOINT on its first line, once the job's service answers (design.md
 * §13).                                                                   */
#include "config.h"

#include "common.h"
#include "contract.h"
#include "error.h"
#include "job/job.h"
#include "marker.h"
#include "options.h"
#include "site/plugstack.h"
#include "wait/ready.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	static struct mad_options opts;
	static char nodelist[65536];
	static struct mad_plugstack site;
	char **site_av;
	int site_ac;
	struct mad_facts facts;
	struct mad_contract c;
	char err[MAD_ERR_MAX];
	const char *ready = NULL;
	long status;
	int rc;

	mad_prog_init(argv[0], "mad-mark");
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		print_help("Usage: mad-mark STATUS\n"
			   "       mad-mark --ready ENDPOINT\n"
			   "Write this rank's completion marker (STATUS 0-255) in the job folder, or,\n"
			   "with --ready, its readiness marker: the job's service answers at ENDPOINT.\n"
			   "\n"
			   "      --ready ENDPOINT   the service is ready (for mad-wait --ready)\n"
			   "  -h, --help, -V, --version\n");
	if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")))
		print_version();
	if (argc >= 2 && !strncmp(argv[1], "--ready", 7) && (argv[1][7] == '\0' || argv[1][7] == '=')) {
		ready = argv[1][7] == '=' ? argv[1] + 8 : argc == 3 ? argv[2] : NULL;
		if (!ready || argc != (argv[1][7] == '=' ? 2 : 3))
			return usage_error("usage: mad-mark --ready ENDPOINT");
		if (mad_ready_check(ready, err, sizeof(err)))
			return usage_error("--ready: %s", err);
	}
	status = ready ? 0 : argc == 2 ? mad_parse_long(argv[1]) : MAD_NONE;
	if (status == MAD_NONE || status > 255)
		return usage_error("usage: mad-mark STATUS, STATUS an exit status 0-255 (got '%s')",
				   argc >= 2 ? argv[1] : "");
	if (mad_site_args(&site, &site_ac, &site_av, err, sizeof(err)))
		tool_error("warning: %s", err);
	rc = mad_job_from_env(&opts, &facts, &c, nodelist, sizeof(nodelist), site_ac, site_av, err,
			      sizeof(err));
	if (rc)
		die("%s", err);
	if (!*c.job_dir) {
		char name[32];

		mad_opt_env_name(MAD_OPT_RUN_DIR, name, sizeof(name));
		return usage_error("no run folder: set %s or %s (or %s= on the plugin's plugstack.conf line) to a folder all nodes share",
				   mad_opt_flag(MAD_OPT_RUN_DIR), name, mad_opt_name(MAD_OPT_RUN_DIR));
	}
	if (mad_contract_job_dir(&c, MAD_JOBDIR_JOIN, err, sizeof(err)))
		die("%s", err);
	if (*c.job_dir_notes) /* a folder planted under the job's name */
		tool_error("warning: %s", c.job_dir_notes);
	/* in the folder just opened and checked, never by its path again */
	if (mad_expected_write(c.job_dir_fd, c.job_dir, c.markers_expected, err, sizeof(err)) ||
	    (ready ? mad_ready_leave(c.job_dir_fd, c.job_dir, c.rank, c.collect_job_id, ready, err,
				     sizeof(err)) :
		     mad_marker_leave(c.job_dir_fd, c.job_dir, c.rank, c.collect_job_id,
				      (int)status, NULL, -1, err, sizeof(err))))
		die("%s", err);
	mad_contract_release(&c);
	return MAD_EXIT_OK;
}
