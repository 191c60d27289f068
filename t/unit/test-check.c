/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the pre-launch check (lib/job/check): ranks as threads on
 * 127.0.0.1, each with its own values and the same deadline. */
#include "job/check.h"
#include "clock.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXR 8

struct task {
	struct mad_check_values v;
	double deadline;
	int rc;
	char err[2048];
	struct strbuf table;
	pthread_t th;
};

static void *task_main(void *arg)
{
	struct task *t = arg;

	t->rc = mad_check_run(&t->v, t->deadline, &t->table, t->err, sizeof(t->err));
	return NULL;
}

/* A port nothing listens on now: the kernel's pick for port 0. */
static long free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	long port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static void job(struct task *t, int n, long world, long port, double seconds)
{
	double deadline = mad_monotonic() + seconds;
	int i;

	memset(t, 0, sizeof(*t) * (size_t)n);
	for (i = 0; i < n; i++) {
		t[i].v.rank = i;
		t[i].v.world_size = world;
		t[i].v.nnodes = world / 2 > 0 ? world / 2 : 1;
		t[i].v.master_port = port;
		strcpy(t[i].v.master_addr, "127.0.0.1");
		snprintf(t[i].v.host, sizeof(t[i].v.host), "host%d", i / 2);
		t[i].deadline = deadline;
	}
}

static void run_all(struct task *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pthread_create(&t[i].th, NULL, task_main, &t[i]);
	for (i = 0; i < n; i++)
		pthread_join(t[i].th, NULL);
}

static void free_all(struct task *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sb_free(&t[i].table);
}

static int can_bind(long port, int reuse)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, ok;

	a.sin_port = htons((unsigned short)port);
	if (reuse)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

TEST(all_ranks_agree_within_a_second_and_the_port_is_free_right_after)
{
	struct task t[MAXR];
	long port = free_port();
	double start = mad_monotonic();
	int i;

	job(t, MAXR, MAXR, port, 10);
	run_all(t, MAXR);
	for (i = 0; i < MAXR; i++) {
		CHECK(t[i].rc == 0);
		if (t[i].rc)
			printf("# rank %d: %s\n", i, t[i].err);
	}
	CHECK(mad_monotonic() - start < 1.0);
	CHECK(t[0].table.len == 0);
	/* what torch's store does (SO_REUSEADDR), and a plain bind too: no
	 * listener and no TIME_WAIT is left on the port */
	CHECK(can_bind(port, 1));
	CHECK(can_bind(port, 0));
	free_all(t, MAXR);
}

/* Whether this host can listen on ::1 (IPv6 may be off in a container). */
static int have_ipv6_loopback(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	int fd = socket(AF_INET6, SOCK_STREAM, 0), ok;

	a.sin6_addr = in6addr_loopback;
	ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

TEST(ranks_agree_over_ipv6)
{
	struct task t[3];
	int i;

	if (!have_ipv6_loopback()) {
		const char *ci = getenv("CI");

		printf("# no IPv6 loopback on this host%s\n",
		       ci && !strcmp(ci, "true") ? " (CI=true: failing)" : "");
		CHECK(!ci || strcmp(ci, "true"));
		return;
	}
	job(t, 3, 3, free_port(), 5);
	for (i = 0; i < 3; i++)
		strcpy(t[i].v.master_addr, "::1");
	run_all(t, 3);
	for (i = 0; i < 3; i++) {
		CHECK(t[i].rc == 0);
		if (t[i].rc)
			printf("# rank %d: %s\n", i, t[i].err);
	}
	free_all(t, 3);
}

TEST(a_single_rank_checks_it_can_listen_on_the_port)
{
	struct task t[1];

	job(t, 1, 1, free_port(), 5);
	run_all(t, 1);
	CHECK(t[0].rc == 0);
	free_all(t, 1);
}

TEST(a_disagreeing_rank_is_named_by_every_rank)
{
	struct task t[4];
	int i;

	job(t, 4, 4, free_port(), 5);
	/* reaches rank 0 (all of 127/8 is this host) but says another address */
	strcpy(t[2].v.master_addr, "127.0.0.2");
	t[3].v.nnodes = 7;
	run_all(t, 4);
	for (i = 0; i < 4; i++)
		CHECK(t[i].rc == -1);
	CHECK(strstr(t[0].err, "2 of 4 ranks") != NULL);
	CHECK(strstr(t[0].err, "rank 2 on host1: MASTER_ADDR 127.0.0.2, rank 0 has 127.0.0.1") != NULL);
	CHECK(strstr(t[0].err, "rank 3 on host1: NNODES 7, rank 0 has 2") != NULL);
	CHECK(strstr(t[1].err, "rank 1 on host0: the check failed at rank 0") != NULL);
	CHECK(strstr(t[1].err, "rank 2 on host1: MASTER_ADDR 127.0.0.2") != NULL);
	/* the table: a header, every rank (a small job), the count */
	CHECK(strstr(sb_cstr(&t[0].table), "RANK   HOST") == sb_cstr(&t[0].table));
	CHECK(strstr(sb_cstr(&t[0].table), "\n1      host0 ") != NULL);
	CHECK(strstr(sb_cstr(&t[0].table), " MASTER_ADDR 127.0.0.2, rank 0 has 127.0.0.1\n") != NULL);
	CHECK(strstr(sb_cstr(&t[0].table), "2 of 4 ranks failed the check\n") != NULL);
	printf("# rank 0: %s\n%s", t[0].err, sb_cstr(&t[0].table));
	free_all(t, 4);
}

TEST(a_long_verdict_reaches_every_rank_whole)
{
	struct task t[4];
	int i;

	job(t, 4, 4, free_port(), 5);
	for (i = 1; i < 4; i++) {
		/* 127.0.0.1 still (inet_aton reads the zeros), but not rank 0's words */
		snprintf(t[i].v.master_addr, sizeof(t[i].v.master_addr), "127.0.0.%060d", 1);
		memset(t[i].v.host, 'h', sizeof(t[i].v.host) - 1);
		t[i].v.host[sizeof(t[i].v.host) - 1] = '\0';
		t[i].v.world_size = 9;
		t[i].v.nnodes = 9;
	}
	run_all(t, 4);
	for (i = 0; i < 4; i++)
		CHECK(t[i].rc == -1);
	CHECK(strlen(t[1].err) > 640);
	CHECK(strstr(t[1].err, ": the check failed at rank 0 (127.0.0.") != NULL);
	CHECK(strstr(t[3].err, "3 of 4 ranks: rank 1 on hhh") != NULL);
	free_all(t, 4);
}

TEST(a_rank_that_cannot_connect_fails_and_is_named_by_rank_0)
{
	struct task t[4];
	long port = free_port();
	double start;

	job(t, 4, 4, port, 1.5);
	t[3].v.master_port = free_port(); /* nothing listens there */
	CHECK(t[3].v.master_port != port);
	start = mad_monotonic();
	run_all(t, 4);
	CHECK(mad_monotonic() - start < 1.5 + MAD_CHECK_VERDICT_GRACE + 0.5);
	CHECK(t[0].rc == -1 && t[1].rc == -1 && t[2].rc == -1 && t[3].rc == -1);
	CHECK(strstr(t[0].err, "1 of 4 ranks: rank 3 did not connect") != NULL);
	CHECK(strstr(sb_cstr(&t[0].table), "\n3      -                -") != NULL);
	CHECK(strstr(t[3].err, "rank 3 on host1 cannot reach rank 0 at 127.0.0.1 port") != NULL);
	CHECK(strstr(t[3].err, "Connection refused") != NULL);
	CHECK(strstr(t[2].err, "rank 3 did not connect") != NULL);
	free_all(t, 4);
}

TEST(rank_0_unreachable_fails_every_rank_by_the_deadline)
{
	struct task t[4];
	double start;
	int i;

	job(t, 4, 4, free_port(), 1.0);
	start = mad_monotonic();
	run_all(t + 1, 3); /* no rank 0 */
	CHECK(mad_monotonic() - start < 1.5);
	for (i = 1; i < 4; i++) {
		CHECK(t[i].rc == -1);
		CHECK(strstr(t[i].err, "cannot reach rank 0 at 127.0.0.1 port") != NULL);
	}
	free_all(t, 4);
}

TEST(two_tasks_with_one_rank_are_both_named)
{
	struct task t[4];

	job(t, 4, 4, free_port(), 3);
	t[3].v.rank = 1; /* what every task of a node got before the process level */
	run_all(t, 4);
	CHECK(t[0].rc == -1);
	CHECK(strstr(t[0].err, "RANK 1 claimed twice") != NULL);
	CHECK(strstr(t[0].err, "rank 3 did not connect") != NULL);
	free_all(t, 4);
}

TEST(a_busy_port_fails_rank_0_at_once_naming_it)
{
	struct task t[1];
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	long port = free_port();

	a.sin_port = htons((unsigned short)port);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0);
	job(t, 1, 2, port, 5);
	run_all(t, 1);
	CHECK(t[0].rc == -1);
	CHECK(strstr(t[0].err, "rank 0 on host0 cannot listen on MASTER_PORT") != NULL);
	CHECK(strstr(t[0].err, "Address already in use") != NULL);
	close(fd);
	free_all(t, 1);
}

/* A connection to rank 0's port once it listens (not a rank's): the fd. */
static int stray_connect(long port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd, i;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	for (i = 0; i < 100; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	return -1;
}

TEST(a_stray_connection_is_ignored)
{
	struct task t[3];
	int fd, i;

	job(t, 3, 3, free_port(), 5);
	pthread_create(&t[0].th, NULL, task_main, &t[0]);
	fd = stray_connect(t[0].v.master_port);
	CHECK(fd >= 0);
	CHECK(send(fd, "GET / HTTP/1.0\r\n\r\n", 18, MSG_NOSIGNAL) == 18);
	for (i = 1; i < 3; i++)
		pthread_create(&t[i].th, NULL, task_main, &t[i]);
	for (i = 0; i < 3; i++)
		pthread_join(t[i].th, NULL);
	close(fd);
	for (i = 0; i < 3; i++)
		CHECK(t[i].rc == 0);
	free_all(t, 3);
}

TEST(a_silent_stray_connection_does_not_hold_rank_0)
{
	struct task t[2];
	double start = mad_monotonic();
	int fd, i;

	job(t, 2, 2, free_port(), 5);
	pthread_create(&t[0].th, NULL, task_main, &t[0]);
	fd = stray_connect(t[0].v.master_port);
	CHECK(fd >= 0);
	pthread_create(&t[1].th, NULL, task_main, &t[1]);
	for (i = 0; i < 2; i++)
		pthread_join(t[i].th, NULL);
	CHECK(t[0].rc == 0 && t[1].rc == 0);
	CHECK(mad_monotonic() - start < 1.0);
	close(fd);
	CHECK(can_bind(t[0].v.master_port, 1));
	free_all(t, 2);
}

TEST(rank_0_out_of_descriptors_fails_in_time_without_spinning)
{
	struct task t[MAXR];
	struct rlimit old, low;
	struct rusage before, after;
	double cpu;
	int probe = dup(0), i;

	/* room for the listener and a few connections, not for all seven */
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)probe + 10;
	close(probe);
	job(t, MAXR, MAXR, free_port(), 1.5);
	getrusage(RUSAGE_SELF, &before);
	setrlimit(RLIMIT_NOFILE, &low);
	run_all(t, MAXR);
	setrlimit(RLIMIT_NOFILE, &old);
	getrusage(RUSAGE_SELF, &after);
	cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec -
		       before.ru_stime.tv_sec) +
	      (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec -
		       before.ru_stime.tv_usec) /
		      1e6;
	printf("# rank 0: %s (%.2f s of CPU)\n", t[0].err, cpu);
	CHECK(t[0].rc == -1);
	CHECK(strstr(t[0].err, "did not connect") != NULL);
	CHECK(cpu < 0.5);
	for (i = 1; i < MAXR; i++)
		CHECK(t[i].rc == -1);
	free_all(t, MAXR);
}

TEST(bad_values_are_refused_before_any_connection)
{
	struct task t[1];

	job(t, 1, 4, free_port(), 5);
	t[0].v.rank = 4;
	run_all(t, 1);
	CHECK(t[0].rc == -1);
	CHECK_STR(t[0].err, "rank 4 on host0: RANK 4 is not in 0..3 (WORLD_SIZE 4)");
	job(t, 1, 4, 0, 5);
	t[0].v.rank = 1;
	run_all(t, 1);
	CHECK_STR(t[0].err, "rank 1 on host0: MASTER_PORT 0 is not a port");
}

struct fake_env {
	const char *names[4], *values[4];
};

static int fake_getenv(void *ctx, const char *name, char *buf, size_t size)
{
	struct fake_env *e = ctx;
	int i;

	for (i = 0; i < 4 && e->names[i]; i++) {
		if (strcmp(e->names[i], name))
			continue;
		if (strlen(e->values[i]) >= size)
			return -1;
		strcpy(buf, e->values[i]);
		return 1;
	}
	return 0;
}

TEST(values_come_from_the_task_environment_else_the_contract)
{
	static struct mad_options o;
	struct mad_contract c;
	struct mad_check_values v = { 0 };
	struct fake_env env = { { "RANK", "WORLD_SIZE", "MASTER_ADDR", NULL },
				{ "5", "8", "10.1.2.3", NULL } };
	struct fake_env bad = { { "MASTER_PORT", NULL }, { "x", NULL } };
	struct fake_env none = { { NULL }, { NULL } };
	char err[256];
	int i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < MAD_OPT_COUNT; i++)
		o.value[i] = ""; /* as mad_options_resolve leaves an unset one */
	o.value[MAD_OPT_MODEL] = "m";
	c.scheduler = MAD_SCHED_SLURM;
	c.fanout = MAD_FANOUT_NODES;
	c.facts_from = "SLURM";
	c.rank = 1; /* node level */
	c.nnodes = 4;
	c.task_rank = 3; /* process level: what RANK is */
	c.world_size = 8;
	c.local_rank = 1;
	c.local_world_size = 2;
	c.master_port = 29511;
	c.process_level = 1;
	strcpy(c.master_addr, "10.0.0.1");
	CHECK(mad_check_values_from(&v, &o, &c, fake_getenv, &none, err, sizeof(err)) == 0);
	CHECK(v.rank == 3 && v.world_size == 8 && v.nnodes == 4 && v.master_port == 29511);
	CHECK_STR(v.master_addr, "10.0.0.1");
	CHECK(mad_check_values_from(&v, &o, &c, fake_getenv, &env, err, sizeof(err)) == 0);
	CHECK(v.rank == 5 && v.world_size == 8 && v.nnodes == 4 && v.master_port == 29511);
	CHECK_STR(v.master_addr, "10.1.2.3");
	CHECK(*v.host != '\0');
	CHECK(mad_check_values_from(&v, &o, &c, fake_getenv, &bad, err, sizeof(err)) == -1);
	CHECK_STR(err, "MASTER_PORT is not a number (or too long) in the task's environment");
}

int main(void)
{
	RUN(all_ranks_agree_within_a_second_and_the_port_is_free_right_after);
	RUN(ranks_agree_over_ipv6);
	RUN(a_single_rank_checks_it_can_listen_on_the_port);
	RUN(a_disagreeing_rank_is_named_by_every_rank);
	RUN(a_long_verdict_reaches_every_rank_whole);
	RUN(a_rank_that_cannot_connect_fails_and_is_named_by_rank_0);
	RUN(rank_0_unreachable_fails_every_rank_by_the_deadline);
	RUN(two_tasks_with_one_rank_are_both_named);
	RUN(a_busy_port_fails_rank_0_at_once_naming_it);
	RUN(a_stray_connection_is_ignored);
	RUN(a_silent_stray_connection_does_not_hold_rank_0);
	RUN(rank_0_out_of_descriptors_fails_in_time_without_spinning);
	RUN(bad_values_are_refused_before_any_connection);
	RUN(values_come_from_the_task_environment_else_the_contract);
	return unit_done();
}
