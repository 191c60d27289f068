/* mad-wait [options] JOBID...: waits until every rank of each job has
 * written its completion marker, and exits with what they say (SPEC §8).
 * The scheduler is only a liveness guard: one squeue call per interval for
 * all jobs.  Always bounded by a timeout; Ctrl-C leaves the jobs alone. */
#include "config.h"

#include "clock.h"
#include "common.h"
#include "follow.h"
#include "options.h"
#include "plugstack.h"
#include "queue.h"
#include "wait.h"

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
	"                             the job's time limit plus a margin, else 24h)\n"
	"  -i, --interval DURATION    squeue at most once per DURATION (default 30s;\n"
	"                             x1.5 per call up to 4x)\n"
	"  -g, --grace DURATION       after a job left the queue, wait this long for its\n"
	"                             markers (default 60s)\n"
	"      --startup-grace DURATION  a job not listed yet is pending this long\n"
	"                             (default 5m: spur lists new jobs late)\n"
	"      --unknown-budget DURATION give up (exit 3) when squeue fails this long\n"
	"                             (default 5m)\n"
	"  -f, --follow[=PATTERN]     stream each rank's output file, prefixed by rank\n"
	"                             (default slurm-%A_%a.out for arrays, else slurm-%j.out)\n"
	"  -j, --json                 print the outcome as JSON on stdout\n"
	"  -q, --quiet                no progress, only errors\n"
	"  -h, --help, -V, --version\n"
	"\n"
	"Exit: 0 all ranks exited 0; 1 a rank failed; 2 a job left the queue with\n"
	"markers missing; 3 the scheduler could not be asked; 64 usage; 124 timeout;\n"
	"130 interrupted (the jobs are left alone).\n";

struct cli {
	const char *run_dir, *run_dir_from, *follow;
	double timeout, interval, unknown_budget;
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
		case 's': unit = 1; break;
		case 'm': unit = 60; break;
		case 'h': unit = 3600; break;
		case 'd': unit = DAY; break;
		default: return -1;
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
	enum { OPT_STARTUP = 256, OPT_BUDGET };
	static const struct option longopts[] = {
		{ "run-dir", required_argument, NULL, 'd' },
		{ "nnodes", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "grace", required_argument, NULL, 'g' },
		{ "startup-grace", required_argument, NULL, OPT_STARTUP },
		{ "unknown-budget", required_argument, NULL, OPT_BUDGET },
		{ "follow", optional_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc = 0;
	char *end;

	mad_prog_init(argv[0], "mad-wait");
	c->timeout = -1;
	c->interval = 30;
	c->unknown_budget = 300;
	c->cfg.grace = 60;
	c->cfg.startup_grace = 300;
	c->cfg.empty_grace = 5;
	c->cfg.gone_polls = 3;
	c->cfg.nnodes = -1;
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
			errno = 0;
			c->cfg.nnodes = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || c->cfg.nnodes < 1 || c->cfg.nnodes > 65536)
				return usage_error("--nnodes: '%s' is not a number between 1 and 65536", optarg);
			break;
		case 't': rc = duration_opt("--timeout", optarg, &c->timeout, 1); break;
		case 'i': rc = duration_opt("--interval", optarg, &c->interval, 0); break;
		case 'g': rc = duration_opt("--grace", optarg, &c->cfg.grace, 1); break;
		case OPT_STARTUP: rc = duration_opt("--startup-grace", optarg, &c->cfg.startup_grace, 1); break;
		case OPT_BUDGET: rc = duration_opt("--unknown-budget", optarg, &c->unknown_budget, 1); break;
		case 'f':
			c->following = 1;
			c->follow = optarg;
			break;
		case 'j': c->json = 1; break;
		case 'q': c->quiet = 1; break;
		case 'h':
			print_help(usage);
		case 'V':
			print_version();
		default:
			return usage_bad_option(opt, argv);
		}
	}
	if (!rc && optind >= argc)
		return usage_error("no job id given");
	return rc;
}

/* --run-dir, else MAD_RUN_DIR, else run-dir= on mad.so's plugstack line. */
static int find_run_dir(struct cli *c, char *buf, size_t size)
{
	static struct mad_plugstack ps;
	static char env_name[32];
	char err[1024];
	const char *v;
	struct stat st;
	int rc;

	mad_opt_env_name(OPT_RUN_DIR, env_name, sizeof(env_name));
	if (!c->run_dir && (v = getenv(env_name)) && *v) {
		c->run_dir = v;
		c->run_dir_from = env_name;
	}
	if (!c->run_dir) {
		rc = mad_plugstack_find(&ps, err, sizeof(err));
		if (rc < 0) {
			tool_error("%s", err);
			return MAD_EXIT_USAGE;
		}
		if (rc == 0 || !(v = mad_plugstack_value(&ps, mad_opt_name(OPT_RUN_DIR))) || !*v) {
			tool_error("no run folder: give --run-dir DIR, set %s, or add %s=DIR to mad.so's line in plugstack.conf (%s %s)",
				   env_name, mad_opt_name(OPT_RUN_DIR),
				   rc ? "the line in" : "looked in", rc ? ps.file : ps.tried);
			return MAD_EXIT_USAGE;
		}
		snprintf(buf, size, "%s:%d", ps.file, ps.line);
		c->run_dir = v;
		c->run_dir_from = buf;
	}
	if (stat(c->run_dir, &st) || !S_ISDIR(st.st_mode)) {
		tool_error("run folder '%s' (from %s): %s", c->run_dir, c->run_dir_from,
			   errno ? strerror(errno) : "not a folder");
		return MAD_EXIT_USAGE;
	}
	return 0;
}

static int parse_job_ids(int n, char **arg, struct mad_wait_job *jobs, const char *run_dir)
{
	for (int i = 0; i < n; i++) {
		char *end;
		long id;

		errno = 0;
		id = strtol(arg[i], &end, 10);
		if (errno || *end || arg[i][0] < '1' || arg[i][0] > '9' || id > 4294967294L) {
			if (strchr(arg[i], '_'))
				return usage_error("job id '%s': give the array job id (the number before '_')", arg[i]);
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
	int fd;                      /* inotify, or -1 (then only re-reads) */
	int run_wd;
	int job_wd[JOBS_MAX];
};

static void watch_init(struct watch *w, const char *run_dir, int n)
{
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->run_wd = w->fd < 0 ? -1 :
		    inotify_add_watch(w->fd, run_dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
	for (int i = 0; i < n; i++)
		w->job_wd[i] = -1;
}

static void watch_jobs(struct watch *w, struct mad_wait_job *jobs, int n)
{
	for (int i = 0; i < n && w->fd >= 0; i++)
		if (w->job_wd[i] < 0 && jobs[i].dir_seen)
			w->job_wd[i] = inotify_add_watch(w->fd, jobs[i].dir,
							 IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
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
	case WAIT_OK: return "success";
	case WAIT_FAILED: return "failed";
	case WAIT_GONE: return "gone";
	case WAIT_UNKNOWN: return "unknown";
	case WAIT_TIMEOUT: return "timeout";
	case WAIT_INTERRUPTED: return "interrupted";
	default: return "pending";
	}
}

static void progress(const struct cli *c, struct mad_wait_job *jobs, int n,
		     double elapsed, int tty, int final)
{
	static char last[4096];
	char line[4096];
	size_t off = 0;

	if (c->quiet)
		return;
	for (int i = 0; i < n && off < sizeof(line) - 256; i++) {
		const struct mad_wait_job *j = &jobs[i];
		char expected[32] = "?", failed[48] = "";

		if (j->expected > 0)
			snprintf(expected, sizeof(expected), "%ld", j->expected);
		if (j->nfailed)
			snprintf(failed, sizeof(failed), ", %ld failed", j->nfailed);
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%sjob %ld: %ld/%s done%s, %s",
					i ? "; " : "", j->id, j->ndone, expected, failed,
					*j->state ? j->state : j->seen ? "gone" : "not listed yet");
	}
	if (tty) {
		fprintf(stderr, "\r\033[Kmad-wait: %s (%.0f s)%s", line, elapsed, final ? "\n" : "");
	} else if (strcmp(line, last) != 0) {
		fprintf(stderr, "mad-wait: %s\n", line);
	}
	snprintf(last, sizeof(last), "%s", line);
}

static void report(const struct cli *c, struct mad_wait_job *jobs, int n, int code,
		   double elapsed, long squeue_calls, const char *why)
{
	cJSON *root, *arr;
	char *text;

	for (int i = 0; i < n; i++) {
		const struct mad_wait_job *j = &jobs[i];

		if (j->verdict == WAIT_OK && c->quiet)
			continue;
		fprintf(stderr, "mad-wait: job %ld: %s\n", j->id,
			j->verdict == WAIT_PENDING ? why : j->reason);
	}
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
		cJSON *o = cJSON_CreateObject(), *ranks, *missing;
		long nr = j->expected > 0 ? j->expected : j->nrank;

		cJSON_AddNumberToObject(o, "job_id", (double)j->id);
		cJSON_AddStringToObject(o, "verdict", verdict_name(j->verdict == WAIT_PENDING ? code : j->verdict));
		cJSON_AddStringToObject(o, "reason", j->verdict == WAIT_PENDING ? why : j->reason);
		cJSON_AddStringToObject(o, "dir", j->dir);
		if (j->expected > 0)
			cJSON_AddNumberToObject(o, "expected", (double)j->expected);
		else
			cJSON_AddNullToObject(o, "expected");
		cJSON_AddStringToObject(o, "scheduler_state", *j->state ? j->state : j->seen ? "GONE" : "NOT_LISTED");
		ranks = cJSON_AddArrayToObject(o, "ranks");
		missing = cJSON_AddArrayToObject(o, "missing");
		for (long r = 0; r < nr; r++) {
			const struct mad_rank *k = r < j->nrank ? &j->rank[r] : NULL;
			cJSON *ro;

			if (!k || k->state == RANK_MISSING || k->state == RANK_EMPTY) {
				cJSON_AddItemToArray(missing, cJSON_CreateNumber((double)r));
				continue;
			}
			ro = cJSON_CreateObject();
			cJSON_AddNumberToObject(ro, "rank", (double)r);
			cJSON_AddStringToObject(ro, "status", rank_state_name(k->state));
			if (k->state == RANK_INVALID)
				cJSON_AddNullToObject(ro, "exit");
			else
				cJSON_AddNumberToObject(ro, "exit", (double)k->status);
			cJSON_AddStringToObject(ro, "host", k->host);
			if (k->time >= 0)
				cJSON_AddNumberToObject(ro, "time", (double)k->time);
			else
				cJSON_AddNullToObject(ro, "time");
			if (*k->note)
				cJSON_AddStringToObject(ro, "error", k->note);
			cJSON_AddItemToArray(ranks, ro);
		}
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_Print(root);
	if (text)
		puts(text);
	else
		fprintf(stderr, "mad-wait: out of memory printing JSON\n");
	free(text);
	cJSON_Delete(root);
	fflush(stdout);
}

/* ------------------------------------------------------------ following */

struct follower {
	struct mad_follow_file *files;
	long nfiles;
	int ready;          /* files set up (the rank count is known) */
};

static int follow_setup(const struct cli *c, struct follower *fl, struct mad_wait_job *jobs, int n)
{
	long total = 0;
	char err[512];

	if (!c->following || fl->ready)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *pat = c->follow ? c->follow : jobs[i].array ? "slurm-%A_%a.out" : "slurm-%j.out";

		if (mad_follow_per_rank(pat) && jobs[i].expected < 0)
			return 0; /* not yet: wait for the rank count */
		total += mad_follow_per_rank(pat) ? jobs[i].expected : 1;
	}
	fl->files = calloc((size_t)total, sizeof(*fl->files));
	if (!fl->files)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *pat = c->follow ? c->follow : jobs[i].array ? "slurm-%A_%a.out" : "slurm-%j.out";
		long per = mad_follow_per_rank(pat);
		long count = per ? jobs[i].expected : 1;

		for (long r = 0; r < count; r++) {
			char path[4096];

			if (mad_follow_name(pat, jobs[i].id, r, path, sizeof(path), err, sizeof(err))) {
				fprintf(stderr, "mad-wait: %s\n", err);
				return -1;
			}
			mad_follow_init(&fl->files[fl->nfiles], path, per ? r : -1);
			fl->files[fl->nfiles++].off = 0;
		}
	}
	fl->ready = 1;
	return 0;
}

static void follow_poll(const struct cli *c, struct follower *fl, struct mad_wait_job *jobs, int n, int flush)
{
	long k = 0;
	FILE *out = c->json ? stderr : stdout;

	if (!fl->ready)
		return;
	for (int i = 0; i < n; i++) {
		const char *pat = c->follow ? c->follow : jobs[i].array ? "slurm-%A_%a.out" : "slurm-%j.out";
		long count = mad_follow_per_rank(pat) ? jobs[i].expected : 1;

		for (long r = 0; r < count && k < fl->nfiles; r++, k++)
			mad_follow_poll(&fl->files[k], jobs[i].id, out, flush);
	}
}

/* ------------------------------------------------------------ main loop */

static double jitter(double v)
{
	return v * (0.9 + 0.2 * ((double)rand() / RAND_MAX));
}

int main(int argc, char **argv)
{
	static struct mad_wait_job jobs[JOBS_MAX];
	static struct mad_queue_entry entries[JOBS_MAX];
	struct cli c;
	struct watch w;
	struct follower fl = { NULL, 0, 0 };
	struct sigaction sa;
	char from[4200], err[1024], why[1024] = "";
	double start, deadline, next_queue, next_scan = 0, unknown_since = 0, backoff = 2, guard_interval;
	long squeue_calls = 0;
	int n, rc, code = WAIT_PENDING, tty = isatty(2), woke = 1, default_timeout;

	memset(&c, 0, sizeof(c));
	rc = parse_cli(argc, argv, &c);
	if (rc)
		return rc;
	n = argc - optind;
	if (n > JOBS_MAX)
		return usage_error("more than %d job ids", JOBS_MAX);
	if ((rc = find_run_dir(&c, from, sizeof(from))) ||
	    (rc = parse_job_ids(n, argv + optind, jobs, c.run_dir)))
		return rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	watch_init(&w, c.run_dir, n);

	start = mad_monotonic();
	default_timeout = c.timeout < 0;
	deadline = start + (default_timeout ? DAY : c.timeout);
	/* The first squeue a little later: markers often answer first, and a
	 * minute's wait then costs two calls. */
	next_queue = start + fmin(c.interval, 10);
	guard_interval = c.interval / 1.5;
	for (;;) {
		double now = mad_monotonic(), wait;
		int decided = 0, failed = 0;

		if (got_signal) {
			code = got_signal == SIGINT ? WAIT_INTERRUPTED : 128 + got_signal;
			snprintf(why, sizeof(why), "interrupted by signal %d; the job is left alone", (int)got_signal);
			break;
		}
		if (woke || now >= next_scan) {
			for (int i = 0; i < n; i++) {
				if (jobs[i].verdict != WAIT_PENDING)
					continue;
				if (mad_wait_scan(&jobs[i], &c.cfg, now, err, sizeof(err)) < 0) {
					fprintf(stderr, "mad-wait: job %ld: %s\n", jobs[i].id, err);
					code = WAIT_USAGE;
					goto done;
				}
			}
			watch_jobs(&w, jobs, n);
			next_scan = now + (c.following ? 0.25 : 1.0);
		}
		for (int i = 0; i < n; i++) {
			int v = mad_wait_decide(&jobs[i], &c.cfg, now);

			decided += v != WAIT_PENDING;
			failed |= v == WAIT_FAILED;
		}
		if (follow_setup(&c, &fl, jobs, n)) {
			code = WAIT_USAGE;
			break;
		}
		follow_poll(&c, &fl, jobs, n, 0);
		if (failed || decided == n) {
			code = WAIT_OK;
			for (int i = 0; i < n; i++)
				if (jobs[i].verdict != WAIT_OK && jobs[i].verdict != WAIT_PENDING &&
				    (code == WAIT_OK || jobs[i].verdict < code))
					code = jobs[i].verdict;
			break;
		}
		if (now >= deadline) {
			char missing[512];

			code = WAIT_TIMEOUT;
			for (int i = 0; i < n; i++)
				if (jobs[i].verdict == WAIT_PENDING) {
					mad_wait_missing(&jobs[i], missing, sizeof(missing));
					snprintf(jobs[i].reason, sizeof(jobs[i].reason),
						 "timed out after %.0f s with %s%s", now - start,
						 *missing ? "ranks missing: " : "no marker yet",
						 missing);
					jobs[i].verdict = WAIT_TIMEOUT;
				}
			break;
		}
		if (now >= next_queue) {
			int k = 0, confirming = 0;

			for (int i = 0; i < n; i++)
				if (jobs[i].verdict == WAIT_PENDING)
					entries[k++].id = jobs[i].id;
			squeue_calls++;
			if (k && mad_queue_ask(entries, (size_t)k, SQUEUE_TIMEOUT, err, sizeof(err)) == 0) {
				double latest = start;
				int unlimited = 0;

				now = mad_monotonic();
				unknown_since = 0;
				backoff = 2;
				for (int i = 0, e = 0; i < n; i++) {
					struct mad_wait_job *j = &jobs[i];

					if (j->verdict != WAIT_PENDING)
						continue;
					mad_wait_observe(j, &entries[e++], &c.cfg, start, now);
					confirming |= j->gone_polls > 0 && j->gone_polls < c.cfg.gone_polls;
					if (j->time_limit < 0)
						unlimited = 1;
					else if (j->listing != LISTING_ABSENT) /* a pending job's clock has not started */
						latest = fmax(latest, (strcmp(j->state, "PENDING") ? start : now) + (double)j->time_limit);
				}
				if (default_timeout && !unlimited && latest > start)
					deadline = fmax(start + 60, latest + 600 + c.cfg.grace);
				/* Markers decide, so the guard may slow down: x1.5 per
				 * call up to 4 intervals (30 s, 45 s, ... 2 min by
				 * default); confirming a disappearance is fast. */
				guard_interval = fmin(guard_interval * 1.5, 4 * c.interval);
				next_queue = now + (confirming ? fmin(c.interval, 5) : jitter(guard_interval));
			} else if (k) {
				now = mad_monotonic();
				if (!unknown_since)
					unknown_since = now;
				if (!c.quiet)
					fprintf(stderr, "%smad-wait: %s (retrying)\n", tty ? "\r\033[K" : "", err);
				if (now - unknown_since >= c.unknown_budget) {
					snprintf(why, sizeof(why), "the scheduler could not be asked for %.0f s: %.700s",
						 now - unknown_since, err);
					code = WAIT_UNKNOWN;
					break;
				}
				next_queue = now + fmin(fmin(backoff, c.interval),
							unknown_since + c.unknown_budget - now);
				backoff *= 2;
			}
		}
		progress(&c, jobs, n, now - start, tty, 0);
		wait = fmin(fmin(next_scan, next_queue), deadline) - mad_monotonic();
		woke = watch_sleep(&w, wait);
	}
done:
	follow_poll(&c, &fl, jobs, n, 1);
	progress(&c, jobs, n, mad_monotonic() - start, tty, 1);
	if (code == WAIT_UNKNOWN || code >= WAIT_INTERRUPTED)
		for (int i = 0; i < n; i++)
			if (jobs[i].verdict == WAIT_PENDING)
				snprintf(jobs[i].reason, sizeof(jobs[i].reason), "%s", why);
	report(&c, jobs, n, code, mad_monotonic() - start, squeue_calls, why);
	for (long k = 0; k < fl.nfiles; k++)
		mad_follow_close(&fl.files[k]);
	free(fl.files);
	for (int i = 0; i < n; i++)
		mad_wait_job_free(&jobs[i]);
	if (w.fd >= 0)
		close(w.fd);
	return code;
}
