/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-wait [options] JOBID...: waits until every rank of each job has
 * written its completion marker, and exits with what they say (design.md §10).
 * The scheduler is only a liveness guard: one squeue call per interval for
 * all jobs.  Always bounded by a timeout; Ctrl-C leaves the jobs alone. */
#include "config.h"

#include "clock.h"
#include "common.h"
#include "decimal.h"
#include "error.h"
#include "options.h"
#include "strbuf.h"
#include "jobdir.h"
#include "wait/follow.h"
#include "wait/prune.h"
#include "site/plugstack.h"
#include "wait/queue.h"
#include "wait/wait.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOBS_MAX 256
#define SQUEUE_TIMEOUT 60.0
#define DAY 86400.0

static const char usage[] =
	"Usage: mad-wait [options] JOBID...\n"
	"Wait for every rank of the mad jobs JOBID... to write its completion marker.\n"
	"\n"
	"  -d, --run-dir DIR          the run folder (default: $MAD_RUN_DIR, else run-dir=\n"
	"                             on mad.so's plugstack.conf line)\n"
	"  -n, --nnodes N             markers to expect when the job folder does not say\n"
	"  -t, --timeout DURATION     give up after DURATION (N, Ns, Nm, Nh, Nd; default:\n"
	"                             the job's time limit plus --overtime and --grace,\n"
	"                             at most 24h)\n"
	"  -i, --interval DURATION    squeue at most once per DURATION (default 30s;\n"
	"                             x1.5 per call up to 4x)\n"
	"  -g, --grace DURATION       after a job left the queue, wait this long for its\n"
	"                             markers (default 60s)\n"
	"      --startup-grace DURATION  a job not listed yet is pending this long\n"
	"                             (default 5m: spur lists new jobs late)\n"
	"      --overtime DURATION    a job listed running this long past its time limit\n"
	"                             is lost: exit 2, 1 with --ready (default 10m;\n"
	"                             SLURM's OverTimeLimit plus KillWait, spur's 30s)\n"
	"      --unknown-budget DURATION give up (exit 3) when squeue fails this long\n"
	"                             (default 5m)\n"
	"      --no-requeue           a failed marker ends the wait even when the job is\n"
	"                             requeued (default: the final attempt decides)\n"
	"      --prune=AGE            wait for nothing: remove the job folders of jobs no\n"
	"                             longer in the queue where nothing was written for\n"
	"                             AGE (yours; root: everyone's), naming each\n"
	"      --ready                wait until the job is ready (rank 0 ran mad-mark\n"
	"                             --ready ENDPOINT) and print the endpoint; exit 1 at\n"
	"                             once if the job ends first\n"
	"  -f, --follow[=PATTERN]     stream each rank's output file, prefixed by rank\n"
	"                             (default slurm-%A_%a.out for arrays, else slurm-%j.out)\n"
	"  -j, --json                 print the outcome as JSON on stdout\n"
	"  -q, --quiet                no progress, only errors\n"
	"  -h, --help, -V, --version\n"
	"\n"
	"Exit: 0 all ranks exited 0; 1 a rank failed; 2 a job left the queue with\n"
	"markers missing, or is listed running --overtime past its time limit; 3 the\n"
	"scheduler could not be asked, or cannot say whose job it is (a user this host\n"
	"cannot resolve, clusters that disagree); 64 usage; 124 timeout; 130 interrupted\n"
	"(the jobs are left alone).\n";

struct cli {
	const char *run_dir, *run_dir_from, *follow;
	double timeout, interval, unknown_budget, prune;
	int json, quiet, following;
	struct mad_wait_cfg cfg;
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* "90", "90s", "5m", "2h", "1d", "1.5h": seconds, or -1. */
static double parse_duration(const char *s)
{
	char *end;
	double v, unit = 1;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (*end) {
		if (end[1])
			return -1;
		switch (*end) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = DAY;
			break;
		default:
			return -1;
		}
	}
	v *= unit;
	return v >= 0 && v <= 365 * DAY ? v : -1;
}

static int duration_opt(const char *name, const char *arg, double *out, int zero_ok)
{
	double v = parse_duration(arg);

	if (v < 0 || (!zero_ok && v == 0))
		return usage_error("%s: '%s' is not a duration (N, Ns, Nm, Nh or Nd)", name, arg);
	*out = v;
	return 0;
}

static int parse_cli(int argc, char **argv, struct cli *c)
{
	enum { ARG_STARTUP = 256, ARG_OVERTIME, ARG_BUDGET, ARG_NO_REQUEUE, ARG_READY, ARG_PRUNE };
	static const struct option longopts[] = {
		{ "run-dir", required_argument, NULL, 'd' },
		{ "nnodes", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "grace", required_argument, NULL, 'g' },
		{ "startup-grace", required_argument, NULL, ARG_STARTUP },
		{ "overtime", required_argument, NULL, ARG_OVERTIME },
		{ "unknown-budget", required_argument, NULL, ARG_BUDGET },
		{ "no-requeue", no_argument, NULL, ARG_NO_REQUEUE },
		{ "ready", no_argument, NULL, ARG_READY },
		{ "prune", required_argument, NULL, ARG_PRUNE },
		{ "follow", optional_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc = 0;

	mad_prog_init(argv[0], "mad-wait");
	c->timeout = -1;
	c->interval = 30;
	c->unknown_budget = 300;
	c->cfg.grace = 60;
	c->cfg.startup_grace = 300;
	c->cfg.overtime = 600;
	c->cfg.empty_grace = 5;
	c->cfg.gone_polls = 3;
	c->cfg.nnodes = -1;
	c->prune = -1;
	opterr = 0;
	while (!rc && (opt = getopt_long(argc, argv, ":d:n:t:i:g:f::jqhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			if (!*optarg)
				return usage_error("--run-dir: empty");
			c->run_dir = optarg;
			c->run_dir_from = "--run-dir";
			break;
		case 'n':
			if (mad_decimal(optarg, 1, MAD_NNODES_MAX, &c->cfg.nnodes))
				return usage_error("--nnodes: '%s' is not a number between 1 and %d",
						   optarg, MAD_NNODES_MAX);
			break;
		case 't':
			rc = duration_opt("--timeout", optarg, &c->timeout, 1);
			break;
		case 'i':
			rc = duration_opt("--interval", optarg, &c->interval, 0);
			break;
		case 'g':
			rc = duration_opt("--grace", optarg, &c->cfg.grace, 1);
			break;
		case ARG_STARTUP:
			rc = duration_opt("--startup-grace", optarg, &c->cfg.startup_grace, 1);
			break;
		case ARG_OVERTIME:
			rc = duration_opt("--overtime", optarg, &c->cfg.overtime, 1);
			break;
		case ARG_BUDGET:
			rc = duration_opt("--unknown-budget", optarg, &c->unknown_budget, 1);
			break;
		case ARG_NO_REQUEUE:
			c->cfg.no_requeue = 1;
			break;
		case ARG_READY:
			c->cfg.ready = 1;
			break;
		case ARG_PRUNE:
			rc = duration_opt("--prune", optarg, &c->prune, 1);
			break;
		case 'f':
			c->following = 1;
			c->follow = optarg;
			break;
		case 'j':
			c->json = 1;
			break;
		case 'q':
			c->quiet = 1;
			break;
		case 'h':
			print_help(usage);
		case 'V':
			print_version();
		default:
			return usage_bad_option(opt, argv);
		}
	}
	if (!rc && c->prune >= 0 && optind < argc)
		return usage_error("--prune takes no job id (got '%s')", argv[optind]);
	if (!rc && c->prune < 0 && optind >= argc)
		return usage_error("no job id given");
	return rc;
}

/* --run-dir, else MAD_RUN_DIR, else run-dir= on mad.so's plugstack line. */
static int find_run_dir(struct cli *c, char *buf, size_t size)
{
	static struct mad_plugstack ps;
	static char env_name[32];
	char err[MAD_ERR_MAX];
	const char *v;
	struct stat st;
	int rc;

	mad_opt_env_name(MAD_OPT_RUN_DIR, env_name, sizeof(env_name));
	/* MAD_RUN_DIR and the plugstack line by mad.so's rules (options.h);
	 * --run-dir is mad-wait's own path */
	if (!c->run_dir && (v = getenv(env_name)) && *v) {
		if (mad_opt_check_from(MAD_OPT_RUN_DIR, v, MAD_SRC_ENV, err, sizeof(err))) {
			tool_error("%s", err);
			return MAD_EXIT_USAGE;
		}
		c->run_dir = v;
		c->run_dir_from = env_name;
	}
	if (!c->run_dir) {
		rc = mad_plugstack_find(&ps, err, sizeof(err));
		if (rc < 0) {
			tool_error("%s", err);
			return MAD_EXIT_USAGE;
		}
		if (rc == 0 || !(v = mad_plugstack_value(&ps, mad_opt_name(MAD_OPT_RUN_DIR))) || !*v) {
			tool_error("no run folder: give --run-dir DIR, set %s, or add %s=DIR to mad.so's line in plugstack.conf (%s %s)",
				   env_name, mad_opt_name(MAD_OPT_RUN_DIR),
				   rc ? "the line in" : "looked in", rc ? ps.file : ps.tried);
			return MAD_EXIT_USAGE;
		}
		if (mad_opt_check_from(MAD_OPT_RUN_DIR, v, MAD_SRC_PLUGSTACK, err, sizeof(err))) {
			tool_error("%s", err);
			return MAD_EXIT_USAGE;
		}
		snprintf(buf, size, "%s:%d", ps.file, ps.line);
		c->run_dir = v;
		c->run_dir_from = buf;
	}
	if (stat(c->run_dir, &st) || !S_ISDIR(st.st_mode)) {
		/* errno is stat's only when stat failed */
		const char *why = access(c->run_dir, F_OK) ? strerror(errno) : "not a folder";

		tool_error("run folder '%s' (from %s): %s", c->run_dir, c->run_dir_from, why);
		return MAD_EXIT_USAGE;
	}
	return 0;
}

static int parse_job_ids(int n, char **arg, struct mad_wait_job *jobs, const char *run_dir)
{
	for (int i = 0; i < n; i++) {
		long id;

		/* a job id has one spelling: no leading zero */
		if (arg[i][0] == '0' || mad_decimal(arg[i], 1, 4294967294L, &id)) {
			if (strchr(arg[i], '_'))
				return usage_error("job id '%s': give the array job id (the number before '_')",
						   arg[i]);
			return usage_error("'%s' is not a job id", arg[i]);
		}
		for (int k = 0; k < i; k++)
			if (jobs[k].id == id)
				return usage_error("job id '%s' given twice", arg[i]);
		mad_wait_job_init(&jobs[i], id, run_dir);
	}
	return 0;
}

/* ------------------------------------------------------------ watching */

struct watch {
	int fd; /* inotify, or -1 (then only re-reads) */
	int run_wd;
	int job_wd[JOBS_MAX];
	long job_restart[JOBS_MAX]; /* the attempt JOB_WD watches */
};

static void watch_init(struct watch *w, const char *run_dir, int n)
{
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->run_wd = w->fd < 0 ?
			    -1 :
			    inotify_add_watch(w->fd, run_dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
	for (int i = 0; i < n; i++)
		w->job_wd[i] = -1;
}

static void watch_jobs(struct watch *w, struct mad_wait_job *jobs, int n)
{
	for (int i = 0; i < n && w->fd >= 0; i++) {
		if (!jobs[i].dir_seen || (w->job_wd[i] >= 0 && w->job_restart[i] == jobs[i].restart))
			continue;
		if (w->job_wd[i] >= 0) /* a newer attempt's folder */
			inotify_rm_watch(w->fd, w->job_wd[i]);
		w->job_wd[i] =
			inotify_add_watch(w->fd, jobs[i].dir,
					  IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
		w->job_restart[i] = jobs[i].restart;
	}
}

/* Sleeps until an event, a signal or TIMEOUT seconds; 1 when woken by an
 * event in a watched folder. */
static int watch_sleep(struct watch *w, double timeout)
{
	struct pollfd pf = { w->fd, POLLIN, 0 };
	char buf[8192];
	int ms = timeout <= 0 ? 0 : (int)ceil(timeout * 1000);

	if (poll(w->fd >= 0 ? &pf : NULL, w->fd >= 0 ? 1 : 0, ms) <= 0)
		return 0;
	while (read(w->fd, buf, sizeof(buf)) > 0)
		;
	return 1;
}

/* ------------------------------------------------------------ reporting */

static const char *rank_state_name(enum mad_rank_state s)
{
	static const char *const names[] = { "missing", "missing", "done", "failed", "invalid" };

	return names[s];
}

static const char *verdict_name(int v)
{
	switch (v) {
	case MAD_WAIT_OK:
		return "success";
	case MAD_WAIT_FAILED:
		return "failed";
	case MAD_WAIT_GONE:
		return "gone";
	case MAD_WAIT_UNKNOWN:
		return "unknown";
	case MAD_WAIT_TIMEOUT:
		return "timeout";
	case MAD_WAIT_INTERRUPTED:
		return "interrupted";
	default:
		return "pending";
	}
}

static void progress(const struct cli *c, struct mad_wait_job *jobs, int n, int asked,
		     double elapsed, int tty, int final)
{
	static char last[4096];
	char line[4096];
	size_t off = 0;

	if (c->quiet)
		return;
	for (int i = 0; i < n && off < sizeof(line) - 256; i++) {
		const struct mad_wait_job *j = &jobs[i];
		char expected[32] = "?", failed[96] = "", attempt[32] = "";

		if (j->expected > 0)
			snprintf(expected, sizeof(expected), "%ld", j->expected);
		if (j->nfailed)
			snprintf(failed, sizeof(failed), ", %ld failed%s", j->nfailed,
				 j->rerun == MAD_RERUN_YES ?
					 " (requeued: waiting for the next attempt)" :
					 "");
		if (j->restart > 0)
			snprintf(attempt, sizeof(attempt), " (attempt %ld)", j->restart + 1);
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					"%sjob %ld%s: %ld/%s done%s, %s", i ? "; " : "", j->id,
					attempt, j->ndone, expected, failed,
					*j->state    ? j->state :
					!asked       ? "not asked yet" :
					j->witnessed ? "gone" :
						       "not listed yet");
	}
	if (tty) {
		fprintf(stderr, "\r\033[K%s: %s (%.0f s)%s", mad_prog, line, elapsed,
			final ? "\n" : "");
	} else if (strcmp(line, last) != 0) {
		tool_error("%s", line);
	}
	snprintf(last, sizeof(last), "%s", line);
}

/* What a marker said, into O. */
static void json_outcome(cJSON *o, enum mad_rank_state state, long status, const char *host, long time)
{
	cJSON_AddStringToObject(o, "status", rank_state_name(state));
	if (state == MAD_RANK_INVALID)
		cJSON_AddNullToObject(o, "exit");
	else
		cJSON_AddNumberToObject(o, "exit", (double)status);
	cJSON_AddStringToObject(o, "host", host);
	if (time >= 0)
		cJSON_AddNumberToObject(o, "time", (double)time);
	else
		cJSON_AddNullToObject(o, "time");
}

/* RANKS, MISSING and TASKS of attempt A into O. */
/* What mad-wait passed over ("ignored ...: why; ignored ..."), a list. */
static void json_ignored(cJSON *o, const char *notes)
{
	cJSON *list = cJSON_AddArrayToObject(o, "ignored");
	const char *p = notes;

	while (list && *p) {
		const char *end = strstr(p, "; ignored ");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *item = strndup(p, n);

		if (item)
			cJSON_AddItemToArray(list, cJSON_CreateString(item));
		free(item);
		p += n + (end ? 2 : 0);
	}
}

static void json_attempt(cJSON *o, const struct mad_wait_attempt *a)
{
	cJSON *ranks = cJSON_AddArrayToObject(o, "ranks");
	cJSON *missing = cJSON_AddArrayToObject(o, "missing");
	cJSON *held = a->held ? cJSON_AddArrayToObject(o, "held") : NULL;
	cJSON *tasks = cJSON_AddArrayToObject(o, "tasks");
	long nr = a->expected > 0 ? a->expected : a->nrank;

	for (long r = 0; r < nr; r++) {
		const struct mad_rank *k = r < a->nrank ? &a->rank[r] : NULL;
		cJSON *ro;

		if (!k || k->state == MAD_RANK_MISSING || k->state == MAD_RANK_EMPTY) {
			/* spur held the node: it never ran the script, owes nothing */
			cJSON_AddItemToArray(held && k && !k->ran ? held : missing,
					     cJSON_CreateNumber((double)r));
			continue;
		}
		ro = cJSON_CreateObject();
		cJSON_AddNumberToObject(ro, "rank", (double)r);
		json_outcome(ro, k->state, k->status, k->host, k->time);
		if (*k->note)
			cJSON_AddStringToObject(ro, "error", k->note);
		cJSON_AddItemToArray(ranks, ro);
	}
	/* the srun steps' tasks (nodes fan-out): they name a failure's node */
	for (long i = 0; i < a->ntask; i++) {
		const struct mad_step_task *t = &a->task[i];
		cJSON *to;

		if (t->state == MAD_RANK_MISSING || t->state == MAD_RANK_EMPTY)
			continue;
		to = cJSON_CreateObject();
		cJSON_AddNumberToObject(to, "step", (double)t->step);
		cJSON_AddNumberToObject(to, "task", (double)t->task);
		json_outcome(to, t->state, t->status, t->host, t->time);
		cJSON_AddItemToArray(tasks, to);
	}
}

static void report(const struct cli *c, struct mad_wait_job *jobs, int n, int code, double elapsed,
		   long squeue_calls, int asked, const char *why)
{
	cJSON *root, *arr;
	char *text;

	for (int i = 0; i < n; i++) {
		const struct mad_wait_job *j = &jobs[i];

		if (j->verdict == MAD_WAIT_OK && c->quiet)
			continue;
		tool_error("job %ld: %s", j->id,
			   j->verdict == MAD_WAIT_PENDING && !*j->reason ? why : j->reason);
	}
	/* --ready: the endpoints are the output a pipeline takes (one line
	 * per job, in the order given), only when every job is ready. */
	if (c->cfg.ready && code == MAD_WAIT_OK && !c->json)
		for (int i = 0; i < n; i++)
			puts(jobs[i].endpoint);
	if (!c->json)
		return;
	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "verdict", verdict_name(code));
	cJSON_AddNumberToObject(root, "exit", code);
	cJSON_AddNumberToObject(root, "elapsed", round(elapsed * 1000) / 1000);
	cJSON_AddNumberToObject(root, "squeue_calls", (double)squeue_calls);
	cJSON_AddStringToObject(root, "run_dir", c->run_dir);
	arr = cJSON_AddArrayToObject(root, "jobs");
	for (int i = 0; i < n; i++) {
		const struct mad_wait_job *j = &jobs[i];
		cJSON *o = cJSON_CreateObject(), *attempts;
		struct mad_wait_attempt a;

		cJSON_AddNumberToObject(o, "job_id", (double)j->id);
		cJSON_AddStringToObject(o, "verdict",
					verdict_name(j->verdict == MAD_WAIT_PENDING ? code :
										      j->verdict));
		cJSON_AddStringToObject(o, "reason", j->verdict == MAD_WAIT_PENDING ? why : j->reason);
		cJSON_AddStringToObject(o, "dir", j->dir);
		json_ignored(o, j->ignored);
		cJSON_AddNumberToObject(o, "attempt", (double)(j->restart + 1));
		if (j->expected > 0)
			cJSON_AddNumberToObject(o, "expected", (double)j->expected);
		else
			cJSON_AddNullToObject(o, "expected");
		if (c->cfg.ready) {
			cJSON_AddBoolToObject(o, "ready", j->ready == 1);
			if (j->ready == 1) {
				cJSON_AddStringToObject(o, "endpoint", j->endpoint);
				cJSON_AddNumberToObject(o, "ready_rank", 0);
				cJSON_AddStringToObject(o, "ready_host", j->ready_host);
				if (j->ready_time >= 0)
					cJSON_AddNumberToObject(o, "ready_time", (double)j->ready_time);
				else
					cJSON_AddNullToObject(o, "ready_time");
			} else {
				cJSON_AddNullToObject(o, "endpoint");
			}
		}
		cJSON_AddStringToObject(o, "scheduler_state",
					*j->state    ? j->state :
					!asked       ? "NOT_ASKED" :
					j->witnessed ? "GONE" :
						       "NOT_LISTED");
		/* the final attempt's, which decide; then every attempt */
		mad_wait_attempt_view(j, j->npast, &a);
		json_attempt(o, &a);
		attempts = cJSON_AddArrayToObject(o, "attempts");
		for (long k = 0; k <= j->npast; k++) {
			cJSON *ao = cJSON_CreateObject();

			mad_wait_attempt_view(j, k, &a);
			cJSON_AddNumberToObject(ao, "attempt", (double)(a.restart + 1));
			cJSON_AddStringToObject(ao, "dir", a.dir);
			if (a.expected > 0)
				cJSON_AddNumberToObject(ao, "expected", (double)a.expected);
			else
				cJSON_AddNullToObject(ao, "expected");
			json_attempt(ao, &a);
			cJSON_AddItemToArray(attempts, ao);
		}
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_Print(root);
	if (text)
		puts(text);
	else
		tool_error("out of memory printing JSON");
	free(text);
	cJSON_Delete(root);
	fflush(stdout);
}

/* ------------------------------------------------------------ following */

/* Each job's output files, set up once its pattern and rank count are
 * known; the one buffer of followed lines, reused. */
struct follower {
	struct mad_follow_file *files[JOBS_MAX];
	long nfiles[JOBS_MAX];
	int ready[JOBS_MAX];
	struct strbuf lines;
};

/* The pattern of job J: the default needs squeue's word on whether J is an
 * array (slurm-%A_%a.out), so NULL until squeue listed it. */
static const char *follow_pattern(const struct cli *c, const struct mad_wait_job *j)
{
	if (c->follow)
		return c->follow;
	if (!j->witnessed)
		return NULL;
	return j->array ? "slurm-%A_%a.out" : "slurm-%j.out";
}

static int follow_setup(const struct cli *c, struct follower *fl, struct mad_wait_job *jobs, int n)
{
	char err[MAD_ERR_MAX];

	for (int i = 0; i < n && c->following; i++) {
		const char *pat = follow_pattern(c, &jobs[i]);
		long per, count;

		if (fl->ready[i] || !pat || (mad_follow_per_rank(pat) && jobs[i].expected < 0))
			continue; /* not yet: wait for squeue, or for the rank count */
		per = mad_follow_per_rank(pat);
		count = per ? jobs[i].expected : 1;
		fl->files[i] = calloc((size_t)count, sizeof(*fl->files[i]));
		if (!fl->files[i]) {
			tool_error("out of memory following the output");
			return -1;
		}
		for (long r = 0; r < count; r++) {
			char path[4096];

			if (mad_follow_name(pat, jobs[i].id, r, path, sizeof(path), err, sizeof(err))) {
				tool_error("%s", err);
				return -1;
			}
			if (mad_follow_init(&fl->files[i][r], path, per ? r : -1)) {
				tool_error("out of memory following the output");
				return -1;
			}
			fl->nfiles[i]++;
		}
		fl->ready[i] = 1;
	}
	return 0;
}

static void follow_poll(const struct cli *c, struct follower *fl, struct mad_wait_job *jobs, int n,
			int flush)
{
	FILE *out = c->json ? stderr : stdout;
	char err[MAD_ERR_MAX];

	for (int i = 0; i < n; i++) {
		for (long k = 0; k < fl->nfiles[i]; k++) {
			long left = MAD_FOLLOW_POLL_MAX;
			ssize_t got;

			/* a bounded amount per file and poll, in chunks written out
			 * one by one: memory and time stay bounded whatever the
			 * file holds (a link to /dev/zero, a sparse file) */
			do {
				got = mad_follow_poll(&fl->files[i][k], jobs[i].id, &fl->lines,
						      flush, MAD_FOLLOW_CHUNK, err, sizeof(err));
				if (got < 0)
					tool_error("%s", err);
				if (fl->lines.len) {
					fwrite(fl->lines.buf, 1, fl->lines.len, out);
					sb_reset(&fl->lines);
				}
				left -= got > 0 ? got : 0;
			} while (got == MAD_FOLLOW_CHUNK && left > 0 && !fl->lines.failed);
		}
	}
	if (fl->lines.failed) {
		tool_error("out of memory following the output");
		sb_free(&fl->lines); /* and the failure: the next poll tries again */
	}
	fflush(out);
}

static void follow_free(struct follower *fl, int n)
{
	for (int i = 0; i < n; i++) {
		for (long k = 0; k < fl->nfiles[i]; k++)
			mad_follow_close(&fl->files[i][k]);
		free(fl->files[i]);
	}
	sb_free(&fl->lines);
}

/* ------------------------------------------------------------ main loop */

/* --prune=AGE: the job folders of the run folder that the caller may
 * remove, nothing written in them for AGE, whose jobs squeue no longer
 * lists as active (lib/wait/prune.h).  Nothing is removed unless squeue
 * answered for every one. */
static int prune(const struct cli *c)
{
	struct mad_prune_folder *f;
	struct mad_queue_entry *e;
	char err[MAD_ERR_MAX];
	size_t n, removed = 0, failed = 0;
	long now = (long)time(NULL);
	int runfd = mad_rundir_open(c->run_dir, getuid(), err, sizeof(err));

	if (runfd < 0) {
		tool_error("%s", err);
		return MAD_WAIT_USAGE;
	}
	if (mad_prune_list(runfd, getuid(), now - (long)c->prune, &f, &n, err, sizeof(err))) {
		close(runfd);
		tool_error("%s", err);
		return MAD_WAIT_FAILED;
	}
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e) {
		free(f);
		close(runfd);
		tool_error("out of memory");
		return MAD_WAIT_FAILED;
	}
	for (size_t i = 0; i < n; i++)
		e[i].id = f[i].job;
	/* squeue in batches of ids: a command line of bounded length */
	for (size_t i = 0; i < n; i += 256) {
		if (mad_queue_ask(e + i, n - i < 256 ? n - i : 256, 60, err, sizeof(err))) {
			tool_error("%s: nothing removed", err);
			free(e);
			free(f);
			close(runfd);
			return MAD_WAIT_UNKNOWN;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].listing == MAD_LISTING_ACTIVE)
			continue;
		if (mad_prune_remove(runfd, c->run_dir, f[i].name, err, sizeof(err))) {
			tool_error("%s", err);
			failed++;
			continue;
		}
		removed++;
		if (!c->quiet)
			printf("removed '%s/%s' (job %ld, last written %ld s ago)\n", c->run_dir,
			       f[i].name, f[i].job, now - f[i].newest);
	}
	if (!c->quiet)
		printf("%zu removed, %zu kept (job in the queue), %zu failed\n", removed,
		       n - removed - failed, failed);
	free(e);
	free(f);
	close(runfd);
	return failed ? MAD_WAIT_FAILED : MAD_WAIT_OK;
}

int main(int argc, char **argv)
{
	static struct mad_wait_job jobs[JOBS_MAX];
	static struct mad_queue_entry entries[JOBS_MAX];
	struct cli c;
	struct watch w;
	static struct follower fl = { .lines = STRBUF_INIT };
	struct mad_wait_timing t;
	struct sigaction sa;
	char from[4200], err[MAD_ERR_MAX];
	int n, rc, code, tty = isatty(2);

	/* squeue's %V (the submit time files are trusted by) in the one form
	 * mad_submit_time_parse() reads, whatever the caller's SLURM_TIME_FORMAT */
	setenv("SLURM_TIME_FORMAT", "standard", 1);
	memset(&c, 0, sizeof(c));
	rc = parse_cli(argc, argv, &c);
	if (rc)
		return rc;
	n = argc - optind;
	if (n > JOBS_MAX)
		return usage_error("more than %d job ids", JOBS_MAX);
	if (c.prune >= 0)
		return (rc = find_run_dir(&c, from, sizeof(from))) ? rc : prune(&c);
	if ((rc = find_run_dir(&c, from, sizeof(from))) ||
	    (rc = parse_job_ids(n, argv + optind, jobs, c.run_dir)))
		return rc;
	c.cfg.interval = c.interval;
	c.cfg.unknown_budget = c.unknown_budget;
	c.cfg.timeout = c.timeout;
	c.cfg.scan_period = c.following ? 0.25 : 1.0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	watch_init(&w, c.run_dir, n);

	/* The policy (lib/wait/wait.h) says what to do next; here is the I/O. */
	mad_wait_timing_init(&t, &c.cfg, mad_monotonic());
	for (;;) {
		double now = mad_monotonic();
		struct mad_wait_step step;
		size_t k;

		if (got_signal) {
			snprintf(err, sizeof(err),
				 "interrupted by signal %d; the job is left alone", (int)got_signal);
			mad_wait_end(&t, jobs, n,
				     got_signal == SIGINT ? MAD_WAIT_INTERRUPTED : 128 + got_signal,
				     err);
		}
		step = mad_wait_next(&t, jobs, n, &c.cfg, now);
		switch (step.action) {
		case MAD_WAIT_END:
			break;
		case MAD_WAIT_SCAN:
			for (int i = 0; i < n; i++) {
				if (jobs[i].verdict != MAD_WAIT_PENDING)
					continue;
				if (mad_wait_scan(&jobs[i], &c.cfg, now, err, sizeof(err)) < 0) {
					tool_error("job %ld: %s", jobs[i].id, err);
					mad_wait_end(&t, jobs, n, MAD_WAIT_USAGE, "");
					break;
				}
			}
			watch_jobs(&w, jobs, n);
			if (follow_setup(&c, &fl, jobs, n))
				mad_wait_end(&t, jobs, n, MAD_WAIT_USAGE, "");
			follow_poll(&c, &fl, jobs, n, 0);
			/* from the end of the reads: reads slower than the scan
			 * period still leave time to decide and to time out */
			mad_wait_scanned(&t, &c.cfg, mad_monotonic());
			continue;
		case MAD_WAIT_ASK:
			k = mad_wait_queue_ids(jobs, n, entries);
			if (mad_queue_ask(entries, k, SQUEUE_TIMEOUT, err, sizeof(err)) == 0)
				mad_wait_answered(&t, jobs, n, entries, &c.cfg, mad_monotonic(),
						  (double)rand() / RAND_MAX);
			else if (!mad_wait_unanswered(&t, jobs, n, &c.cfg, mad_monotonic(), err) &&
				 !c.quiet)
				fprintf(stderr, "%s%s: %s (retrying)\n", tty ? "\r\033[K" : "",
					mad_prog, err);
			continue;
		case MAD_WAIT_SLEEP:
			progress(&c, jobs, n, t.answered, now - t.start, tty, 0);
			if (watch_sleep(&w, step.at - mad_monotonic()))
				mad_wait_woken(&t);
			continue;
		}
		code = step.code;
		break;
	}
	follow_poll(&c, &fl, jobs, n, 1);
	progress(&c, jobs, n, t.answered, mad_monotonic() - t.start, tty, 1);
	report(&c, jobs, n, code, mad_monotonic() - t.start, t.squeue_calls, t.answered, t.why);
	follow_free(&fl, n);
	for (int i = 0; i < n; i++)
		mad_wait_job_free(&jobs[i]);
	if (w.fd >= 0)
		close(w.fd);
	return code;
}
