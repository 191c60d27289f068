/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/options and lib/contract: the precedence of the five
 * sources (design.md §4), value checks, and rank/fan-out resolution (design.md §3). */
#include "contract.h"
#include "options.h"
#include "fake-env.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

static struct mad_options opts;
static char err[2048];

static int resolve(const char *cli_model, struct env *e, int ac, char **av)
{
	const char *cli[MAD_OPT_COUNT] = { 0 };

	cli[MAD_OPT_MODEL] = cli_model;
	err[0] = '\0';
	return mad_options_resolve(&opts, cli, env_get, e, ac, av, err, sizeof(err));
}

TEST(each_source_beats_the_next)
{
	struct env all = { { "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_model=spank", "MAD_MODEL=env" } };
	struct env env_only = { { "MAD_MODEL=env" } };
	struct env none = { { NULL } };
	char *av[] = { "model=site", "timeout=60" };

	CHECK(resolve("cli", &all, 2, av) == 0);
	CHECK_STR(opts.value[MAD_OPT_MODEL], "cli");
	CHECK(opts.source[MAD_OPT_MODEL] == MAD_SRC_CLI);
	CHECK(resolve(NULL, &all, 2, av) == 0);
	CHECK_STR(opts.value[MAD_OPT_MODEL], "spank");
	CHECK(opts.source[MAD_OPT_MODEL] == MAD_SRC_SPANK_ENV);
	CHECK(resolve(NULL, &env_only, 2, av) == 0);
	CHECK_STR(opts.value[MAD_OPT_MODEL], "env");
	CHECK(resolve(NULL, &none, 2, av) == 0);
	CHECK_STR(opts.value[MAD_OPT_MODEL], "site");
	CHECK(opts.source[MAD_OPT_MODEL] == MAD_SRC_PLUGSTACK);
	CHECK_STR(opts.value[MAD_OPT_TIMEOUT], "60");
	CHECK(resolve(NULL, &none, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_MODEL], "");
	CHECK_STR(opts.value[MAD_OPT_TIMEOUT], "900");
	CHECK(opts.source[MAD_OPT_TIMEOUT] == MAD_SRC_DEFAULT);
	CHECK_STR(opts.value[MAD_OPT_MASTER_PORT], "auto");
}

TEST(a_job_inside_a_mad_job_keeps_only_model_and_run_dir)
{
	struct env e = { { "MAD_ENV_FROM=spank", "MAD_MODEL=m", "MAD_RUN_DIR=/r", "MAD_FANOUT=array",
			   "MAD_NNODES=8", "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_timeout=5" } };

	CHECK(resolve(NULL, &e, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_MODEL], "m");
	CHECK_STR(opts.value[MAD_OPT_RUN_DIR], "/r");
	CHECK_STR(opts.value[MAD_OPT_FANOUT], "auto");
	CHECK_STR(opts.value[MAD_OPT_NNODES], "");
	CHECK_STR(opts.value[MAD_OPT_TIMEOUT], "5"); /* SLURM's own option form counts */
}

TEST(mad_env_inside_the_same_job_keeps_the_users_options)
{
	struct env same = { { "MAD_ENV_FROM=spank", "MAD_COLLECT_JOB_ID=40", "SLURM_JOB_ID=41",
			      "SLURM_ARRAY_JOB_ID=40", "MAD_MODEL=m", "MAD_NNODES=8" } };
	struct env other = { { "MAD_ENV_FROM=spank", "MAD_COLLECT_JOB_ID=40", "SLURM_JOB_ID=50",
			       "MAD_MODEL=m", "MAD_NNODES=8" } };

	CHECK(resolve(NULL, &same, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_NNODES], "8");
	CHECK(resolve(NULL, &other, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_NNODES], "");
}

/* --mad-gpu-bind and --mad-socket-ifname exist in every form: the command line,
 * SLURM's env form, MAD_X, the plugstack line, the default. */
TEST(gpu_bind_and_ifname_in_every_form)
{
	const char *cli[MAD_OPT_COUNT] = { 0 };
	struct env none = { { NULL } };
	struct env spank = { { "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_gpu_bind=strict",
			       "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_socket_ifname=auto" } };
	struct env env = { { "MAD_GPU_BIND=strict", "MAD_SOCKET_IFNAME=ib0" } };
	struct env bad = { { "MAD_GPU_BIND=loose" } };
	/* MAD_IFNAME is the contract's interface (an srun step inherits its
	 * batch step's), never the option */
	struct env exported = { { "MAD_IFNAME=eth0", "MAD_ENV_FROM=spank" } };
	char *site[] = { "gpu-bind=strict", "socket-ifname=auto" };

	CHECK(resolve(NULL, &none, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_GPU_BIND], "warn");
	CHECK_STR(opts.value[MAD_OPT_SOCKET_IFNAME], "keep");
	CHECK(opts.source[MAD_OPT_SOCKET_IFNAME] == MAD_SRC_DEFAULT);
	CHECK(resolve(NULL, &none, 2, site) == 0);
	CHECK_STR(opts.value[MAD_OPT_GPU_BIND], "strict");
	CHECK(opts.source[MAD_OPT_SOCKET_IFNAME] == MAD_SRC_PLUGSTACK);
	CHECK(resolve(NULL, &env, 2, site) == 0);
	CHECK_STR(opts.value[MAD_OPT_SOCKET_IFNAME], "ib0");
	CHECK(opts.source[MAD_OPT_GPU_BIND] == MAD_SRC_ENV);
	CHECK(resolve(NULL, &spank, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_SOCKET_IFNAME], "auto");
	CHECK(opts.source[MAD_OPT_GPU_BIND] == MAD_SRC_SPANK_ENV);
	cli[MAD_OPT_GPU_BIND] = "warn";
	CHECK(mad_options_resolve(&opts, cli, env_get, &env, 0, NULL, err, sizeof(err)) == 0);
	CHECK(opts.source[MAD_OPT_GPU_BIND] == MAD_SRC_CLI);
	CHECK(resolve(NULL, &bad, 0, NULL) == -1);
	CHECK_STR(err, "--mad-gpu-bind: 'loose' is not one of warn, strict (from MAD_GPU_BIND)");
	CHECK(resolve(NULL, &exported, 0, NULL) == 0);
	CHECK_STR(opts.value[MAD_OPT_SOCKET_IFNAME], "keep");
}

TEST(bad_values_name_option_and_source)
{
	struct env e = { { "MAD_NNODES=x" } };
	struct env none = { { NULL } };
	char *unknown[] = { "modle=x" };
	char *bad_site[] = { "timeout=0" };

	CHECK(resolve(NULL, &e, 0, NULL) == -1);
	CHECK_STR(err, "--mad-nnodes: 'x' is not a number between 1 and 65536 (from MAD_NNODES)");
	CHECK(resolve("bad model!", &none, 0, NULL) == -1);
	CHECK(strstr(err, "--mad-model: 'bad model!' is not a model name") == err);
	CHECK(resolve(NULL, &none, 1, unknown) == -1);
	CHECK(strstr(err, "plugstack.conf: unknown argument 'modle=x'") == err);
	CHECK(resolve(NULL, &none, 1, bad_site) == -1);
	CHECK(strstr(err, "plugstack.conf: --mad-timeout: '0'") == err);
}

TEST(a_model_asked_anywhere_makes_bad_values_count)
{
	const char *cli[MAD_OPT_COUNT] = { 0 };
	struct env none = { { "MAD_NNODES=x" } };
	struct env env_model = { { "MAD_MODEL=m", "MAD_NNODES=x" } };
	struct env spank_model = { { "SLURM_SPANK__SLURM_SPANK_OPTION_mad_mad_model=m" } };
	char *site[] = { "model=site" };

	CHECK(!mad_options_model_asked(cli, env_get, &none, 0, NULL));
	CHECK(mad_options_model_asked(cli, env_get, &env_model, 0, NULL));
	CHECK(mad_options_model_asked(cli, env_get, &spank_model, 0, NULL));
	CHECK(mad_options_model_asked(cli, env_get, &none, 1, site));
	cli[MAD_OPT_MODEL] = "m";
	CHECK(mad_options_model_asked(cli, env_get, &none, 0, NULL));
}

TEST(value_checks)
{
	static const struct {
		enum mad_opt opt;
		const char *v;
		int ok;
	} cases[] = {
		{ MAD_OPT_MODEL, "llama-3.1_8B", 1 },
		{ MAD_OPT_MODEL, "", 0 },
		{ MAD_OPT_MODEL, "-x", 0 },
		{ MAD_OPT_MODEL, "a$(id)", 0 },
		{ MAD_OPT_MODEL, "0123456789012345678901234567890123456789012345678901234567890123", 1 },
		{ MAD_OPT_MODEL, "01234567890123456789012345678901234567890123456789012345678901234", 0 },
		{ MAD_OPT_SCHEDULER, "spur", 1 },
		{ MAD_OPT_SCHEDULER, "SLURM", 0 },
		{ MAD_OPT_FANOUT, "array", 1 },
		{ MAD_OPT_FANOUT, "tree", 0 },
		{ MAD_OPT_NNODES, "65536", 1 },
		{ MAD_OPT_NNODES, "65537", 0 },
		{ MAD_OPT_NNODES, "0", 0 },
		{ MAD_OPT_NNODES, "-1", 0 },
		{ MAD_OPT_NNODES, "1e3", 0 },
		{ MAD_OPT_MASTER_PORT, "auto", 1 },
		{ MAD_OPT_MASTER_PORT, "65536", 0 },
		{ MAD_OPT_MASTER_PORT, "29500", 1 },
		{ MAD_OPT_IFACE, "eth0", 1 },
		{ MAD_OPT_IFACE, "eth0;x", 0 },
		{ MAD_OPT_RUN_DIR, "/shared/mad", 1 },
		{ MAD_OPT_RUN_DIR, "relative", 0 },
		{ MAD_OPT_RUN_DIR, "/a\nb", 0 },
		{ MAD_OPT_TIMEOUT, "900", 1 },
		{ MAD_OPT_TIMEOUT, "604801", 0 },
		{ MAD_OPT_GPU_BIND, "warn", 1 },
		{ MAD_OPT_GPU_BIND, "strict", 1 },
		{ MAD_OPT_GPU_BIND, "Strict", 0 },
		{ MAD_OPT_GPU_BIND, "", 0 },
		{ MAD_OPT_SOCKET_IFNAME, "auto", 1 },
		{ MAD_OPT_SOCKET_IFNAME, "keep", 1 },
		{ MAD_OPT_SOCKET_IFNAME, "ib0", 1 },
		{ MAD_OPT_SOCKET_IFNAME, "ib0,eth0", 0 },
		{ MAD_OPT_SOCKET_IFNAME, "", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int ok = mad_opt_check(cases[i].opt, cases[i].v, err, sizeof(err)) == 0;

		if (ok != cases[i].ok)
			printf("# %s '%s': got %d\n", mad_opt_flag(cases[i].opt), cases[i].v, ok);
		CHECK(ok == cases[i].ok);
	}
	CHECK(mad_opt_check(MAD_OPT_GPU_BIND, "x", err, sizeof(err)) == -1);
	CHECK_STR(err, "--mad-gpu-bind: 'x' is not one of warn, strict");
	CHECK(mad_opt_check(MAD_OPT_SOCKET_IFNAME, "a b", err, sizeof(err)) == -1);
	CHECK_STR(err,
		  "--mad-socket-ifname: 'a b' is not auto, keep, nor a network interface name (1 to 15 of A-Z a-z 0-9 . _ : -)");
	CHECK(mad_opt_check(MAD_OPT_MODEL, "a\x1b[31m", err, sizeof(err)) == -1);
	CHECK(strchr(err, '\x1b') == NULL);
}

static struct mad_contract c;

static int compute(struct env *e, const struct mad_facts *f)
{
	CHECK(resolve(NULL, e, 0, NULL) == 0);
	err[0] = '\0';
	return mad_contract_compute(&opts, f, &c, err, sizeof(err));
}

TEST(nodes_fanout_batch_and_step)
{
	struct env e = { { "MAD_MODEL=m" } };
	struct mad_facts f;

	mad_facts_init(&f);
	f.job_id = 77;
	f.batch_step = 1;
	f.job_nnodes = 4;
	f.nodelist = "192.0.2.10,x[1-3]";
	CHECK(compute(&e, &f) == 0);
	CHECK_STR(mad_scheduler_name(c.scheduler), "slurm");
	CHECK_STR(mad_fanout_name(c.fanout), "nodes");
	CHECK(c.rank == 0 && c.nnodes == 4 && c.collect_job_id == 77);
	CHECK_STR(c.master_host, "192.0.2.10");
	CHECK_STR(c.master_addr, "192.0.2.10");
	CHECK(c.markers_expected == 1);

	f.batch_step = 0; /* an srun step: step-relative ids */
	f.node_id = 2;
	f.nnodes = 3;
	CHECK(compute(&e, &f) == 0);
	CHECK(c.rank == 2 && c.nnodes == 3);

	f.nodelist = "no-such-host.invalid";
	CHECK(compute(&e, &f) == -1);
	CHECK(strstr(err, "cannot resolve rank 0's node 'no-such-host.invalid'") != NULL);
	f.nodelist = NULL;
	CHECK(compute(&e, &f) == -1);
}

TEST(array_fanout)
{
	struct env e = { { "MAD_MODEL=m", "MAD_FANOUT=array", "MAD_RUN_DIR=/run",
			   "MAD_MASTER_PORT=auto" } };
	struct env no_dir = { { "MAD_MODEL=m", "MAD_FANOUT=array" } };
	struct mad_facts f;

	mad_facts_init(&f);
	f.job_id = 105;
	f.array_job_id = 100;
	f.array_task_id = 7;
	f.array_task_min = 5;
	f.array_task_count = 4;
	f.batch_step = 1;
	f.restart_count = 0;
	CHECK(compute(&e, &f) == 0);
	CHECK_STR(mad_fanout_name(c.fanout), "array");
	CHECK(c.rank == 2 && c.nnodes == 4 && c.collect_job_id == 100);
	CHECK(c.master_port == 20000 + 100 * 64 % 9000);
	CHECK_STR(c.job_dir, "/run/100");
	CHECK_STR(c.master_addr, "");
	CHECK(c.markers_expected == 4);
	f.restart_count = 2;
	CHECK(compute(&e, &f) == 0);
	CHECK_STR(c.job_dir, "/run/100.2");
	CHECK(compute(&no_dir, &f) == -1);
	CHECK(strstr(err, "needs --mad-run-dir") != NULL);
	f.array_task_id = 9; /* rank 4 of 4 */
	CHECK(compute(&e, &f) == -1);
	CHECK(strstr(err, "outside 0..3") != NULL);
	f.array_task_id = MAD_NONE;
	CHECK(compute(&e, &f) == -1);
	CHECK(strstr(err, "not a job array task") != NULL);
}

TEST(scheduler_explicit_beats_detection)
{
	struct env detect = { { "MAD_MODEL=m", "MAD_RUN_DIR=/r" } };
	struct env slurm = { { "MAD_MODEL=m", "MAD_SCHEDULER=slurm", "MAD_RUN_DIR=/r" } };
	struct mad_facts f;

	mad_facts_init(&f);
	f.job_id = 9;
	f.array_job_id = 9;
	f.array_task_id = 0;
	f.array_task_count = 2;
	f.has_spur_job_id = 1;
	f.job_nnodes = 1;
	f.batch_step = 1;
	f.nodelist = "localhost";
	CHECK(compute(&detect, &f) == 0);
	CHECK_STR(mad_scheduler_name(c.scheduler), "spur");
	CHECK_STR(mad_fanout_name(c.fanout), "array"); /* auto: array task on spur */
	CHECK(compute(&slurm, &f) == 0);
	CHECK_STR(mad_scheduler_name(c.scheduler), "slurm");
	CHECK_STR(mad_fanout_name(c.fanout), "nodes"); /* auto on slurm: nodes */
}

int main(void)
{
	RUN(each_source_beats_the_next);
	RUN(a_job_inside_a_mad_job_keeps_only_model_and_run_dir);
	RUN(mad_env_inside_the_same_job_keeps_the_users_options);
	RUN(gpu_bind_and_ifname_in_every_form);
	RUN(bad_values_name_option_and_source);
	RUN(a_model_asked_anywhere_makes_bad_values_count);
	RUN(value_checks);
	RUN(nodes_fanout_batch_and_step);
	RUN(array_fanout);
	RUN(scheduler_explicit_beats_detection);
	return unit_done();
}
