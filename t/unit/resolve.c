/* SPDX-License-Identifier: GPL-2.0-or-later */
/* resolve [--threads N] [--linger S] NAME HOSTS TIMEOUT_MS: N threads (1)
 * resolve NAME at once with mad_resolve_addr_within (lib/netaddr.h), the
 * hosts file HOSTS and a deadline of TIMEOUT_MS; each prints one line
 *   <milliseconds it took> ok <address>   or
 *   <milliseconds it took> error <message>
 * Then it waits S seconds (0) before it exits, so that answers that come
 * after the deadline arrive and are freed while a leak checker watches.
 * Exit 0 when every thread returned, 2 on bad usage.  For resolver.bats and
 * valgrind.bats, with a resolver that never answers. */
#include "netaddr.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *name, *hosts;
static long timeout_ms;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *one(void *arg)
{
	static pthread_mutex_t print = PTHREAD_MUTEX_INITIALIZER;
	char out[MAD_ADDR_MAX], err[1024];
	double t0 = now();
	int rc = mad_resolve_addr_within(name, hosts, timeout_ms, out, sizeof(out), err, sizeof(err));
	long ms = (long)((now() - t0) * 1000);

	(void)arg;
	pthread_mutex_lock(&print);
	printf("%ld %s %s\n", ms, rc ? "error" : "ok", rc ? err : out);
	fflush(stdout);
	pthread_mutex_unlock(&print);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = 1, linger = 0;
	pthread_t t[64];
	int i = 1;

	for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (strcmp(argv[i], "--threads") == 0)
			threads = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--linger") == 0)
			linger = atol(argv[i + 1]);
		else
			break;
	}
	if (argc - i != 3 || threads < 1 || threads > 64 || linger < 0) {
		fprintf(stderr, "usage: resolve [--threads N] [--linger S] NAME HOSTS TIMEOUT_MS\n");
		return 2;
	}
	name = argv[i];
	hosts = argv[i + 1];
	timeout_ms = atol(argv[i + 2]);
	for (long k = 0; k < threads; k++)
		if (pthread_create(&t[k], NULL, one, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (long k = 0; k < threads; k++)
		pthread_join(t[k], NULL);
	sleep((unsigned)linger);
	return 0;
}
