/* spank-host: loads a SPANK plugin the way spur's spurd does, for tests.
 * spur cannot be built here; this follows its source (ROCm/spur v0.8.0):
 *  - crates/spurd/build.rs: the daemon exports exactly 15 SPANK/log
 *    symbols (a --dynamic-list); spank_option_register, spank_option_getopt,
 *    spank_context, spank_remote, spank_symbol_supported and
 *    spank_prepend_task_argv are absent.  See spank-host.syms.
 *  - crates/spur-spank/src/lib.rs: plugstack lines "required|optional PATH
 *    ARGS..." (any first word but "required" is optional; no "include"; only
 *    whole-line '#' comments); plugins loaded once with libloading, i.e.
 *    dlopen(RTLD_LAZY | RTLD_LOCAL); error numbers ESPANK_SUCCESS=0 ...
 *    NOT_LOCAL=11 (not SLURM's 3000+); items: S_JOB_UID/GID/ID from the job,
 *    S_JOB_STEPID, S_JOB_NNODES, S_JOB_NODEID and the task counts 0 with
 *    success, S_JOB_NCPUS/ARGV/ENV/S_TASK_ID/S_TASK_GLOBAL_ID/
 *    S_TASK_EXIT_STATUS not available, items >= 15 a bad argument; the log
 *    functions print their format verbatim (no varargs); a failing hook is
 *    logged and the job launches anyway.
 *  - crates/spurd/src/executor.rs: at launch, init then task_init on one
 *    handle seeded with the job env, inside the daemon (no fork), and the
 *    plugin's spank_setenv edits are merged back into the job env.
 *  - crates/spurd/src/agent_server.rs: at the end, task_exit then
 *    job_epilog, with an empty env map.
 *
 * Usage:
 *   spank-host [--now] [--threads N] PLUGSTACK [NAME=VALUE...] [-- CMD...]
 * Runs one launch with the given job env and prints the resulting env
 * (sorted), or execs CMD with it.  --now loads with RTLD_NOW (must succeed
 * for a plugin with no hard reference to a missing function).  --threads N
 * runs N launches of different jobs at once (job i: SLURM_JOB_ID=1000+i,
 * SLURM_NODEID=i%4, SLURM_NNODES=4) and checks each got its own rank. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spur-spank.h"

typedef struct spank_handle *spank_t;
#define SP_SUCCESS 0

/* ------------------------------------------------------------- the host */

typedef int (*hook_fn)(spank_t, int, char **);

struct plugin {
	void *dl;
	int ac;
	char **av;
	hook_fn init, task_init, task_exit, job_epilog;
};

static struct plugin plugins[16];
static int nplugins;

static void load_plugstack(const char *path, int now)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "spank-host: cannot open %s\n", path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f) && nplugins < 16) {
		char *save = NULL, *kind = strtok_r(line, " \t\n", &save), *file, *tok;
		struct plugin *p = &plugins[nplugins];

		if (!kind || kind[0] == '#')
			continue;
		file = strtok_r(NULL, " \t\n", &save);
		if (!file)
			continue;
		p->dl = dlopen(file, (now ? RTLD_NOW : RTLD_LAZY) | RTLD_LOCAL);
		if (!p->dl) {
			/* spur: even a required plugin that fails only warns */
			fprintf(stderr, "spank-host: WARN %s plugin %s failed to load: %s\n",
				strcmp(kind, "required") ? "optional" : "required", file, dlerror());
			continue;
		}
		p->av = calloc(64, sizeof(char *));
		while ((tok = strtok_r(NULL, " \t\n", &save)) && p->ac < 63)
			p->av[p->ac++] = strdup(tok);
		p->init = (hook_fn)dlsym(p->dl, "slurm_spank_init");
		p->task_init = (hook_fn)dlsym(p->dl, "slurm_spank_task_init");
		p->task_exit = (hook_fn)dlsym(p->dl, "slurm_spank_task_exit");
		p->job_epilog = (hook_fn)dlsym(p->dl, "slurm_spank_job_epilog");
		nplugins++;
	}
	fclose(f);
}

/* spur's invoke_hook: stop at the first failure, log it, go on with the job */
static void invoke(spank_t sp, int which)
{
	int i;

	for (i = 0; i < nplugins; i++) {
		hook_fn fn = which == 0 ? plugins[i].init : which == 1 ? plugins[i].task_init :
			     which == 2 ? plugins[i].task_exit : plugins[i].job_epilog;

		if (fn && fn(sp, plugins[i].ac, plugins[i].av) != 0) {
			fprintf(stderr, "spank-host: WARN SPANK hook failed; launching anyway\n");
			return;
		}
	}
}

/* One job's life as spurd runs it; the launch env is left in SP. */
static void launch(spank_t sp)
{
	struct spank_handle done = { NULL, 0, 0, sp->job_id, sp->uid, sp->gid };

	invoke(sp, 0);
	invoke(sp, 1);
	invoke(&done, 2);       /* the end: an empty env map */
	invoke(&done, 3);
	spur_handle_free(&done);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct job {
	int i;
	struct spank_handle sp;
	int ok;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	char id[32], rank[32], buf[64];
	char *vars[] = { "MAD_MODEL=m", id, rank, "SLURM_NNODES=4", "SLURM_JOB_NUM_NODES=4",
			 "SLURM_JOB_NODELIST=localhost,n2,n3,n4", "SPUR_JOB_ID=1" };

	snprintf(id, sizeof(id), "SLURM_JOB_ID=%d", 1000 + j->i);
	snprintf(rank, sizeof(rank), "SLURM_NODEID=%d", j->i % 4);
	spur_handle_seed(&j->sp, vars, 7);
	launch(&j->sp);
	j->ok = spur_getenv(&j->sp, "NODE_RANK", buf, sizeof(buf)) == SP_SUCCESS &&
		atoi(buf) == j->i % 4 &&
		spur_getenv(&j->sp, "MAD_COLLECT_JOB_ID", buf, sizeof(buf)) == SP_SUCCESS &&
		atoi(buf) == 1000 + j->i;
	spur_handle_free(&j->sp);
	return NULL;
}

int main(int argc, char **argv)
{
	struct spank_handle sp;
	int now = 0, threads = 0, a = 1, nvars = 0, i, bad = 0;
	char **cmd = NULL;

	for (; a < argc && !strncmp(argv[a], "--", 2) && argv[a][2]; a++) {
		if (!strcmp(argv[a], "--now"))
			now = 1;
		else if (!strcmp(argv[a], "--threads") && a + 1 < argc)
			threads = atoi(argv[++a]);
		else {
			fprintf(stderr, "spank-host: unknown option %s\n", argv[a]);
			return 2;
		}
	}
	if (a >= argc) {
		fprintf(stderr, "usage: spank-host [--now] [--threads N] PLUGSTACK [NAME=VALUE...] [-- CMD...]\n");
		return 2;
	}
	load_plugstack(argv[a++], now);
	if (threads > 0) {
		pthread_t *t = calloc((size_t)threads, sizeof(*t));
		struct job *jobs = calloc((size_t)threads, sizeof(*jobs));

		for (i = 0; i < threads; i++) {
			jobs[i].i = i;
			pthread_create(&t[i], NULL, run_job, &jobs[i]);
		}
		for (i = 0; i < threads; i++) {
			pthread_join(t[i], NULL);
			bad += !jobs[i].ok;
		}
		printf("%d launches, %d with a wrong env\n", threads, bad);
		free(t);
		free(jobs);
		return bad ? 1 : 0;
	}
	while (a + nvars < argc && strcmp(argv[a + nvars], "--"))
		nvars++;
	if (a + nvars < argc)
		cmd = &argv[a + nvars + 1];
	spur_handle_seed(&sp, &argv[a], nvars);
	launch(&sp);
	if (cmd && *cmd) {
		execvpe(cmd[0], cmd, sp.env ? sp.env : (char *[]){ NULL });
		perror("spank-host: exec");
		return 127;
	}
	if (sp.n)
		qsort(sp.env, sp.n, sizeof(char *), cmp_str);
	for (i = 0; i < (int)sp.n; i++)
		puts(sp.env[i]);
	spur_handle_free(&sp);
	for (i = 0; i < nplugins; i++) {
		int k;

		for (k = 0; k < plugins[i].ac; k++)
			free(plugins[i].av[k]);
		free(plugins[i].av);
		dlclose(plugins[i].dl);
	}
	return 0;
}
