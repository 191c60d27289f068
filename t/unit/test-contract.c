/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the two-level contract (lib/contract, lib/facts,
 * lib/gpus, lib/netaddr, lib/rendezvous): node and process level in every
 * launch shape, ports, addresses, GPUs and processes per node; and the job
 * folder the contract opened, the one every file is then written in and
 * read from (lib/marker, lib/job/barrier, lib/wait/ready). */
#include "contract.h"
#include "gpus.h"
#include "job/barrier.h"
#include "marker.h"
#include "netaddr.h"
#include "options.h"
#include "rendezvous.h"
#include "wait/ready.h"
#include "fake-env.h"
#include "unit.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct mad_options opts;
static struct mad_contract c;
static char err[2048];

/* Options from E, facts as given. */
static int compute(struct env *e, const struct mad_facts *f)
{
	err[0] = '\0';
	if (mad_options_resolve(&opts, NULL, env_get, e, 0, NULL, err, sizeof(err)))
		return -2;
	return mad_contract_compute(&opts, f, &c, err, sizeof(err));
}

/* An srun step of job 50 on NNODES nodes (numeric names: no DNS here). */
static void step_facts(struct mad_facts *f, long node, long nnodes, long task, long ntasks,
		       long local, long local_ntasks)
{
	mad_facts_init(f);
	f->job_id = 50;
	f->step_id = 0;
	f->node_id = node;
	f->nnodes = nnodes;
	f->job_nnodes = nnodes;
	f->task_id = task;
	f->ntasks = ntasks;
	f->local_id = local;
	f->local_ntasks = local_ntasks;
	f->node_tasks = local_ntasks;
	f->nodelist = "192.0.2.1,192.0.2.2,192.0.2.3,192.0.2.4";
}

TEST(srun_step_process_level_is_the_task_among_all_tasks)
{
	struct env e = { { "MAD_MODEL=m" } };
	struct mad_facts f;

	step_facts(&f, 2, 4, 5, 8, 1, 2);
	CHECK(compute(&e, &f) == 0);
	CHECK(c.rank == 2 && c.nnodes == 4);
	CHECK(c.task_rank == 5 && c.world_size == 8);
	CHECK(c.local_rank == 1 && c.local_world_size == 2);
	CHECK(c.task_facts == 1);
	CHECK_STR(c.master_addr, "192.0.2.1");
	CHECK(c.nproc == 2);
	/* a task id outside the step is a clear error */
	step_facts(&f, 2, 4, 8, 8, 1, 2);
	CHECK(compute(&e, &f) == -1);
	CHECK(strstr(err, "outside its step") != NULL);
}

/* A task of spur's multi-task --mpi=pmix launch (no SPANK): its wrapper unsets SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NODEID and SLURM_TASKS_PER_NODE and keeps spur's names; a SLURM step's
 * own names win over any SPUR_ name. */
TEST(spur_pmix_task_facts_from_spurs_names_slurms_win)
{
	struct env pmix = { { "MAD_MODEL=m", "SPUR_JOB_ID=7", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0",
			      "SLURM_STEP_NUM_TASKS=4", "SLURM_NNODES=2", "SLURM_JOB_NUM_NODES=2",
			      "SPUR_NODEID=1", "SPUR_PROCID=3", "SPUR_LOCALID=1",
			      "SPUR_TASKS_PER_NODE=2", "SLURM_JOB_NODELIST=192.0.2.1,192.0.2.2" } };
	struct env slurm = { { "MAD_MODEL=m", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0",
			       "SLURM_STEP_NUM_TASKS=4", "SLURM_NNODES=2", "SLURM_NODEID=0",
			       "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
			       "SPUR_NODEID=1", "SPUR_PROCID=3", "SPUR_LOCALID=1",
			       "SPUR_TASKS_PER_NODE=3", "SLURM_JOB_NODELIST=192.0.2.1,192.0.2.2" } };
	struct mad_facts f;
	char nodelist[256];

	mad_facts_from_env(&f, env_get, &pmix, nodelist, sizeof(nodelist));
	CHECK(f.node_id == 1 && f.task_id == 3 && f.local_id == 1 && f.local_ntasks == 2);
	CHECK(compute(&pmix, &f) == 0);
	CHECK(c.rank == 1 && c.nnodes == 2);
	CHECK(c.task_rank == 3 && c.world_size == 4);
	CHECK(c.local_rank == 1 && c.local_world_size == 2);
	CHECK_STR(c.master_addr, "192.0.2.1");
	mad_facts_from_env(&f, env_get, &slurm, nodelist, sizeof(nodelist));
	CHECK(f.node_id == 0 && f.task_id == 0 && f.local_id == 0 && f.local_ntasks == 2);
}

/* A spur step of 2 tasks a node under a batch script of 1 (sbatch -N2
 * --gres=gpu:4, srun -n4): spur names no per-node count for the step and
 * its tasks inherit the batch script's SPUR_TASKS_PER_NODE=1; the count is
 * the controller's block plan (step.rs distribute_tasks).  Each task sees
 * its slice of the node's GPUs while SPUR_JOB_GPUS keeps the node's list
 * (task_launch.rs build_multi_task_wrapper): 4 GPUs a node, its device 0. */
TEST(spur_step_of_several_tasks_a_node_counts_by_block_and_sees_its_gpu_slice)
{
	struct env t3 = { { "MAD_MODEL=m", "SPUR_JOB_ID=7", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0",
			    "SLURM_STEP_NUM_TASKS=4", "SLURM_NTASKS=4", "SLURM_NNODES=2",
			    "SLURM_JOB_NUM_NODES=2", "SLURM_NODEID=1", "SLURM_PROCID=3",
			    "SLURM_LOCALID=1", "SPUR_TASK_OFFSET=2", "SPUR_TASKS_PER_NODE=1",
			    "LOCAL_RANK=1", "SPUR_JOB_GPUS=0,1,2,3", "ROCR_VISIBLE_DEVICES=2,3",
			    "CUDA_VISIBLE_DEVICES=2,3", "SLURM_JOB_NODELIST=192.0.2.1,192.0.2.2" } };
	struct mad_facts f;
	char nodelist[256];

	mad_facts_from_env(&f, env_get, &t3, nodelist, sizeof(nodelist));
	CHECK(f.local_ntasks == 2 && f.gres_gpus == 4 && f.visible_gpus == 2);
	CHECK(compute(&t3, &f) == 0);
	CHECK(c.task_rank == 3 && c.local_rank == 1 && c.local_world_size == 2);
	CHECK(c.gpus == 4 && !strcmp(c.gpus_from, "spur (SPUR_JOB_GPUS)"));
	CHECK(c.nproc == 2 && c.visible == 2 && c.device == 0);
	/* 5 tasks over 2 nodes: 3 on the first, 2 on the second */
	t3.vars[4] = "SLURM_STEP_NUM_TASKS=5";
	t3.vars[5] = "SLURM_NTASKS=5";
	mad_facts_from_env(&f, env_get, &t3, nodelist, sizeof(nodelist));
	CHECK(f.local_ntasks == 2);
	t3.vars[8] = "SLURM_NODEID=0";
	t3.vars[9] = "SLURM_PROCID=1";
	mad_facts_from_env(&f, env_get, &t3, nodelist, sizeof(nodelist));
	CHECK(f.local_ntasks == 3);
}

/* A step of a spur job on some of its nodes (srun -w n3,n4, spur #868): spurd plans the tasks
 * over the step's nodes, but gives each the job's node id, count and list (agent_server.rs
 * run_command at 4cc3da8: its place in the job's list; #868 changes only the controller's
 * plan).  Task 0, on the job's third node, fails at once naming why; the other cannot tell. */
TEST(spur_subset_step_task_0_off_the_first_node_fails_naming_spur)
{
	struct env n3 = { { "MAD_MODEL=m", "SPUR_JOB_ID=7", "SLURM_JOB_ID=7", "SLURM_STEP_ID=1",
			    "SLURM_STEP_NUM_TASKS=2", "SLURM_NTASKS=2", "SLURM_NNODES=4",
			    "SLURM_JOB_NUM_NODES=4", "SLURM_NODEID=2", "SLURM_PROCID=0",
			    "SLURM_LOCALID=0", "SPUR_TASK_OFFSET=0",
			    "SLURM_NODELIST=192.0.2.1,192.0.2.2,192.0.2.3,192.0.2.4",
			    "SLURM_JOB_NODELIST=192.0.2.1,192.0.2.2,192.0.2.3,192.0.2.4" } };
	struct env n4 = n3;
	struct mad_facts f;
	char nodelist[256];

	n4.vars[8] = "SLURM_NODEID=3";
	n4.vars[9] = "SLURM_PROCID=1";
	n4.vars[11] = "SPUR_TASK_OFFSET=1";
	mad_facts_from_env(&f, env_get, &n3, nodelist, sizeof(nodelist));
	CHECK(compute(&n3, &f) == -1);
	CHECK(strstr(err, "task 0 runs on") && strstr(err, "node 2 of the job"));
	CHECK(strstr(err, "not on its first node 192.0.2.1") && strstr(err, "spur #868"));
	CHECK(strstr(err, "run the step on every node of the job, or as a job of its own"));
	mad_facts_from_env(&f, env_get, &n4, nodelist, sizeof(nodelist));
	CHECK(compute(&n4, &f) == 0);
	CHECK(c.rank == 3 && c.nnodes == 4 && c.task_rank == 1 && c.world_size == 2);
}

TEST(batch_script_and_one_task_per_node_process_level_equals_node_level)
{
	struct env e = { { "MAD_MODEL=m" } };
	struct mad_facts f;

	mad_facts_init(&f);
	f.job_id = 50;
	f.batch_step = 1;
	f.job_nnodes = 4;
	f.node_tasks = 2; /* the job has 2 tasks per node; the script is one */
	f.nodelist = "192.0.2.1,192.0.2.2";
	CHECK(compute(&e, &f) == 0);
	CHECK(c.task_rank == 0 && c.world_size == 4);
	CHECK(c.local_rank == 0 && c.local_world_size == 1);
	CHECK(c.nproc == 2);
	/* the script of a multi-node job is no task: its steps must not
	 * inherit a process level (design §3), a one-node job's may */
	CHECK(c.process_level == 0);
	f.job_nnodes = 1;
	f.nodelist = "192.0.2.1";
	CHECK(compute(&e, &f) == 0);
	CHECK(c.process_level == 1);
	/* spur's per-node script: node rank from the env, no task ids */
	mad_facts_init(&f);
	f.job_id = 51;
	f.has_spur_job_id = 1;
	f.node_id = 3;
	f.nnodes = 4;
	f.nodelist = "192.0.2.1,192.0.2.2,192.0.2.3,192.0.2.4";
	CHECK(compute(&e, &f) == 0);
	CHECK_STR(mad_scheduler_name(c.scheduler), "spur");
	CHECK(c.task_rank == 3 && c.world_size == 4 && c.local_world_size == 1);
	CHECK(c.process_level == 1);
	CHECK(c.markers_expected == 4);
}

TEST(array_fanout_ranks_are_node_rank_times_tasks_plus_local)
{
	struct env e = { { "MAD_MODEL=m", "MAD_FANOUT=array", "MAD_RUN_DIR=/r" } };
	struct mad_facts f;

	step_facts(&f, 0, 1, 1, 2, 1, 2);
	f.array_job_id = 40;
	f.array_task_id = 3;
	f.array_task_count = 4;
	CHECK(compute(&e, &f) == 0);
	CHECK(c.rank == 3 && c.nnodes == 4);
	CHECK(c.task_rank == 7 && c.world_size == 8);
	CHECK(c.local_rank == 1 && c.local_world_size == 2);
	CHECK(c.needs_rendezvous == 1);
	CHECK_STR(c.record, "rendezvous.0");
	/* a step spread over two nodes has no single node rank */
	step_facts(&f, 0, 2, 1, 4, 1, 2);
	f.array_job_id = 40;
	f.array_task_id = 3;
	f.array_task_count = 4;
	CHECK(compute(&e, &f) == -1);
	CHECK(strstr(err, "array fan-out wants each array task's step on one node") != NULL);
}

/* Property: for random layouts every (node, local) pair gets a distinct
 * RANK in 0..WORLD_SIZE-1, in both fan-outs (nodes: SLURM's block
 * distribution with uneven counts; array: equal counts). */
TEST(every_task_of_a_random_layout_gets_a_distinct_rank)
{
	struct env nodes = { { "MAD_MODEL=m" } };
	struct env array = { { "MAD_MODEL=m", "MAD_FANOUT=array", "MAD_RUN_DIR=/r" } };
	static char seen[4096];
	struct mad_facts f;
	int round, bad = 0;

	srand(7);
	for (round = 0; round < 300; round++) {
		long nn = 1 + rand() % 16, per[16], total = 0, node, local, first = 0;
		int arr = round % 2;

		for (node = 0; node < nn; node++) {
			per[node] = arr ? (round / 2) % 8 + 1 : 1 + rand() % 8;
			total += per[node];
		}
		memset(seen, 0, sizeof(seen));
		for (node = 0; node < nn; node++) {
			for (local = 0; local < per[node]; local++) {
				if (arr) {
					step_facts(&f, 0, 1, local, per[node], local, per[node]);
					f.array_job_id = 60;
					f.array_task_id = node;
					f.array_task_count = nn;
				} else {
					step_facts(&f, node, nn, first + local, total, local,
						   per[node]);
					f.nodelist = "192.0.2.1";
				}
				if (compute(arr ? &array : &nodes, &f) != 0 || c.task_rank < 0 ||
				    c.task_rank >= c.world_size || c.world_size != total ||
				    seen[c.task_rank]++) {
					bad++;
					printf("# round %d node %ld local %ld: rank %ld of %ld (%s)\n",
					       round, node, local, c.task_rank, c.world_size, err);
				}
			}
			first += per[node];
		}
	}
	CHECK(bad == 0);
}

TEST(auto_port_the_steps_reserved_port_else_from_job_and_step)
{
	struct env e = { { "MAD_MODEL=m" } };
	struct env fixed = { { "MAD_MODEL=m", "MAD_MASTER_PORT=23456" } };
	struct mad_facts f;
	long ports[141][4];
	int j, s, k, l, clash = 0;

	step_facts(&f, 0, 1, 0, 1, 0, 1);
	f.nodelist = "192.0.2.1";
	for (j = 0; j < 141; j++)
		for (s = 0; s < 4; s++) {
			f.job_id = 1000 + j;
			f.step_id = s == 0 ? MAD_NONE : s - 1;
			f.batch_step = s == 0;
			CHECK(compute(&e, &f) == 0);
			ports[j][s] = c.master_port;
			CHECK(c.master_port >= 20000 && c.master_port < 29000);
		}
	for (j = 0; j < 140; j++)
		for (s = 0; s < 4; s++)
			for (k = j; k < 140; k++)
				for (l = 0; l < 4; l++)
					clash += (k != j || l != s) && ports[j][s] == ports[k][l];
	CHECK(clash == 0);
	f.resv_port = 12001;
	CHECK(compute(&e, &f) == 0);
	CHECK(c.master_port == 12001);
	CHECK(strstr(c.port_from, "SLURM_STEP_RESV_PORTS") != NULL);
	CHECK(compute(&fixed, &f) == 0);
	CHECK(c.master_port == 23456);
	CHECK(mad_resv_ports_first("12000-12003") == 12000);
	CHECK(mad_resv_ports_first("12007,12009") == 12007);
	CHECK(mad_resv_ports_first("x") == -1);
	CHECK(mad_resv_ports_first("70000") == -1);
}

TEST(the_users_own_master_port_counts_unless_it_came_from_a_mad_job)
{
	struct env fresh = { { "MAD_MODEL=m", "MASTER_PORT=23456" } };
	struct env site_auto = { { "MAD_MODEL=m", "MASTER_PORT=23456" } };
	struct env nested = { { "MAD_MODEL=m", "MASTER_PORT=23456", "MAD_ENV_FROM=spank",
				"MAD_COLLECT_JOB_ID=9", "SLURM_JOB_ID=50" } };
	/* spur up to 0.10 (#783): 29500 and NODE_RANK are spur's; from 0.11 (#793)
	 * spur sets neither, so a port without NODE_RANK, or another port, is the user's */
	struct env spur = { { "MAD_MODEL=m", "MASTER_PORT=29500", "SPUR_JOB_ID=3",
			      "SLURM_JOB_NUM_NODES=4", "NODE_RANK=0" } };
	struct env spur11 = { { "MAD_MODEL=m", "MASTER_PORT=29500", "SPUR_JOB_ID=3",
				"SLURM_JOB_NUM_NODES=4" } };
	struct env spur_user = { { "MAD_MODEL=m", "MASTER_PORT=23456", "SPUR_JOB_ID=3",
				   "SLURM_JOB_NUM_NODES=4", "NODE_RANK=0" } };
	struct env bad = { { "MAD_MODEL=m", "MASTER_PORT=http" } };
	char *site[] = { "master-port=auto" };
	struct mad_facts f;

	step_facts(&f, 0, 1, 0, 1, 0, 1);
	f.nodelist = "192.0.2.1";
	CHECK(compute(&fresh, &f) == 0);
	CHECK(c.master_port == 23456);
	CHECK(opts.source[MAD_OPT_MASTER_PORT] == MAD_SRC_USER);
	/* source 3 beats the site's default (source 4) */
	CHECK(mad_options_resolve(&opts, NULL, env_get, &site_auto, 1, site, err, sizeof(err)) == 0);
	CHECK_STR(opts.value[MAD_OPT_MASTER_PORT], "23456");
	CHECK(compute(&nested, &f) == 0);
	CHECK(c.master_port != 23456);
	CHECK(compute(&spur, &f) == 0);
	CHECK(c.master_port != 29500);
	CHECK(compute(&spur11, &f) == 0);
	CHECK(c.master_port == 29500);
	CHECK(opts.source[MAD_OPT_MASTER_PORT] == MAD_SRC_USER);
	CHECK(compute(&spur_user, &f) == 0);
	CHECK(c.master_port == 23456);
	CHECK(compute(&bad, &f) == -2);
	CHECK(strstr(err, "'http'") != NULL &&
	      strstr(err, "MASTER_PORT in the submit environment") != NULL);
}

TEST(loopback_is_never_master_addr_of_a_multi_node_job)
{
	struct env e = { { "MAD_MODEL=m" } };
	struct mad_facts f;

	step_facts(&f, 1, 2, 1, 2, 0, 1);
	f.nodelist = "localhost,192.0.2.2";
	CHECK(compute(&e, &f) == -1);
	CHECK(strstr(err, "rank 0's node 'localhost' resolves to the loopback address 127.0.0.1") !=
	      NULL);
	/* rank 0's own node gives its own address instead */
	step_facts(&f, 0, 2, 0, 2, 0, 1);
	f.nodelist = "localhost,192.0.2.2";
	if (compute(&e, &f) == 0) {
		CHECK(!mad_addr_is_loopback(c.master_addr));
		CHECK(strstr(c.addr_from, "own address") != NULL);
	} else {
		/* only a machine without a network may end here, and CI's has one */
		CHECK(strstr(err, "no address except loopback") != NULL);
		CHECK(!getenv("CI") || strcmp(getenv("CI"), "true") != 0);
	}
	/* a single node may use loopback */
	step_facts(&f, 0, 1, 0, 1, 0, 1);
	f.nodelist = "localhost";
	CHECK(compute(&e, &f) == 0);
	CHECK(mad_addr_is_loopback(c.master_addr));
}

TEST(addr_suffix_and_iface_choose_rank_0s_network)
{
	struct env suffix = { { "MAD_MODEL=m", "MAD_ADDR_SUFFIX=.7" } };
	struct env iface = { { "MAD_MODEL=m", "MAD_IFACE=eth9" } };
	struct env iface_dir = { { "MAD_MODEL=m", "MAD_IFACE=eth9", "MAD_RUN_DIR=/r" } };
	struct mad_facts f;

	step_facts(&f, 1, 2, 1, 2, 0, 1);
	f.nodelist = "192.0.2,x"; /* "192.0.2" + ".7": a numeric name */
	CHECK(compute(&suffix, &f) == 0);
	CHECK_STR(c.master_addr, "192.0.2.7");
	CHECK(compute(&iface, &f) == -1);
	CHECK(strstr(err, "--mad-iface in nodes fan-out needs --mad-run-dir") != NULL);
	CHECK(compute(&iface_dir, &f) == 0);
	CHECK(c.needs_rendezvous == 1 && c.master_addr[0] == '\0');
}

TEST(task_0_off_the_first_node_publishes_its_address_or_fails_at_once)
{
	struct env plain = { { "MAD_MODEL=m" } };
	struct env run_dir = { { "MAD_MODEL=m", "MAD_RUN_DIR=/r" } };
	struct mad_facts f;

	/* a topology-ordered layout (26.05): task 0 on node 2 of 4 */
	step_facts(&f, 2, 4, 0, 8, 0, 2);
	snprintf(f.layout, sizeof(f.layout), "block");
	CHECK(compute(&plain, &f) == -1);
	CHECK(strstr(err, "task 0 runs on") && strstr(err, "node 2 of the step"));
	CHECK(strstr(err, "not on its first node 192.0.2.1") && strstr(err, "CR_NO_DIST_TOPO_BLOCK"));
	/* the other tasks cannot tell: only task 0 fails */
	step_facts(&f, 0, 4, 2, 8, 0, 2);
	CHECK(compute(&plain, &f) == 0);
	/* srun -m arbitrary, without a run folder: task 0 names the fix */
	step_facts(&f, 3, 4, 0, 8, 0, 2);
	snprintf(f.layout, sizeof(f.layout), "arbitrary");
	f.layout_arbitrary = 1;
	CHECK(compute(&plain, &f) == -1);
	CHECK(strstr(err, "SLURM_DISTRIBUTION=arbitrary") && strstr(err, "set --mad-run-dir"));
	/* with one, every task takes task 0's published address */
	CHECK(compute(&run_dir, &f) == 0);
	CHECK(c.needs_rendezvous && c.task0_publishes && !*c.master_addr);
	step_facts(&f, 0, 4, 3, 8, 1, 2);
	f.layout_arbitrary = 1;
	CHECK(compute(&run_dir, &f) == 0);
	CHECK(c.needs_rendezvous && c.task0_publishes && !*c.master_addr);
	/* one node: task 0 is on it */
	step_facts(&f, 0, 1, 0, 2, 0, 2);
	f.layout_arbitrary = 1;
	CHECK(compute(&run_dir, &f) == 0 && !c.needs_rendezvous);
}

TEST(ipv6_only_names_resolve_to_ipv6_without_brackets)
{
	char out[MAD_ADDR_MAX];

	CHECK(mad_resolve_addr("2001:db8::5", out, sizeof(out), err, sizeof(err)) == 0);
	CHECK_STR(out, "2001:db8::5");
	CHECK(mad_resolve_addr("192.0.2.9", out, sizeof(out), err, sizeof(err)) == 0);
	CHECK_STR(out, "192.0.2.9");
	CHECK(mad_addr_is_loopback("::1") && mad_addr_is_loopback("127.0.1.1"));
	CHECK(!mad_addr_is_loopback("2001:db8::5") && !mad_addr_is_loopback("10.0.0.1"));
	CHECK(mad_addr_valid("fd00::1") && !mad_addr_valid("fd00::1]") && !mad_addr_valid("n1"));
}

TEST(nproc_per_node_option_tasks_gpus_or_one)
{
	struct env e = { { "MAD_MODEL=m" } };
	struct env n3 = { { "MAD_MODEL=m", "MAD_NPROC_PER_NODE=3" } };
	struct env gpu = { { "MAD_MODEL=m", "MAD_NPROC_PER_NODE=gpu" } };
	struct env bad = { { "MAD_MODEL=m", "MAD_NPROC_PER_NODE=lots" } };
	struct mad_facts f;

	step_facts(&f, 0, 1, 0, 1, 0, 1);
	f.nodelist = "192.0.2.1";
	f.gpus = -1;
	CHECK(compute(&e, &f) == 0 && c.nproc == 1);
	CHECK(compute(&gpu, &f) == -1);
	CHECK(strstr(err, "no GPUs found") != NULL);
	f.gpus = 8;
	f.gpus_from = "SLURM (SLURM_GPUS_ON_NODE)";
	CHECK(compute(&e, &f) == 0 && c.nproc == 8);
	CHECK(compute(&gpu, &f) == 0 && c.nproc == 8);
	f.inherited_nproc = 4; /* the batch step saw 4 tasks per node */
	CHECK(compute(&e, &f) == 0 && c.nproc == 4);
	f.node_tasks = 2;
	CHECK(compute(&e, &f) == 0 && c.nproc == 2);
	CHECK(compute(&n3, &f) == 0 && c.nproc == 3);
	CHECK(compute(&bad, &f) == -2);
	CHECK(strstr(err, "--mad-nproc-per-node: 'lots'") != NULL);
}

TEST(tasks_per_node_lists_as_slurm_writes_them)
{
	CHECK(mad_tasks_on_node("2(x3),1", 0) == 2);
	CHECK(mad_tasks_on_node("2(x3),1", 2) == 2);
	CHECK(mad_tasks_on_node("2(x3),1", 3) == 1);
	CHECK(mad_tasks_on_node("2(x3),1", 4) == MAD_NONE);
	CHECK(mad_tasks_on_node("8", 0) == 8);
	CHECK(mad_tasks_on_node("3,2", 1) == 2);
	CHECK(mad_tasks_on_node("2(3)", 0) == MAD_NONE);
	CHECK(mad_tasks_on_node("2(x)", 0) == MAD_NONE);
	CHECK(mad_tasks_on_node("x", 0) == MAD_NONE);
	CHECK(mad_tasks_on_node("", 0) == MAD_NONE);
}

static void put(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		if (write(fd, content, strlen(content)) < 0)
			perror(path);
		close(fd);
	}
}

TEST(gpus_from_gres_visible_lists_or_devices)
{
	struct env gres = { { "SLURM_GPUS_ON_NODE=4", "CUDA_VISIBLE_DEVICES=0,1" } };
	struct env rocr = { { "ROCR_VISIBLE_DEVICES=0,1,2", "CUDA_VISIBLE_DEVICES=0" } };
	struct env none_visible = { { "CUDA_VISIBLE_DEVICES=" } };
	struct env nodev = { { "CUDA_VISIBLE_DEVICES=NoDevFiles" } };
	struct env spur_deny = { { "ROCR_VISIBLE_DEVICES=-1", "CUDA_VISIBLE_DEVICES=-1" } };
	struct env cut = { { "HIP_VISIBLE_DEVICES=0,1,-1,2" } };
	struct env empty = { { NULL } };
	char root[] = "/tmp/mad-gpus-XXXXXX", path[256];
	const char *from;

	CHECK(mad_gpus_detect(env_get, &gres, "/nonexistent", &from) == 4);
	CHECK_STR(from, "SLURM (SLURM_GPUS_ON_NODE)");
	CHECK(mad_gpus_detect(env_get, &rocr, "/nonexistent", &from) == 3);
	CHECK_STR(from, "env (ROCR_VISIBLE_DEVICES)");
	CHECK(mad_gpus_detect(env_get, &none_visible, "/nonexistent", &from) == 0);
	CHECK(mad_gpus_detect(env_get, &nodev, "/nonexistent", &from) == -1);
	/* spur 0.12's deny for a job without GPUs (#648): none visible */
	CHECK(mad_gpus_detect(env_get, &spur_deny, "/nonexistent", &from) == 0);
	CHECK_STR(from, "env (ROCR_VISIBLE_DEVICES)");
	/* the runtimes stop at the first invalid entry */
	CHECK(mad_gpus_detect(env_get, &cut, "/nonexistent", &from) == 2);
	CHECK(mkdtemp(root) != NULL);
	CHECK(mad_gpus_detect(env_get, &empty, root, &from) == -1);
	/* AMD: /dev/kfd and KFD topology nodes; gpu_id 0 is a CPU node */
	snprintf(path, sizeof(path), "%s/dev", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/kfd", root);
	put(path, "");
	snprintf(path, sizeof(path), "%s/sys/class/kfd/kfd/topology/nodes", root);
	CHECK(system("true") == 0);
	{
		char cmd[1024];
		int i;

		snprintf(cmd, sizeof(cmd), "mkdir -p %s/0 %s/1 %s/2", path, path, path);
		CHECK(system(cmd) == 0);
		for (i = 0; i < 3; i++) {
			char id[300];

			snprintf(id, sizeof(id), "%s/%d/gpu_id", path, i);
			put(id, i == 0 ? "0\n" : "4251\n");
		}
	}
	CHECK(mad_gpus_detect(env_get, &empty, root, &from) == 2);
	CHECK(strstr(from, "AMD") != NULL);
	snprintf(path, sizeof(path), "%s/dev/kfd", root);
	unlink(path);
	/* /dev is walked only where the control device or the first GPU is */
	snprintf(path, sizeof(path), "%s/dev/nvidia1", root);
	put(path, "");
	CHECK(mad_gpus_detect(env_get, &empty, root, &from) == -1);
	snprintf(path, sizeof(path), "%s/dev/nvidiactl", root);
	put(path, "");
	CHECK(mad_gpus_detect(env_get, &empty, root, &from) == 1);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dev/nvidia0", root);
	put(path, "");
	CHECK(mad_gpus_detect(env_get, &empty, root, &from) == 2);
	snprintf(path, sizeof(path), "%s/dev/nvidiactl", root);
	put(path, "");
	CHECK(mad_gpus_detect(env_get, &empty, root, &from) == 2);
	CHECK(strstr(from, "NVIDIA") != NULL);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		CHECK(system(cmd) == 0);
	}
}

TEST(rendezvous_record_carries_ipv6_and_rank_0s_tasks_per_node)
{
	char dir[] = "/tmp/mad-rdzv-XXXXXX";
	struct mad_rdzv r = { "2001:db8::7", 20001, "n1", 70, 4, 2, -1 }, got;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(mad_rdzv_publish(fd, dir, "rendezvous.0", &r, err, sizeof(err)) == 0);
	CHECK(mad_rdzv_read(fd, dir, "rendezvous.0", getuid(), &got, err, sizeof(err)) == 1);
	CHECK_STR(got.addr, "2001:db8::7");
	CHECK(got.tasks_per_node == 2 && got.port == 20001 && got.job_id == 70);
	CHECK(got.time >= time(NULL) - 5 && got.time <= time(NULL));
	CHECK(mad_rdzv_read(fd, dir, "rendezvous", getuid(), &got, err, sizeof(err)) == 0);
	/* only the job's user's record counts (jobdir.h) */
	CHECK(mad_rdzv_read(fd, dir, "rendezvous.0", getuid() + 1, &got, err, sizeof(err)) == -1);
	CHECK(strstr(err, "ignored the rendezvous record") != NULL);
	CHECK(strstr(err, "not the job's user") != NULL);
	close(fd);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(system(cmd) == 0);
	}
}

/* Whether DIR/NAME exists and, TEXT not NULL, holds TEXT. */
static int holds(const char *dir, const char *name, const char *text)
{
	char path[600], buf[2048];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return !text || strstr(buf, text) != NULL;
}

/* The job's own user renames the run folder away once the job opened its
 * folder, and puts a look-alike at its path: a run folder with a job
 * folder of the same name and this attempt's identity, holding a record
 * of another job and a failure marker.  Every file the job writes after
 * that lands in the folder it opened and checked, and every read comes
 * from there: never from what the path names now (design.md §15). */
TEST(the_opened_job_folder_is_written_and_read_whatever_its_path_names_later)
{
	char top[] = "/tmp/mad-swap-XXXXXX", run[64], env_run[96], moved[96], notes[1024];
	char opened[MAD_JOBDIR_PATH], now[MAD_JOBDIR_PATH], path[MAD_JOBDIR_PATH + 32];
	struct env e = { { "MAD_MODEL=m", env_run } };
	struct mad_rdzv mine = { "192.0.2.1", 29500, "n1", 50, 2, 1, -1 }, got;
	struct mad_run this_run;
	struct mad_jobdir d;
	struct mad_facts f;
	int fd;

	unit_mkdtemp(top);
	snprintf(run, sizeof(run), "%s/run", top);
	snprintf(moved, sizeof(moved), "%s/moved", top);
	snprintf(env_run, sizeof(env_run), "MAD_RUN_DIR=%s", run);
	CHECK(mkdir(run, 0755) == 0);
	step_facts(&f, 0, 2, 0, 2, 0, 1); /* task 0 founds the folder */
	snprintf(f.cluster, sizeof(f.cluster), "swap");
	CHECK(compute(&e, &f) == 0);
	CHECK(mad_contract_job_dir(&c, MAD_JOBDIR_JOIN, err, sizeof(err)) == 0);
	fd = c.job_dir_fd;
	CHECK(fd >= 0);
	snprintf(now, sizeof(now), "%s", c.job_dir);
	snprintf(opened, sizeof(opened), "%s%s", moved, c.job_dir + strlen(run));
	/* the swap, then the look-alike made as the lib makes a job folder */
	CHECK(rename(run, moved) == 0 && mkdir(run, 0755) == 0);
	CHECK(mad_contract_jobdir(&c, &d, err, sizeof(err)) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, notes, sizeof(notes),
			      err, sizeof(err)) == 0);
	CHECK_STR(path, now);
	put(strcat(strcpy(path, now), "/rendezvous"), "addr=192.0.2.9\nport=1111\njob=51\n");
	put(strcat(strcpy(path, now), "/done_rank0"), "1\nrank=0\njob=50\nerror=x\nstepd=77\n");
	/* what the opened folder holds: rank 0's record and rank 1's start */
	put(strcat(strcpy(path, opened), "/rendezvous"), "addr=192.0.2.1\nport=2222\njob=50\n");
	put(strcat(strcpy(path, opened), "/started_rank1"), "rank=1\n");

	/* reads: the opened folder's record, no failure recorded there */
	CHECK(mad_rdzv_read(fd, c.job_dir, "rendezvous", c.uid, &got, err, sizeof(err)) == 1);
	CHECK(got.port == 2222 && got.job_id == 50);
	CHECK(mad_rdzv_wait(fd, c.job_dir, "rendezvous", 50, c.uid, 1, 0, 0, NULL, &got, err,
			    sizeof(err)) == 0);
	CHECK(mad_marker_failure_recorded(fd, "done_rank0", 50, 77) == 0);
	/* the barrier writes its record and counts rank 1's there */
	CHECK(mad_barrier_wait(fd, c.job_dir, -1, 0, 2, "n1", c.uid, NULL, 0, err, sizeof(err)) == 0);
	CHECK(holds(opened, "started_rank0", "rank=0") && !holds(now, "started_rank0", NULL));
	/* writes: all of them in the opened folder, none at the path */
	CHECK(mad_rdzv_publish(fd, c.job_dir, "rendezvous", &mine, err, sizeof(err)) == 0);
	CHECK(holds(opened, "rendezvous", "port=29500") && holds(now, "rendezvous", "port=1111"));
	CHECK(mad_expected_write(fd, c.job_dir, 2, err, sizeof(err)) == 0);
	CHECK(holds(opened, "expected", "2") && !holds(now, "expected", NULL));
	CHECK(mad_run_begin(fd, c.job_dir, 0, c.uid, "n1", "1.2", 5, &this_run, err, sizeof(err)) == 0);
	CHECK(holds(opened, "script_rank0", NULL) && !holds(now, "script_rank0", NULL));
	CHECK(mad_ready_leave(fd, c.job_dir, 0, 50, "http://n1:8000", err, sizeof(err)) == 0);
	CHECK(holds(opened, "ready_rank0", "http://n1:8000") && !holds(now, "ready_rank0", NULL));
	CHECK(mad_marker_leave(fd, c.job_dir, 0, 50, 3, "why", 78, err, sizeof(err)) == 0);
	CHECK(holds(opened, "done_rank0", "3\n") && holds(now, "done_rank0", "stepd=77"));
	CHECK(mad_marker_failure_recorded(fd, "done_rank0", 50, 78) == 1);
	mad_contract_release(&c);
	CHECK(c.job_dir_fd == -1);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		CHECK(system(cmd) == 0);
	}
}

TEST(a_busy_port_fails_rank_0_naming_port_and_node)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	long port;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	port = ntohs(a.sin_port);
	CHECK(mad_port_check(port, "n1", err, sizeof(err)) == -1);
	CHECK(strstr(err, "is already in use on rank 0's node n1") != NULL);
	close(fd);
	CHECK(mad_port_check(port, "n1", err, sizeof(err)) == 0);
}

/* One task of an srun step of job 60 on 2 nodes, 4 tasks per node, with
 * the GPU variables SLURM 22.05 sets per task (notes/local-cluster.md,
 * "GPUs without GPUs (GRES)", task/none: a list keeps the node's indices;
 * SLURM_GPUS_ON_NODE is the step's GPUs on the node, gres_common.c
 * gres_common_gpu_set_env), and the contract computed from them. */
static char gpu_nodelist[256];
static struct mad_facts gpu_f;

/* EXTRA: further NAME=VALUE strings, NULL-ended (or NULL). */
static int gpu_task_with(long local, long tasks_here, const char *gpus_on_node, const char *visible,
			 const char *bind, const char *const *extra)
{
	char procid[48], localid[48], per_node[64], cuda[256], rocr[256], son[48], gb[48];
	struct env e = { { "MAD_MODEL=m", "SLURM_JOB_ID=60", "SLURM_STEP_ID=0", "SLURM_NODEID=0",
			   "SLURM_STEP_NUM_NODES=2", "SLURM_JOB_NUM_NODES=2",
			   "SLURM_STEP_NODELIST=192.0.2.1,192.0.2.2", "SLURM_STEP_NUM_TASKS=8" } };
	int n = 8;

	while (extra && *extra && n < FAKE_ENV_MAX - 8)
		e.vars[n++] = *extra++;

	snprintf(procid, sizeof(procid), "SLURM_PROCID=%ld", local);
	snprintf(localid, sizeof(localid), "SLURM_LOCALID=%ld", local);
	snprintf(per_node, sizeof(per_node), "SLURM_STEP_TASKS_PER_NODE=%ld(x2)", tasks_here);
	e.vars[n++] = procid;
	e.vars[n++] = localid;
	e.vars[n++] = per_node;
	if (gpus_on_node) {
		snprintf(son, sizeof(son), "SLURM_GPUS_ON_NODE=%s", gpus_on_node);
		e.vars[n++] = son;
	}
	if (visible) {
		/* SLURM sets both, equal (the notes) */
		snprintf(cuda, sizeof(cuda), "CUDA_VISIBLE_DEVICES=%s", visible);
		snprintf(rocr, sizeof(rocr), "ROCR_VISIBLE_DEVICES=%s", visible);
		e.vars[n++] = cuda;
		e.vars[n++] = rocr;
	}
	if (bind) {
		snprintf(gb, sizeof(gb), "MAD_GPU_BIND=%s", bind);
		e.vars[n++] = gb;
	}
	mad_facts_from_env(&gpu_f, env_get, &e, gpu_nodelist, sizeof(gpu_nodelist));
	return compute(&e, &gpu_f);
}

static int gpu_task(long local, long tasks_here, const char *gpus_on_node, const char *visible,
		    const char *bind)
{
	return gpu_task_with(local, tasks_here, gpus_on_node, visible, bind, NULL);
}

struct exported {
	char device[16], ifname[32], nccl[32], gloo[32], device_from[384], gpus[16], nproc[16];
	int has_device, has_ifname, has_nccl, has_gloo, has_gpus;
	int unset_device, unset_ifname, unset_gpus, unset_nccl; /* exported as to be unset */
};

static int collect(void *ctx, const char *name, const char *value, const char *source)
{
	struct exported *x = ctx;

	if (!value) {
		x->unset_device |= !strcmp(name, "MAD_LOCAL_DEVICE");
		x->unset_ifname |= !strcmp(name, "MAD_IFNAME");
		x->unset_gpus |= !strcmp(name, "MAD_GPUS_PER_NODE");
		x->unset_nccl |= !strcmp(name, "NCCL_SOCKET_IFNAME");
		if (!strcmp(name, "MAD_LOCAL_DEVICE"))
			snprintf(x->device_from, sizeof(x->device_from), "%s", source);
		return 0;
	}
	if (!strcmp(name, "MAD_GPUS_PER_NODE")) {
		x->has_gpus = 1;
		snprintf(x->gpus, sizeof(x->gpus), "%s", value);
	} else if (!strcmp(name, "MAD_NPROC_PER_NODE"))
		snprintf(x->nproc, sizeof(x->nproc), "%s", value);
	if (!strcmp(name, "MAD_LOCAL_DEVICE")) {
		x->has_device = 1;
		snprintf(x->device, sizeof(x->device), "%s", value);
		snprintf(x->device_from, sizeof(x->device_from), "%s", source);
	} else if (!strcmp(name, "MAD_IFNAME")) {
		x->has_ifname = 1;
		snprintf(x->ifname, sizeof(x->ifname), "%s", value);
	} else if (!strcmp(name, "NCCL_SOCKET_IFNAME")) {
		x->has_nccl = 1;
		snprintf(x->nccl, sizeof(x->nccl), "%s", value);
	} else if (!strcmp(name, "GLOO_SOCKET_IFNAME")) {
		x->has_gloo = 1;
		snprintf(x->gloo, sizeof(x->gloo), "%s", value);
	}
	return 0;
}

static struct exported exported(void)
{
	struct exported x;

	memset(&x, 0, sizeof(x));
	CHECK(mad_contract_export(&opts, &c, "mad-env", collect, &x) == 0);
	return x;
}

/* MAD_LOCAL_DEVICE under each binding, from what SLURM sets per task. */
TEST(local_device_under_each_gpu_binding)
{
	struct exported x;
	char msg[1024];
	long t;

	/* --gpus-per-task=1: task t sees "t", the step has 4 here */
	for (t = 0; t < 4; t++) {
		char list[8];

		snprintf(list, sizeof(list), "%ld", t);
		CHECK(gpu_task(t, 4, "4", list, NULL) == 0);
		CHECK(c.local_rank == t && c.device == 0 && c.visible == 1);
		CHECK(mad_contract_device_mismatch(&c, msg, sizeof(msg)) == (t > 0));
	}
	x = exported();
	CHECK(x.has_device && !strcmp(x.device, "0"));
	CHECK(strstr(x.device_from, "SLURM bound this task's own GPU") != NULL);
	CHECK(strstr(x.device_from, "ROCR_VISIBLE_DEVICES=3, SLURM_GPUS_ON_NODE=4, LOCAL_RANK=3") !=
	      NULL);
	/* --ntasks-per-gpu=2: 4 tasks on 2 GPUs, tasks 2 and 3 see "1" */
	CHECK(gpu_task(3, 4, "2", "1", NULL) == 0);
	CHECK(c.device == 0 && mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	CHECK(gpu_task(1, 4, "2", "0", NULL) == 0);
	CHECK(c.device == 0 && mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	/* --gpu-bind=map_gpu:3,2,1,0: task 0 sees "3", task 3 "0" */
	CHECK(gpu_task(0, 4, "4", "3", NULL) == 0);
	CHECK(c.device == 0 && !mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	CHECK(gpu_task(3, 4, "4", "0", NULL) == 0);
	CHECK(c.device == 0 && mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	/* --gres=gpu:4 without binding: every task sees all 4 */
	for (t = 0; t < 4; t++) {
		CHECK(gpu_task(t, 4, "4", "0,1,2,3", NULL) == 0);
		CHECK(c.device == t && !mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	}
	x = exported();
	CHECK(strstr(x.device_from, "LOCAL_RANK: the task sees every GPU of the node") != NULL);
	/* --gpus-per-task=2 with 2 tasks: each task's 2 are its own: its first */
	CHECK(gpu_task(1, 2, "4", "2,3", NULL) == 0);
	CHECK(c.device == 0 && !mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	/* --gpu-bind=closest, 2 GPUs per socket, 4 tasks: one each */
	CHECK(gpu_task(3, 4, "4", "2,3", NULL) == 0);
	CHECK(c.device == 1 && mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	/* more tasks than GPUs, nothing bound: LOCAL_RANK mod the GPUs */
	CHECK(gpu_task(5, 8, "4", "0,1,2,3", NULL) == 0);
	CHECK(c.device == 1 && mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	/* a node without GPUs: no list, no count: unset, nothing said */
	CHECK(gpu_task(1, 4, NULL, NULL, NULL) == 0);
	CHECK(c.device == -1 && !mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	x = exported();
	CHECK(!x.has_device && x.unset_device); /* no inherited value stays */
	/* spur 0.12 denies GPUs with -1: none visible */
	CHECK(gpu_task(1, 4, NULL, "-1", NULL) == 0);
	CHECK(c.device == -1);
	/* GRES without device files: no list, every GPU visible */
	CHECK(gpu_task(2, 4, "4", NULL, NULL) == 0);
	CHECK(c.device == 2);
	/* the batch script, one task of the node: its first device */
	CHECK(mad_local_device(2, 2, 0, 1, &(const char *){ NULL }) == 0);
}

/* An agent's task (srun --ntasks-per-node=1 torchrun --nproc-per-node=4)
 * hands its environment to the node's processes, each with its own
 * LOCAL_RANK: one device there would put every worker on it. */
TEST(an_agents_task_leaves_the_device_to_its_processes)
{
	static const char *const nproc8[] = { "MAD_NPROC_PER_NODE=8", NULL };
	struct exported x;
	char msg[1024];

	/* one task a node sees the node's 4 GPUs: MAD_NPROC_PER_NODE=4 */
	CHECK(gpu_task(0, 1, "4", "0,1,2,3", NULL) == 0);
	CHECK(c.nproc == 4 && c.device == -1);
	CHECK(!mad_contract_device_mismatch(&c, msg, sizeof(msg)));
	x = exported();
	CHECK(!x.has_device && x.unset_device);
	CHECK(strstr(x.device_from,
		     "unset (an agent's task: MAD_NPROC_PER_NODE=4 processes on 1 task a node") != NULL);
	/* two agents of 4, SLURM bound each its own 4 of the node's 8
	 * (--gpus-per-task=4): each worker's LOCAL_RANK among its agent's 4 */
	CHECK(gpu_task_with(1, 2, "8", "4,5,6,7", NULL, nproc8) == 0);
	CHECK(c.nproc == 8 && c.device == -1);
	/* ... but two agents that both see all 8 would each put their workers
	 * on GPUs 0..3: not an agent's rule; LOCAL_RANK's, as before */
	CHECK(gpu_task_with(1, 2, "8", "0,1,2,3,4,5,6,7", NULL, nproc8) == 0);
	CHECK(c.nproc == 8 && c.device == 1);
	/* ... but SLURM bound each task one GPU: not an agent's, its own
	 * device and the warning stay whatever the count says */
	CHECK(gpu_task_with(1, 2, "2", "1", NULL, nproc8) == 0);
	CHECK(c.nproc == 8 && c.device == 0);
	CHECK(mad_contract_device_mismatch(&c, msg, sizeof(msg)) == 1);
	/* a process per task: LOCAL_RANK's device, as before */
	CHECK(gpu_task(1, 2, "4", "0,1,2,3", NULL) == 0);
	CHECK(c.nproc == 2 && c.device == 1);
}

/* MAD_GPUS_PER_NODE is a fact of this node: where no GPU is found it is
 * unset, never a parent job's count. */
TEST(gpus_per_node_unknown_is_unset_not_inherited)
{
	static const char *const parent[] = { "MAD_GPUS_PER_NODE=4", "MAD_LOCAL_DEVICE=1", NULL };
	struct exported x;

	CHECK(gpu_task_with(1, 2, NULL, NULL, NULL, parent) == 0);
	CHECK(c.gpus == -1 && c.device == -1);
	x = exported();
	CHECK(!x.has_gpus && x.unset_gpus && x.unset_device);
	CHECK(gpu_task(1, 2, "4", "0,1,2,3", NULL) == 0);
	x = exported();
	CHECK(x.has_gpus && !strcmp(x.gpus, "4") && !x.unset_gpus);
}

/* In this job's own srun steps MAD_NPROC_PER_NODE is the batch step's
 * count, not the option: a step of two tasks a node under a batch step of
 * one (sbatch -n1 --gres=gpu:4, then srun -n2) has 2 processes a node, and
 * each task keeps LOCAL_RANK's device. */
TEST(a_steps_nproc_is_its_own_not_its_batch_steps)
{
	static const char *const own[] = { "MAD_ENV_FROM=mad.so", "MAD_COLLECT_JOB_ID=60",
					   "MAD_NPROC_PER_NODE=4", NULL };
	static const char *const other[] = { "MAD_ENV_FROM=mad.so", "MAD_COLLECT_JOB_ID=59",
					     "MAD_NPROC_PER_NODE=4", NULL };
	struct env batch = { { "MAD_MODEL=m", "SLURM_JOB_ID=60", "SLURM_JOB_NUM_NODES=1",
			       "SLURM_JOB_NODELIST=192.0.2.1", "SLURM_TASKS_PER_NODE=2",
			       "MAD_ENV_FROM=spank", "MAD_COLLECT_JOB_ID=60", "MAD_NPROC_PER_NODE=8" } };
	struct mad_facts bf;
	char bnodes[64];
	struct exported x;

	CHECK(gpu_task_with(1, 2, "4", "0,1,2,3", NULL, own) == 0);
	CHECK(c.nproc == 2 && c.device == 1);
	CHECK_STR(c.nproc_from, "computed (tasks per node)");
	/* mad-env in the batch script itself: the value mad.so took there
	 * (MAD_NPROC_PER_NODE=8 given at submission), not a recount */
	mad_facts_from_env(&bf, env_get, &batch, bnodes, sizeof(bnodes));
	CHECK(compute(&batch, &bf) == 0);
	CHECK(c.nproc == 8);
	/* a step of one task a node takes the batch step's count */
	CHECK(gpu_task_with(0, 1, "4", "0,1,2,3", NULL, own) == 0);
	CHECK(c.nproc == 4 && c.device == -1);
	CHECK_STR(c.nproc_from, "computed (this job's batch step)");
	/* another job's value (a job submitted from inside a mad job) is not
	 * this job's: the step computes its own */
	CHECK(gpu_task_with(0, 1, "2", "0,1", NULL, other) == 0);
	CHECK(c.nproc == 2);
	x = exported();
	CHECK(!strcmp(x.nproc, "2"));
}

/* A visible-device list of GPU UUIDs is read whole: four of them are 164
 * bytes. */
TEST(a_list_of_gpu_uuids_is_a_list)
{
	static const char *const uuids[] = {
		"CUDA_VISIBLE_DEVICES=GPU-0a1b2c3d-0000-1111-2222-333344445555,GPU-1a1b2c3d-0000-1111-2222-333344445555,GPU-2a1b2c3d-0000-1111-2222-333344445555,GPU-3a1b2c3d-0000-1111-2222-333344445555",
		NULL
	};

	CHECK(gpu_task_with(1, 2, "8", NULL, NULL, uuids) == 0);
	CHECK(c.visible == 4 && c.device == 0);
}

/* The mismatch is one line naming the variables and the fix; strict makes
 * it an error (the plugin fails the task, mad-env exits 1). */
TEST(local_rank_past_the_visible_gpus_is_one_line_or_strict)
{
	char msg[1024];

	CHECK(gpu_task(1, 4, "4", "1", NULL) == 0);
	CHECK(!c.gpu_strict);
	CHECK(mad_contract_device_mismatch(&c, msg, sizeof(msg)) == 1);
	CHECK_STR(msg,
		  "warning: LOCAL_RANK=1 but this task sees 1 GPU (ROCR_VISIBLE_DEVICES=1): set_device(LOCAL_RANK) fails with 'invalid device ordinal'; use MAD_LOCAL_DEVICE=0, e.g. torch.cuda.set_device(int(os.environ[\"MAD_LOCAL_DEVICE\"]))");
	CHECK(strchr(msg, '\n') == NULL);
	CHECK(gpu_task(1, 4, "4", "1", "strict") == 0);
	CHECK(c.gpu_strict);
	CHECK(mad_contract_device_mismatch(&c, msg, sizeof(msg)) == 1);
	CHECK(strncmp(msg, "LOCAL_RANK=1 but this task sees 1 GPU", 37) == 0);
	CHECK(strstr(msg, "(--mad-gpu-bind=strict)") != NULL);
	/* strict where set_device(LOCAL_RANK) works: nothing */
	CHECK(gpu_task(1, 4, "4", "0,1,2,3", "strict") == 0);
	CHECK(mad_contract_device_mismatch(&c, msg, sizeof(msg)) == 0);
}

/* Interface states from getifaddrs' list: never loopback, never down. */
TEST(an_interface_is_usable_only_up_running_and_not_loopback)
{
	struct sockaddr_in a_lo, a_eth, a_down;
	struct ifaddrs lo, eth, down;
	char name[32];

	memset(&a_lo, 0, sizeof(a_lo));
	a_lo.sin_family = AF_INET;
	a_eth = a_down = a_lo;
	inet_pton(AF_INET, "127.0.0.1", &a_lo.sin_addr);
	inet_pton(AF_INET, "192.0.2.5", &a_eth.sin_addr);
	inet_pton(AF_INET, "198.51.100.5", &a_down.sin_addr);
	memset(&lo, 0, sizeof(lo));
	eth = down = lo;
	lo.ifa_name = "lo";
	lo.ifa_flags = IFF_UP | IFF_RUNNING | IFF_LOOPBACK;
	lo.ifa_addr = (struct sockaddr *)&a_lo;
	lo.ifa_next = &eth;
	eth.ifa_name = "eth1";
	eth.ifa_flags = IFF_UP | IFF_RUNNING;
	eth.ifa_addr = (struct sockaddr *)&a_eth;
	eth.ifa_next = &down;
	down.ifa_name = "ib0";
	down.ifa_flags = IFF_UP; /* no carrier */
	down.ifa_addr = (struct sockaddr *)&a_down;
	CHECK(mad_iface_state_in(&lo, "eth1") == MAD_IFACE_USABLE);
	CHECK(mad_iface_state_in(&lo, "lo") == MAD_IFACE_LOOPBACK);
	CHECK(mad_iface_state_in(&lo, "ib0") == MAD_IFACE_DOWN);
	CHECK(mad_iface_state_in(&lo, "ib1") == MAD_IFACE_ABSENT);
	CHECK(mad_iface_of_addr_in(&lo, "192.0.2.5", name, sizeof(name)) == MAD_IFACE_USABLE);
	CHECK_STR(name, "eth1");
	CHECK(mad_iface_of_addr_in(&lo, "198.51.100.5", name, sizeof(name)) == MAD_IFACE_DOWN);
	CHECK(mad_iface_of_addr_in(&lo, "127.0.0.1", name, sizeof(name)) == MAD_IFACE_LOOPBACK);
	CHECK(mad_iface_of_addr_in(&lo, "203.0.113.9", name, sizeof(name)) == MAD_IFACE_ABSENT);
	down.ifa_flags = 0; /* administratively down */
	CHECK(mad_iface_state_in(&lo, "ib0") == MAD_IFACE_DOWN);
}

/* MAD_IFNAME is this node's route to MASTER_ADDR; --mad-socket-ifname sets
 * NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME only where unset. */
TEST(ifname_keep_auto_name_user_set_and_loopback)
{
	struct mad_facts f;
	struct exported x;
	char here[MAD_ADDR_MAX], route[32];
	struct env keep = { { "MAD_MODEL=m" } };
	struct env autoo = { { "MAD_MODEL=m", "MAD_SOCKET_IFNAME=auto" } };
	struct env lo = { { "MAD_MODEL=m", "MAD_SOCKET_IFNAME=lo" } };
	struct env absent = { { "MAD_MODEL=m", "MAD_SOCKET_IFNAME=nosuch9" } };
	struct env user = { { "NCCL_SOCKET_IFNAME=ib0" } };
	struct env inherited = { { "NCCL_SOCKET_IFNAME=eth7", "GLOO_SOCKET_IFNAME=eth7",
				   "MAD_IFNAME=eth7", "MAD_ENV_FROM=spank" } };
	struct env user_same_fresh = { { "NCCL_SOCKET_IFNAME=eth7", "MAD_IFNAME=eth7" } };
	char nl[64];

	/* a one-node job on loopback: no interface is named */
	step_facts(&f, 0, 1, 0, 1, 0, 1);
	f.nodelist = "127.0.0.1";
	CHECK(compute(&autoo, &f) == 0);
	CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == 0);
	x = exported();
	CHECK(!x.has_ifname && x.unset_ifname && !x.has_nccl && !x.has_gloo);
	/* --mad-socket-ifname=lo, or one this node lacks: an error naming it */
	CHECK(compute(&lo, &f) == 0);
	CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == -1);
	CHECK(strstr(err, "--mad-socket-ifname=lo: 'lo' is the loopback interface on ") == err);
	CHECK(compute(&absent, &f) == 0);
	CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == -1);
	CHECK(strstr(err, "'nosuch9' is not an interface of this node") != NULL);
	/* whose NCCL_SOCKET_IFNAME: the user's, or an enclosing mad job's */
	mad_facts_from_env(&f, env_get, &user, nl, sizeof(nl));
	CHECK(f.user_nccl_ifname && !f.user_gloo_ifname);
	mad_facts_from_env(&f, env_get, &inherited, nl, sizeof(nl));
	CHECK(!f.user_nccl_ifname && !f.user_gloo_ifname);
	mad_facts_from_env(&f, env_get, &user_same_fresh, nl, sizeof(nl));
	CHECK(f.user_nccl_ifname);

	/* a node with an address that is not loopback: its route's interface */
	if (mad_local_addr(NULL, NULL, here, sizeof(here), err, sizeof(err)) ||
	    mad_route_iface(here, route, sizeof(route)) != MAD_IFACE_USABLE) {
		printf("# no usable interface here: the route cases are skipped\n");
		return;
	}
	step_facts(&f, 0, 1, 0, 1, 0, 1);
	f.nodelist = here;
	CHECK(compute(&keep, &f) == 0);
	CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == 0);
	x = exported();
	CHECK(x.has_ifname && !strcmp(x.ifname, route));
	CHECK(!x.has_nccl && !x.has_gloo); /* keep: the default */
	CHECK(compute(&autoo, &f) == 0);
	CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == 0);
	x = exported();
	CHECK(!strcmp(x.nccl, route) && !strcmp(x.gloo, route));
	/* the user's own value is never overwritten */
	f.user_nccl_ifname = 1;
	CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == 0);
	x = exported();
	CHECK(!x.has_nccl && !strcmp(x.gloo, route));
	f.user_nccl_ifname = 0;
	/* NAME: that interface, checked here */
	{
		char name_opt[64];
		struct env named = { { "MAD_MODEL=m", name_opt } };

		snprintf(name_opt, sizeof(name_opt), "MAD_SOCKET_IFNAME=%s", route);
		CHECK(compute(&named, &f) == 0);
		CHECK(mad_contract_ifname(&opts, &f, &c, err, sizeof(err)) == 0);
		x = exported();
		CHECK(!strcmp(x.nccl, route) && !strcmp(x.gloo, route));
	}
}

int main(void)
{
	RUN(srun_step_process_level_is_the_task_among_all_tasks);
	RUN(spur_pmix_task_facts_from_spurs_names_slurms_win);
	RUN(spur_step_of_several_tasks_a_node_counts_by_block_and_sees_its_gpu_slice);
	RUN(spur_subset_step_task_0_off_the_first_node_fails_naming_spur);
	RUN(batch_script_and_one_task_per_node_process_level_equals_node_level);
	RUN(array_fanout_ranks_are_node_rank_times_tasks_plus_local);
	RUN(every_task_of_a_random_layout_gets_a_distinct_rank);
	RUN(auto_port_the_steps_reserved_port_else_from_job_and_step);
	RUN(the_users_own_master_port_counts_unless_it_came_from_a_mad_job);
	RUN(loopback_is_never_master_addr_of_a_multi_node_job);
	RUN(addr_suffix_and_iface_choose_rank_0s_network);
	RUN(task_0_off_the_first_node_publishes_its_address_or_fails_at_once);
	RUN(ipv6_only_names_resolve_to_ipv6_without_brackets);
	RUN(nproc_per_node_option_tasks_gpus_or_one);
	RUN(tasks_per_node_lists_as_slurm_writes_them);
	RUN(gpus_from_gres_visible_lists_or_devices);
	RUN(local_device_under_each_gpu_binding);
	RUN(local_rank_past_the_visible_gpus_is_one_line_or_strict);
	RUN(an_agents_task_leaves_the_device_to_its_processes);
	RUN(gpus_per_node_unknown_is_unset_not_inherited);
	RUN(a_steps_nproc_is_its_own_not_its_batch_steps);
	RUN(a_list_of_gpu_uuids_is_a_list);
	RUN(an_interface_is_usable_only_up_running_and_not_loopback);
	RUN(ifname_keep_auto_name_user_set_and_loopback);
	RUN(rendezvous_record_carries_ipv6_and_rank_0s_tasks_per_node);
	RUN(the_opened_job_folder_is_written_and_read_whatever_its_path_names_later);
	RUN(a_busy_port_fails_rank_0_naming_port_and_node);
	return unit_done();
}
