/* mad-mark STATUS: writes this rank's completion marker, done_rank<N> in
 * the job folder, as the calling user: once (a second call keeps the first
 * marker), atomically, first line STATUS.  Where the plugin cannot (spur
 * calls task_exit with an empty environment), job scripts end with
 *   mad-mark "$?"                                                         */
#include "config.h"

#include "common.h"
#include "contract.h"
#include "job/job.h"
#include "marker.h"
#include "options.h"
#include "wait/plugstack.h"

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
	char err[2048];
	long status;
	int rc;

	mad_prog_init(argv[0], "mad-mark");
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		print_help("Usage: mad-mark STATUS\nWrite this rank's completion marker (STATUS 0-255) in the job folder.\n");
	if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")))
		print_version();
	status = argc == 2 ? mad_parse_long(argv[1]) : MAD_NONE;
	if (status == MAD_NONE || status > 255)
		return usage_error("usage: mad-mark STATUS, STATUS an exit status 0-255 (got '%s')",
				   argc >= 2 ? argv[1] : "");
	if (mad_site_args(&site, &site_ac, &site_av, err, sizeof(err)))
		tool_error("warning: %s", err);
	rc = mad_job_from_env(&opts, &facts, &c, nodelist, sizeof(nodelist), site_ac,
			      site_av, err, sizeof(err));
	if (rc)
		die("%s", err);
	if (!*c.job_dir) {
		char name[32];

		mad_opt_env_name(OPT_RUN_DIR, name, sizeof(name));
		return usage_error("no run folder: set %s or %s (or %s= on the plugin's plugstack.conf line) to a folder all nodes share",
				   mad_opt_flag(OPT_RUN_DIR), name, mad_opt_name(OPT_RUN_DIR));
	}
	if (mad_job_dir_expect(c.run_dir, c.job_dir, c.markers_expected, err, sizeof(err)) ||
	    mad_marker_leave(c.job_dir, c.rank, c.collect_job_id, (int)status, NULL, err, sizeof(err)))
		die("%s", err);
	return MAD_EXIT_OK;
}
