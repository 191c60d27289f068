/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: random job environments through mad.so's hooks, with
 * spur's SPANK API (t/spur/spur-spank.c), under ASan and UBSan.  Input: lines
 * NAME=VALUE, the job env of one launch.  Checks: no crash, no leak, and a
 * launch either leaves a complete contract (NODE_RANK, NNODES, MASTER_PORT,
 * both levels with every rank below its size, and MASTER_ADDR unless the
 * rendezvous is pending, never loopback when NNODES > 1), or MAD_ERROR, or
 * no model.  Inputs carry task facts too (SLURM_STEP_ID, SLURM_PROCID,
 * SLURM_STEP_TASKS_PER_NODE, ...: the corpus has them).  Hermetic: the run folder is a scratch folder, and getaddrinfo is
 * interposed so no node name ever reaches a resolver. */
#include "../spur/spur-spank.h"

#include <ftw.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int slurm_spank_init(struct spank_handle *sp, int ac, char **av);
int slurm_spank_task_init(struct spank_handle *sp, int ac, char **av);
int slurm_spank_task_exit(struct spank_handle *sp, int ac, char **av);

/* Only "localhost" resolves: fuzzed node names stay on this machine. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	struct {
		struct addrinfo ai;
		struct sockaddr_in sin;
	} * r;

	(void)service;
	(void)hints;
	if (!node || strcmp(node, "localhost"))
		return EAI_NONAME;
	r = calloc(1, sizeof(*r));
	if (!r)
		return EAI_MEMORY;
	r->sin.sin_family = AF_INET;
	r->sin.sin_addr.s_addr = htonl(0x7f000001);
	r->ai.ai_family = AF_INET;
	r->ai.ai_addr = (struct sockaddr *)&r->sin;
	r->ai.ai_addrlen = sizeof(r->sin);
	*res = &r->ai;
	return 0;
}

void freeaddrinfo(struct addrinfo *res)
{
	free(res);
}

static char run_dir[64];

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void remove_run_dir(void)
{
	nftw(run_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int is_run_dir_var(const char *v)
{
	return !strncmp(v, "MAD_RUN_DIR=", 12) ||
	       !strncmp(v, "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_run_dir=", 48);
}

static long env_long(struct spank_handle *sp, const char *name)
{
	char buf[64];

	return spur_getenv(sp, name, buf, sizeof(buf)) == 0 ? atol(buf) : -1;
}

/* Non-zero unless 0 <= RANK < SIZE, both present. */
static int below(struct spank_handle *sp, const char *rank, const char *size)
{
	long r = env_long(sp, rank), n = env_long(sp, size);

	return r < 0 || n < 1 || r >= n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *vars[66], *save = NULL, *line, buf[8192];
	char run_var[96];
	struct spank_handle sp;
	int n = 0;

	if (!text)
		return 0;
	spur_quiet = 1;
	if (!run_dir[0]) {
		snprintf(run_dir, sizeof(run_dir), "/tmp/mad-fuzz-run-%d", (int)getpid());
		mkdir(run_dir, 0700);
		atexit(remove_run_dir);
	}
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line && n < 64; line = strtok_r(NULL, "\n", &save))
		if (!is_run_dir_var(line))
			vars[n++] = line;
	snprintf(run_var, sizeof(run_var), "MAD_RUN_DIR=%s", run_dir);
	vars[n++] = run_var;
	spur_handle_seed(&sp, vars, n);
	/* an inherited MAD_ENV_FROM keeps its meaning (it is there) but gets a
	 * value the plugin never writes, so "spank" afterwards is the plugin's */
	if (spur_getenv(&sp, "MAD_ENV_FROM", buf, sizeof(buf)) != 5)
		spank_setenv(&sp, "MAD_ENV_FROM", "fuzz-input", 1);

	slurm_spank_init(&sp, 0, NULL);
	slurm_spank_task_init(&sp, 0, NULL);
	if (spur_getenv(&sp, "MAD_ENV_FROM", buf, sizeof(buf)) == 0 && !strcmp(buf, "spank")) {
		/* the plugin said it computed a contract: it must be whole */
		if (spur_getenv(&sp, "NODE_RANK", buf, sizeof(buf)) ||
		    spur_getenv(&sp, "NNODES", buf, sizeof(buf)) ||
		    spur_getenv(&sp, "MASTER_PORT", buf, sizeof(buf)) ||
		    (spur_getenv(&sp, "MASTER_ADDR", buf, sizeof(buf)) &&
		     spur_getenv(&sp, "MAD_RENDEZVOUS", buf, sizeof(buf))))
			abort();
		if (spur_getenv(&sp, "MASTER_ADDR", buf, sizeof(buf)) == 0 && !buf[0])
			abort(); /* never an empty MASTER_ADDR */
		if (below(&sp, "NODE_RANK", "NNODES"))
			abort();
		/* the process level: whole and in range, or (the batch script of
		 * a multi-node job, design §3) not there at all */
		if (spur_getenv(&sp, "RANK", buf, sizeof(buf)) == 0 ||
		    spur_getenv(&sp, "WORLD_SIZE", buf, sizeof(buf)) == 0 ||
		    spur_getenv(&sp, "LOCAL_RANK", buf, sizeof(buf)) == 0) {
			if (below(&sp, "RANK", "WORLD_SIZE") ||
			    below(&sp, "LOCAL_RANK", "LOCAL_WORLD_SIZE"))
				abort();
		} else if (env_long(&sp, "NNODES") < 2) {
			abort(); /* only a multi-node job's script goes without */
		}
		if (env_long(&sp, "NNODES") > 1 &&
		    spur_getenv(&sp, "MASTER_ADDR", buf, sizeof(buf)) == 0 && !strncmp(buf, "127.", 4))
			abort(); /* never loopback for a multi-node job */
	}
	spur_handle_free(&sp);
	{
		struct spank_handle empty;

		spur_handle_seed(&empty, NULL, 0);
		slurm_spank_task_exit(&empty, 0, NULL);
		spur_handle_free(&empty);
	}
	free(text);
	return 0;
}
