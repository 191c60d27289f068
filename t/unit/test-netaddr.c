/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for name lookups (lib/netaddr, design.md §5): the hosts file,
 * read by mad-spank itself before any resolver, and addresses as given.
 * Every name here is found without asking DNS: a deadline of 0 ms would
 * fail any lookup that reached the resolver.  A resolver that never
 * answers is t/bats/resolver.bats. */
#include "netaddr.h"
#include "unit.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static char hosts[] = "/tmp/mad-test-netaddr.XXXXXX";

static const char text[] = "# a site's hosts file\n"
			   "127.0.0.1\tlocalhost\n"
			   "127.0.1.1 login1.example.org login1\n"
			   "2001:db8::11 n11 # IPv6 first: the IPv4 line below still wins\n"
			   "192.0.2.11   n11.example.org   n11\n"
			   "2001:DB8::12 n12\n"
			   "2001:db8::99 n12\n"
			   "fe80::1%eth0 n13\n"
			   "192.0.2.300 n14\n"
			   "n15 192.0.2.15\n"
			   "192.0.2.16 N16-IB\r\n"
			   "192.0.2.17 # n17 in a comment\n"
			   "192.0.2.18 n18";

TEST(hosts_text_ipv4_first_then_ipv6)
{
	char out[MAD_ADDR_MAX];
	size_t len = sizeof(text) - 1;

	CHECK(mad_hosts_find(text, len, "n11", out, sizeof(out)) == 1);
	CHECK_STR(out, "192.0.2.11");
	CHECK(mad_hosts_find(text, len, "n11.example.org", out, sizeof(out)) == 1);
	CHECK_STR(out, "192.0.2.11");
	/* IPv6 only: the first line, as text torch takes (lower case) */
	CHECK(mad_hosts_find(text, len, "n12", out, sizeof(out)) == 1);
	CHECK_STR(out, "2001:db8::12");
	/* loopback is returned as the file says: the contract's rules judge it */
	CHECK(mad_hosts_find(text, len, "login1", out, sizeof(out)) == 1);
	CHECK_STR(out, "127.0.1.1");
	/* names without case, a CR before the newline, the last line unended */
	CHECK(mad_hosts_find(text, len, "n16-ib", out, sizeof(out)) == 1);
	CHECK_STR(out, "192.0.2.16");
	CHECK(mad_hosts_find(text, len, "n18", out, sizeof(out)) == 1);
	CHECK_STR(out, "192.0.2.18");
}

TEST(hosts_text_what_is_not_there)
{
	char out[MAD_ADDR_MAX] = "unchanged";
	size_t len = sizeof(text) - 1;

	CHECK(mad_hosts_find(text, len, "n1", out, sizeof(out)) == 0);   /* a prefix of n11 */
	CHECK(mad_hosts_find(text, len, "n111", out, sizeof(out)) == 0); /* longer */
	CHECK(mad_hosts_find(text, len, "n13", out, sizeof(out)) == 0);  /* a zone: no address */
	CHECK(mad_hosts_find(text, len, "n14", out, sizeof(out)) == 0);  /* not an address */
	CHECK(mad_hosts_find(text, len, "n15", out, sizeof(out)) == 0);  /* name first */
	CHECK(mad_hosts_find(text, len, "192.0.2.15", out, sizeof(out)) == 0);
	CHECK(mad_hosts_find(text, len, "n17", out, sizeof(out)) == 0); /* a comment */
	CHECK(mad_hosts_find(text, len, "", out, sizeof(out)) == 0);
	CHECK(mad_hosts_find("", 0, "n11", out, sizeof(out)) == 0);
	CHECK(mad_hosts_find("192.0.2.1 a\0b\n", 14, "a", out, sizeof(out)) == 0);
	CHECK(mad_hosts_find("192.0.2.1\0 a\n", 13, "a", out, sizeof(out)) == 0);
	CHECK_STR(out, "unchanged");
	/* an address that does not fit OUT is not given */
	CHECK(mad_hosts_find(text, len, "n12", out, 8) == 0);
}

/* NAME with the test's hosts file and a deadline of 0 ms: any name that
 * reached the resolver would fail. */
#define RESOLVE(name) mad_resolve_addr_within(name, hosts, 0, out, sizeof(out), err, sizeof(err))

TEST(resolve_reads_the_hosts_file_without_the_resolver)
{
	char out[MAD_ADDR_MAX], err[512] = "";

	CHECK(RESOLVE("n11") == 0);
	CHECK_STR(out, "192.0.2.11");
	CHECK(RESOLVE("N12") == 0);
	CHECK_STR(out, "2001:db8::12");
	CHECK_STR(err, "");
	/* an address is itself, as text torch takes */
	CHECK(RESOLVE("198.51.100.4") == 0);
	CHECK_STR(out, "198.51.100.4");
	CHECK(RESOLVE("2001:DB8:0::7") == 0);
	CHECK_STR(out, "2001:db8::7");
}

/* Many threads at once, as spurd's workers call it. */
static void *resolve_many(void *arg)
{
	char out[MAD_ADDR_MAX], err[512];
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 200; i++)
		bad += mad_resolve_addr_within(i % 2 ? "n11" : "n12", hosts, 0, out, sizeof(out),
					       err, sizeof(err)) != 0 ||
		       strcmp(out, i % 2 ? "192.0.2.11" : "2001:db8::12") != 0;
	return (void *)bad;
}

TEST(resolve_from_many_threads_at_once)
{
	pthread_t t[8];
	long bad = 0;

	for (int i = 0; i < 8; i++)
		CHECK(pthread_create(&t[i], NULL, resolve_many, NULL) == 0);
	for (int i = 0; i < 8; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	CHECK(bad == 0);
}

int main(void)
{
	int fd = mkstemp(hosts);

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	RUN(hosts_text_ipv4_first_then_ipv6);
	RUN(hosts_text_what_is_not_there);
	RUN(resolve_reads_the_hosts_file_without_the_resolver);
	RUN(resolve_from_many_threads_at_once);
	unlink(hosts);
	return unit_done();
}
