/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-env: the env contract in a job script, computed by the same lib/
 * code as mad.so, for where the plugin is not loaded or cannot wait (spur).
 *
 *   eval "$(mad-env)"      exports NODE_RANK, MASTER_ADDR, ...
 *   mad-env --explain      each value and where it came from
 *   mad-env --json
 *   mad-env --check        every task agrees and reaches rank 0, in seconds
 *
 * On any failure it writes the reason to stderr and "exit 1" to stdout, so
 * an eval in the job script stops the script instead of running on with an
 * empty MASTER_ADDR. */
#include "config.h"

#include "clock.h"
#include "common.h"
#include "contract.h"
#include "error.h"
#include "job/barrier.h"
#include "job/check.h"
#include "job/job.h"
#include "marker.h"
#include "options.h"
#include "rendezvous.h"
#include "shquote.h"
#include "strbuf.h"
#include "site/plugstack.h"
#include "site/slurm.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"Usage: eval \"$(mad-env)\"  |  mad-env --explain | --json | --check[=SECONDS] | --barrier\n"
	"Print the mad env contract (NODE_RANK, NNODES, MASTER_ADDR, MASTER_PORT,\n"
	"MAD_COLLECT_JOB_ID, ...) for this task as shell exports, completing a\n"
	"pending rendezvous (array fan-out) first.  Options come from MAD_* and\n"
	"SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_* variables.\n"
	"\n"
	"  -e, --explain   each variable, its value and its source\n"
	"  -j, --json      one JSON object\n"
	"  -c, --check[=SECONDS]  run in every task before the real program: all\n"
	"                  ranks agree on RANK, WORLD_SIZE, NNODES, MASTER_ADDR and\n"
	"                  MASTER_PORT and reach rank 0 over TCP within SECONDS\n"
	"                  (default 10); else exit 1 with a table naming the rank\n"
	"  -b, --barrier   wait until every rank of the array (or of this srun\n"
	"                  step) has started, up to the timeout; prints nothing;\n"
	"                  else exit 1 naming the ranks that did not start\n"
	"  -h, --help      this help;  -V, --version\n"
	"\n"
	"On failure: the reason on stderr, \"exit 1\" on stdout (stops an eval), exit 1.\n";

/* What mad-env prints: shell exports (the default), --explain, --json. */
enum out_mode { OUT_EXPORTS, OUT_EXPLAIN, OUT_JSON };

struct out {
	enum out_mode mode;
	struct strbuf text;
	cJSON *json;
};

static int emit(void *ctx, const char *name, const char *value, const char *source)
{
	struct out *o = ctx;

	if (!value) { /* to be unset (lib/contract.h) */
		if (o->mode == OUT_EXPORTS) {
			sb_adds(&o->text, "unset ");
			sb_adds(&o->text, name);
		} else if (o->mode == OUT_EXPLAIN) {
			sb_adds(&o->text, name);
			sb_adds(&o->text, "    # ");
			sb_adds(&o->text, source);
		} else if (!cJSON_AddNullToObject(o->json, name)) {
			return -1;
		}
		if (o->mode != OUT_JSON)
			sb_addc(&o->text, '\n');
		return o->text.failed ? -1 : 0;
	}
	switch (o->mode) {
	case OUT_EXPORTS:
		sb_adds(&o->text, "export ");
		sb_adds(&o->text, name);
		sb_addc(&o->text, '=');
		if (shell_quote(&o->text, value, strlen(value)))
			return -1;
		sb_addc(&o->text, '\n');
		break;
	case OUT_EXPLAIN:
		sb_adds(&o->text, name);
		sb_addc(&o->text, '=');
		sb_adds(&o->text, value);
		sb_adds(&o->text, "    # ");
		sb_adds(&o->text, source);
		sb_addc(&o->text, '\n');
		break;
	case OUT_JSON:
		if (!cJSON_AddStringToObject(o->json, name, value))
			return -1;
	}
	return o->text.failed ? -1 : 0;
}

/* --check: this task's values (its environment, else the contract just
 * computed) against every other task's, through rank 0 (lib/job/check). */
static int run_check(const struct mad_options *opts, const struct mad_contract *c, const char *seconds)
{
	struct mad_check_values v;
	struct strbuf table = STRBUF_INIT;
	struct rlimit fds;
	long limit = seconds ? mad_parse_long(seconds) : 10;
	double start = mad_monotonic();
	char err[MAD_ERR_MAX];
	int rc;

	if (limit < 1 || limit > 3600)
		return usage_error("--check=%s: not a number of seconds from 1 to 3600", seconds);
	/* rank 0 holds a connection per rank until the verdict: up to the hard limit */
	if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
		fds.rlim_cur = fds.rlim_max;
		setrlimit(RLIMIT_NOFILE, &fds);
	}
	if (mad_check_values_from(&v, opts, c, mad_process_getenv, NULL, err, sizeof(err))) {
		tool_error("--check: %s", err);
		return MAD_EXIT_FAIL;
	}
	rc = mad_check_run(&v, start + (double)limit, &table, err, sizeof(err));
	if (table.len)
		fputs(sb_cstr(&table), stderr);
	if (rc)
		tool_error("--check: %s", err);
	else if (v.rank == 0)
		printf("mad-env: check ok: %ld ranks agree on WORLD_SIZE=%ld NNODES=%ld MASTER_ADDR=%s MASTER_PORT=%ld and reached rank 0 in %.2f s\n",
		       v.world_size, v.world_size, v.nnodes, v.master_addr, v.master_port,
		       mad_monotonic() - start);
	sb_free(&table);
	return rc ? MAD_EXIT_FAIL : MAD_EXIT_OK;
}

/* --barrier: this rank records its start in the job folder and waits for
 * all (lib/job/barrier).  The ranks are the array's nodes in the batch script
 * (array fan-out, spur's per-node script), the step's tasks in an srun
 * step.  SLURM's batch script of a nodes fan-out job is one task on the
 * first node: it would wait for ranks that never run a batch script. */
static int run_barrier(struct mad_contract *c)
{
	long step = c->step_id, rank = step == MAD_NONE ? c->rank : c->task_rank;
	long nranks = step == MAD_NONE ? c->nnodes : c->world_size;
	char host[256] = "?", err[MAD_ERR_MAX];

	if (!*c->job_dir)
		die("--barrier: no job folder: set run-dir= on mad.so's plugstack line, --mad-run-dir or MAD_RUN_DIR to a folder every node mounts");
	if (step == MAD_NONE && c->fanout == MAD_FANOUT_NODES && c->scheduler == MAD_SCHED_SLURM &&
	    c->nnodes > 1)
		die("--barrier: the batch script of a nodes fan-out job runs on the first node only; call it in every task of an srun step, or use --mad-fanout=array");
	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "?");
	if ((c->job_dir_fd < 0 && mad_contract_job_dir(c, MAD_JOBDIR_JOIN, err, sizeof(err))) ||
	    mad_contract_run_begin(c, err, sizeof(err)) ||
	    mad_barrier_wait(c->job_dir_fd, c->job_dir, step == MAD_NONE ? -1 : step, rank, nranks,
			     host, c->uid, &c->run, c->timeout, err, sizeof(err)))
		die("%s", err);
	mad_contract_release(c);
	return MAD_EXIT_OK;
}

/* --explain in a job that asked for a model where mad.so did not run (it
 * sets MAD_ENV_FROM=spank): says so, with the likeliest reason.  FOUND: a
 * plugstack line for mad.so was found (SITE). */
static void explain_plugin_absent(struct strbuf *text, const struct mad_plugstack *site, int found,
				  enum mad_scheduler scheduler)
{
	const char *from = getenv("MAD_ENV_FROM");
	char running[64] = "", why[4096], err[MAD_ERR_MAX];
	int spur = scheduler == MAD_SCHED_SPUR;

	if (from && strcmp(from, "spank") == 0)
		return;
	if (!spur && mad_slurm_release(running, sizeof(running), 10, err, sizeof(err)))
		running[0] = '\0'; /* unknown: the reason says so */
	mad_plugin_absent_reason(site, found, spur ? NULL : running, why, sizeof(why));
	sb_adds(text, "# mad.so did not run in this job (a model was asked for, and "
		      "MAD_ENV_FROM is not 'spank'): ");
	sb_adds(text, why);
	sb_addc(text, '\n');
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "explain", no_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "check", optional_argument, NULL, 'c' },
		{ "barrier", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct mad_options opts;
	static char nodelist[65536];
	static struct mad_plugstack site;
	char **site_av;
	int site_ac;
	struct out out = { 0, STRBUF_INIT, NULL };
	struct mad_facts facts;
	struct mad_contract c;
	char err[MAD_ERR_MAX], device_msg[MAD_ERR_MAX];
	const char *why, *check_seconds = NULL;
	int ch, check = 0, barrier = 0, mismatch;

	mad_prog_init(argv[0], "mad-env");
	mad_fail_stdout = "exit 1\n";
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ejc::bhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			barrier = 1;
			break;
		case 'c':
			check = 1;
			check_seconds = optarg;
			break;
		case 'e':
			out.mode = OUT_EXPLAIN;
			break;
		case 'j':
			out.mode = OUT_JSON;
			break;
		case 'h':
			print_help(usage_text);
		case 'V':
			print_version();
		default:
			return usage_bad_option(ch, argv);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	why = getenv("MAD_ERROR");
	if (why && *why)
		die("the job cannot run: %s (MAD_ERROR)", why);
	if (mad_site_args(&site, &site_ac, &site_av, err, sizeof(err)))
		tool_error("warning: %s", err);
	if (mad_job_from_env(&opts, &facts, &c, nodelist, sizeof(nodelist), site_ac, site_av, err,
			     sizeof(err)))
		die("%s", err);
	/* the attempt's job folder (jobdir.h): made where this writes in it,
	 * else only found, so --explain names what it passed over */
	if (*c.run_dir && out.mode == OUT_EXPORTS &&
	    mad_contract_job_dir(&c, MAD_JOBDIR_JOIN, err, sizeof(err)))
		die("%s", err);
	/* --explain and --json say what they found, and why not */
	if (*c.run_dir && out.mode != OUT_EXPORTS &&
	    mad_contract_job_dir(&c, MAD_JOBDIR_FIND, err, sizeof(err)) < 0)
		snprintf(c.job_dir_notes, sizeof(c.job_dir_notes), "%.1000s", err);
	if (out.mode == OUT_EXPORTS && *c.job_dir_notes)
		tool_error("warning: %s", c.job_dir_notes);
	/* as the script starts, before anything of an earlier run in the
	 * folder is read (run.h) */
	if (out.mode == OUT_EXPORTS && mad_contract_run_begin(&c, err, sizeof(err)))
		die("%s", err);
	if (c.needs_rendezvous && mad_contract_rendezvous(&opts, &c, 1, err, sizeof(err)))
		die("%s", err);
	if (mad_contract_ifname(&opts, &facts, &c, err, sizeof(err)))
		die("%s", err);
	/* set_device(LOCAL_RANK) cannot work (design.md §7): with strict the
	 * task stops here; else one line, unless mad.so said it in this task */
	mismatch = mad_contract_device_mismatch(&c, device_msg, sizeof(device_msg));
	if (mismatch && c.gpu_strict && !check && out.mode == OUT_EXPORTS)
		die("%s", device_msg);
	if (mismatch && !check && out.mode == OUT_EXPORTS &&
	    !(getenv("MAD_ENV_FROM") && !strcmp(getenv("MAD_ENV_FROM"), "spank")))
		tool_error("%s", device_msg);
	/* after the rendezvous: rank 0 of an array has published its address
	 * when its barrier record appears.  No port check: a head (Ray) that
	 * waits here may hold MASTER_PORT already. */
	if (barrier)
		return run_barrier(&c);
	/* the check binds MASTER_PORT itself, on the rank its environment names */
	if (check) {
		mad_contract_release(&c);
		if (mismatch) {
			tool_error("--check: %s", device_msg);
			if (c.gpu_strict)
				return MAD_EXIT_FAIL;
		}
		return run_check(&opts, &c, check_seconds);
	}
	if (out.mode == OUT_EXPORTS && mad_contract_check_port(&c, err, sizeof(err)))
		die("%s", err);
	/* mad-wait learns from it how many markers to expect */
	if (out.mode == OUT_EXPORTS && c.job_dir_fd >= 0 &&
	    mad_expected_write(c.job_dir_fd, c.job_dir, c.markers_expected, err, sizeof(err)))
		die("%s", err);
	mad_contract_release(&c);
	if (out.mode == OUT_JSON)
		out.json = cJSON_CreateObject();
	if ((out.mode == OUT_JSON && !out.json) ||
	    mad_contract_export(&opts, &c, "mad-env", emit, &out))
		die("out of memory, or a value no shell word can hold");
	if (out.mode == OUT_EXPLAIN && *opts.value[MAD_OPT_MODEL])
		explain_plugin_absent(&out.text, &site, site_av != NULL, c.scheduler);
	if (out.mode == OUT_EXPLAIN && mismatch) {
		sb_adds(&out.text, "# ");
		sb_adds(&out.text, device_msg);
		sb_addc(&out.text, '\n');
	}
	if (out.mode == OUT_JSON) {
		char *text = cJSON_Print(out.json);

		if (!text)
			die("out of memory");
		puts(text);
		free(text);
		cJSON_Delete(out.json);
	} else {
		fputs(out.text.buf, stdout);
	}
	sb_free(&out.text);
	return finish_output() ? MAD_EXIT_FAIL : MAD_EXIT_OK;
}
