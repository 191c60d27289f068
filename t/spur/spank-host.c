/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank-host: a SPANK host that behaves as spur's spurd does, for tests.
 * spur cannot be built here; this follows its source (ROCm/spur; the SPANK host is the same
 * from v0.5.0, #429, to main 4cc3da8, so one host serves both generations of t/spur/lib.sh):
 *  - crates/spurd/build.rs: the daemon exports exactly 15 SPANK/log symbols (a
 *    --dynamic-list, see spank-host.syms); spank_option_*, spank_context, spank_remote,
 *    spank_symbol_supported and spank_prepend_task_argv are absent.
 *  - crates/spur-spank/src/lib.rs parse_plugstack: each line is trimmed; empty lines and
 *    lines starting with '#' are skipped; the rest is split with splitn(3, whitespace): the
 *    first word says "required" or not, the SECOND FIELD IS THE PATH, even when empty (two
 *    blanks after "required"), and the remainder, split on whitespace, are the arguments.
 *    No "include".  Only ASCII whitespace is modelled (Rust also splits on Unicode spaces).
 *  - lib.rs SpankHost::load_plugin: libloading, i.e. dlopen(path, RTLD_LAZY | RTLD_LOCAL),
 *    ONCE, when spurd starts (crates/spurd/src/agent_server.rs): dlopen("") returns spurd
 *    itself, which has no slurm_spank_* hook, so such a line is a plugin that silently never
 *    runs.  A plugin that fails to load only warns (required) or is skipped (optional).
 *  - lib.rs invoke_hook: hooks are looked up at each call; the first non-zero return stops
 *    that hook's walk; crates/spurd/src/executor.rs only warns and launches the job anyway.
 *  - executor.rs launch_job: init then task_init on one handle seeded with the job env,
 *    inside the daemon (no fork), the handle's env becoming the job's; the job is spawned
 *    with .envs(&env) and no env_clear, so spurd's own environment lies beneath the job env
 *    (a variable spurd has cannot be removed with spank_unsetenv).
 *  - agent_server.rs: after the job's process has ended (a 2 s monitor), task_exit then
 *    job_epilog on a fresh handle with the job id, uid and gid and an EMPTY env map.
 *
 * Usage:
 *   spank-host [--now] [--trace] PLUGSTACK [NAME=VALUE...] [-- CMD...]
 *     one job: the hooks, then CMD with spank-host's environment beneath the job env (its
 *     exit status is ours), then task_exit and job_epilog; without CMD, prints the job env.
 *   spank-host [--now] --jobs N [--concurrent K] PLUGSTACK [NAME=VALUE...]
 *     N generated jobs (job i: SLURM_JOB_ID=JOB_BASE+i, node rank i%4 of 4; every second
 *     one without MAD_MODEL) through the one loaded plugstack, K at a time, as spurd runs
 *     them; NAME=VALUE go into every job.  Checks each job's env is its own and that the
 *     first jobs give the same env when run again at the end; reports RSS and open fds
 *     after the first quarter of the jobs (the warm-up), after half the rest, and at the
 *     end.
 * --now loads with RTLD_NOW (must succeed for a plugin with no hard reference to a
 * function spur lacks); --trace says on stderr when the hooks ran. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spur-spank.h"

extern char **environ;

typedef int (*hook_fn)(spank_t, int, char **);
#define SP_SUCCESS 0
#define JOB_BASE 2000

/* ------------------------------------------------------------- the plugstack */

struct plugin {
	void *dl;
	int ac;
	char **av;
	char *path;
};

#define MAX_PLUGINS 64
static struct plugin plugins[MAX_PLUGINS];
static int nplugins, trace;

/* The next whitespace-separated field of *S (Rust's char::is_whitespace, ASCII part). */
static char *next_ws(char *s)
{
	while (*s && !isspace((unsigned char)*s))
		s++;
	return s;
}

static void load_plugstack(const char *conf, int now)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(conf, "r");

	if (!f) {
		/* agent_server.rs: no plugstack is no plugins; one that cannot be read only warns */
		if (errno != ENOENT)
			fprintf(stderr, "spank-host: WARN failed to parse plugstack.conf %s: %s\n", conf,
				strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) >= 0 && nplugins < MAX_PLUGINS) {
		char *s = line, *end, *kind, *path, *rest = NULL, *cut;
		struct plugin *p = &plugins[nplugins];

		while (isspace((unsigned char)*s))
			s++;
		end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*s || *s == '#')
			continue;
		kind = s;
		cut = next_ws(s);
		if (!*cut)
			continue; /* one field: parts.len() < 2 */
		*cut = '\0';
		path = cut + 1; /* exactly one separator: a second blank leaves the path empty */
		cut = next_ws(path);
		if (*cut) {
			*cut = '\0';
			rest = cut + 1;
		}
		p->dl = dlopen(path, (now ? RTLD_NOW : RTLD_LAZY) | RTLD_LOCAL);
		if (!p->dl) {
			if (!strcmp(kind, "required"))
				fprintf(stderr, "spank-host: WARN required SPANK plugin failed to load: %s\n",
					dlerror());
			else
				fprintf(stderr, "spank-host: INFO optional SPANK plugin failed to load, skipping: %s\n",
					dlerror());
			continue;
		}
		p->path = strdup(path);
		p->av = calloc(64, sizeof(char *));
		if (!p->path || !p->av) {
			fprintf(stderr, "spank-host: out of memory\n");
			exit(2);
		}
		for (char *tok = rest ? strtok(rest, " \t\n\v\f\r") : NULL; tok && p->ac < 63;
		     tok = strtok(NULL, " \t\n\v\f\r"))
			p->av[p->ac++] = strdup(tok);
		nplugins++;
	}
	free(line);
	fclose(f);
}

static void unload_plugstack(void)
{
	for (int i = 0; i < nplugins; i++) {
		for (int k = 0; k < plugins[i].ac; k++)
			free(plugins[i].av[k]);
		free(plugins[i].av);
		free(plugins[i].path);
		dlclose(plugins[i].dl);
	}
	nplugins = 0;
}

/* invoke_hook: every plugin's HOOK in order, stopping at the first failure (logged). */
static int invoke(spank_t sp, const char *hook)
{
	for (int i = 0; i < nplugins; i++) {
		hook_fn fn = (hook_fn)dlsym(plugins[i].dl, hook);

		if (fn && fn(sp, plugins[i].ac, plugins[i].av) != 0) {
			if (!spur_quiet)
				fprintf(stderr, "spank-host: WARN SPANK hook %s failed in %s; launching anyway\n",
					hook, plugins[i].path);
			return -1;
		}
	}
	return 0;
}

/* executor.rs: init, then task_init, on the job's handle. */
static void job_start(spank_t sp)
{
	invoke(sp, "slurm_spank_init");
	invoke(sp, "slurm_spank_task_init");
	if (trace)
		fprintf(stderr, "spank-host: job %u: init, task_init ran (%d plugin%s loaded)\n",
			sp->job_id, nplugins, nplugins == 1 ? "" : "s");
}

/* agent_server.rs: after the job ended, task_exit and job_epilog with an empty env. */
static void job_end(const struct spank_handle *job)
{
	struct spank_handle done;

	memset(&done, 0, sizeof(done));
	done.job_id = job->job_id;
	done.uid = job->uid;
	done.gid = job->gid;
	invoke(&done, "slurm_spank_task_exit");
	invoke(&done, "slurm_spank_job_epilog");
	spur_handle_free(&done);
	if (trace)
		fprintf(stderr, "spank-host: job %u: task_exit, job_epilog ran\n", job->job_id);
}

/* ------------------------------------------------------------- one job, run */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Command::envs without env_clear: our environment, each job variable put over it. */
static char **spawn_env(const struct spank_handle *sp)
{
	size_t n = 0, k, i;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + sp->env.n + 1, sizeof(char *));
	if (!env)
		return NULL;
	for (k = 0; k < n; k++)
		env[k] = environ[k];
	for (i = 0; i < sp->env.n; i++) {
		const char *var = sp->env.v[i];
		size_t len = (size_t)(strchr(var, '=') - var) + 1, j;

		for (j = 0; j < k; j++)
			if (!strncmp(env[j], var, len))
				break;
		env[j] = (char *)var;
		if (j == k)
			k++;
	}
	env[k] = NULL;
	return env;
}

static pid_t child = -1;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int run_one(char **vars, int nvars, char **cmd)
{
	struct spank_handle sp;
	int status = 0, i;

	spur_handle_seed(&sp, vars, nvars);
	job_start(&sp);
	if (cmd && *cmd) {
		char **env = spawn_env(&sp);
		struct sigaction sa;

		if (!env) {
			fprintf(stderr, "spank-host: out of memory\n");
			return 2;
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = forward;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		fflush(NULL);
		child = fork();
		if (child == 0) {
			execvpe(cmd[0], cmd, env);
			fprintf(stderr, "spank-host: cannot run %s: %s\n", cmd[0], strerror(errno));
			_exit(127);
		}
		free(env);
		if (child < 0) {
			fprintf(stderr, "spank-host: fork: %s\n", strerror(errno));
			status = 2 << 8;
		} else {
			while (waitpid(child, &status, 0) < 0 && errno == EINTR)
				;
		}
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	} else {
		if (sp.env.n)
			qsort(sp.env.v, sp.env.n, sizeof(char *), cmp_str);
		for (i = 0; i < (int)sp.env.n; i++)
			puts(sp.env.v[i]);
		fflush(stdout);
	}
	job_end(&sp);
	spur_handle_free(&sp);
	return status;
}

/* ------------------------------------------------------------- many jobs */

/* spurd's worker threads: started once, they run each round's jobs as they come. */
struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	int next, last;          /* jobs next..last-1 are still to run */
	int round, busy, stop;
	int nextra;
	char **extra;
	uint64_t *sum;           /* each job's env, hashed */
	int wrong;
};

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ '\n') * 1099511628211ULL;
}

/* One generated job, as spur's launch_job would give it to the plugins (one task per node,
 * 4 nodes; the first node's name resolves), with the EXTRA variables; returns its env's
 * hash, or 0 when its env is not its own. */
static uint64_t run_generated(int i, char **extra, int nextra)
{
	char v[12][96], *vars[12 + 64], buf[256], id[16];
	int n = 0, rank = i % 4, model = !(i % 2), ok = 1;
	unsigned job = JOB_BASE + (unsigned)i;
	struct spank_handle sp;
	uint64_t h = 1469598103934665603ULL;
	size_t k, before;

	snprintf(id, sizeof(id), "%u", job);
	snprintf(v[n++], sizeof(v[0]), "SLURM_JOB_ID=%u", job);
	snprintf(v[n++], sizeof(v[0]), "SPUR_JOB_ID=%u", job);
	snprintf(v[n++], sizeof(v[0]), "SLURM_NODEID=%d", rank);
	snprintf(v[n++], sizeof(v[0]), "SPUR_NODE_RANK=%d", rank);
	snprintf(v[n++], sizeof(v[0]), "NODE_RANK=%d", rank);
	snprintf(v[n++], sizeof(v[0]), "SLURM_PROCID=%d", rank);
	snprintf(v[n++], sizeof(v[0]), "SLURM_NNODES=4");
	snprintf(v[n++], sizeof(v[0]), "SLURM_JOB_NUM_NODES=4");
	snprintf(v[n++], sizeof(v[0]), "SLURM_JOB_NODELIST=198.51.100.1,n2,n3,n4");
	snprintf(v[n++], sizeof(v[0]), "MASTER_ADDR=198.51.100.1.spur.test");
	snprintf(v[n++], sizeof(v[0]), "MAD_EMU_JOB=%d", i);
	if (model)
		snprintf(v[n++], sizeof(v[0]), "MAD_MODEL=m");
	for (k = 0; k < (size_t)n; k++)
		vars[k] = v[k];
	if (nextra > 64)
		nextra = 64;
	for (k = 0; k < (size_t)nextra; k++)
		vars[n + k] = extra[k];
	spur_handle_seed(&sp, vars, n + nextra);
	before = sp.env.n;
	job_start(&sp);
	job_end(&sp);
	if (!model) {
		/* no model: the plugin must leave the env exactly as it was */
		ok = sp.env.n == before && spur_getenv(&sp, "MAD_ENV_FROM", buf, sizeof(buf)) != SP_SUCCESS;
	} else {
		ok = spur_getenv(&sp, "MAD_COLLECT_JOB_ID", buf, sizeof(buf)) == SP_SUCCESS &&
		     !strcmp(buf, id) &&
		     spur_getenv(&sp, "MAD_ENV_FROM", buf, sizeof(buf)) == SP_SUCCESS &&
		     spur_getenv(&sp, "MAD_EMU_JOB", buf, sizeof(buf)) == SP_SUCCESS &&
		     atoi(buf) == i;
		/* no value of ours may name another job's id */
		for (k = 0; ok && k < sp.env.n; k++) {
			const char *e = sp.env.v[k], *p;

			int seeded = 0;

			for (int j = 0; j < n + (int)nextra && !seeded; j++)
				seeded = !strcmp(e, vars[j]);
			if (strncmp(e, "MAD_", 4) || seeded)
				continue; /* only what the plugin set */
			for (p = strchr(e, '='); p && *p; p++) {
				char *q;
				unsigned long num;

				if (!isdigit((unsigned char)*p))
					continue;
				num = strtoul(p, &q, 10);
				if (num >= JOB_BASE && num < JOB_BASE + 1000000 && num != job)
					ok = 0;
				p = q - 1;
			}
		}
	}
	if (sp.env.n)
		qsort(sp.env.v, sp.env.n, sizeof(char *), cmp_str);
	for (k = 0; k < sp.env.n; k++)
		h = fnv(h, sp.env.v[k]);
	spur_handle_free(&sp);
	return ok ? (h ? h : 1) : 0;
}

/* Runs the current round's jobs until none is left. */
static void drain(struct pool *p)
{
	for (;;) {
		int i;
		uint64_t h;

		pthread_mutex_lock(&p->lock);
		i = p->next < p->last ? p->next++ : -1;
		pthread_mutex_unlock(&p->lock);
		if (i < 0)
			return;
		h = run_generated(i, p->extra, p->nextra);
		pthread_mutex_lock(&p->lock);
		p->sum[i] = h;
		p->wrong += !h;
		pthread_mutex_unlock(&p->lock);
	}
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	int seen = 0;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (p->round == seen && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		seen = p->round;
		pthread_mutex_unlock(&p->lock);
		drain(p);
		pthread_mutex_lock(&p->lock);
		if (--p->busy == 0)
			pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
}

/* Runs jobs FROM..TO-1 on the K workers (K <= 1: on this thread). */
static void run_round(struct pool *p, int from, int to, int k)
{
	pthread_mutex_lock(&p->lock);
	p->next = from;
	p->last = to;
	if (k <= 1) {
		pthread_mutex_unlock(&p->lock);
		drain(p);
		return;
	}
	p->busy = k;
	p->round++;
	pthread_cond_broadcast(&p->work);
	while (p->busy)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static int open_fds(void)
{
	int n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n - 1; /* the one opendir holds */
}

static int run_many(int jobs, int k, char **extra, int nextra)
{
	struct pool p;
	int warm = jobs / 4 > k ? jobs / 4 : k < jobs ? k : jobs, mid = warm + (jobs - warm) / 2;
	int again = jobs < 16 ? jobs : 16, i, differ = 0, fd0, fd1, fd2;
	long rss0, rss1, rss2;
	pthread_t threads[256];

	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.work, NULL);
	pthread_cond_init(&p.done, NULL);
	p.extra = extra;
	p.nextra = nextra;
	p.sum = calloc((size_t)jobs, sizeof(*p.sum));
	if (!p.sum)
		return 2;
	for (i = 0; k > 1 && i < k; i++)
		if (pthread_create(&threads[i], NULL, worker, &p)) {
			fprintf(stderr, "spank-host: cannot start a thread\n");
			exit(2);
		}
	/* the first quarter warms up what is allocated once (malloc arenas and thread caches,
	 * the resolver); then two equal rounds: what one job leaks grows from one to the next */
	run_round(&p, 0, warm, k);
	rss0 = rss_kb();
	fd0 = open_fds();
	run_round(&p, warm, mid, k);
	rss1 = rss_kb();
	fd1 = open_fds();
	run_round(&p, mid, jobs, k);
	/* the first jobs again, after all the others: the same env, or state leaked */
	for (i = 0; i < again; i++) {
		uint64_t h = run_generated(i, extra, nextra);

		differ += h != p.sum[i];
	}
	rss2 = rss_kb();
	fd2 = open_fds();
	printf("%d jobs, %d at a time, %d plugin%s loaded once: %d with a wrong env, %d of %d different when run again; rss %ld kB -> %ld kB -> %ld kB; fds %d -> %d -> %d\n",
	       jobs, k < 1 ? 1 : k, nplugins, nplugins == 1 ? "" : "s", p.wrong, differ, again,
	       rss0, rss1, rss2, fd0, fd1, fd2);
	pthread_mutex_lock(&p.lock);
	p.stop = 1;
	pthread_cond_broadcast(&p.work);
	pthread_mutex_unlock(&p.lock);
	for (i = 0; k > 1 && i < k; i++)
		pthread_join(threads[i], NULL);
	free(p.sum);
	pthread_cond_destroy(&p.work);
	pthread_cond_destroy(&p.done);
	pthread_mutex_destroy(&p.lock);
	return p.wrong || differ ? 1 : 0;
}

/* ------------------------------------------------------------- main */

static int number(const char *opt, const char *s, int max)
{
	char *end;
	long v;

	errno = 0;
	v = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || *end || v < 1 || v > max) {
		fprintf(stderr, "spank-host: %s: '%s' is not a number from 1 to %d\n", opt, s ? s : "", max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	int now = 0, jobs = 0, k = 1, a = 1, nvars = 0, rc;
	char **cmd = NULL;

	for (; a < argc && !strncmp(argv[a], "--", 2) && argv[a][2]; a++) {
		if (!strcmp(argv[a], "--now"))
			now = 1;
		else if (!strcmp(argv[a], "--trace"))
			trace = 1;
		else if (!strcmp(argv[a], "--jobs"))
			jobs = number("--jobs", argv[++a], 1000000);
		else if (!strcmp(argv[a], "--concurrent"))
			k = number("--concurrent", argv[++a], 256);
		else {
			fprintf(stderr, "spank-host: unknown option %s\n", argv[a]);
			return 2;
		}
	}
	if (a >= argc) {
		fprintf(stderr, "usage: spank-host [--now] [--trace] PLUGSTACK [NAME=VALUE...] [-- CMD...]\n"
				"       spank-host [--now] --jobs N [--concurrent K] PLUGSTACK [NAME=VALUE...]\n");
		return 2;
	}
	load_plugstack(argv[a++], now);
	while (a + nvars < argc && strcmp(argv[a + nvars], "--"))
		nvars++;
	if (a + nvars < argc)
		cmd = &argv[a + nvars + 1];
	if (jobs) {
		spur_quiet = 1; /* a thousand jobs' log lines say nothing the checks do not */
		rc = run_many(jobs, k, &argv[a], nvars);
	} else {
		rc = run_one(&argv[a], nvars, cmd);
	}
	unload_plugstack();
	return rc;
}
