/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netaddr.c: see netaddr.h. */
#include "netaddr.h"
#include "decimal.h"
#include "error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void addr_text(const struct sockaddr *sa, char *out, size_t size)
{
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
			  (socklen_t)size);
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  out, (socklen_t)size);
}

/* ------------------------------------------------------- the hosts file */

/* Whether the N bytes of WORD are NAME (NLEN bytes) but for the case of
 * ASCII letters, whatever the locale, as the resolver compares names. */
static int same_name(const char *word, size_t n, const char *name, size_t nlen)
{
	size_t i;

	if (n != nlen)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char a = (unsigned char)word[i], b = (unsigned char)name[i];

		if (a != b && !(a >= 'A' && a <= 'Z' && a + 32 == b) &&
		    !(b >= 'A' && b <= 'Z' && b + 32 == a))
			return 0;
	}
	return 1;
}

static int hosts_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* LINE (LEN bytes, no newline) names NAME: its address family (AF_INET,
 * AF_INET6), the address as text in OUT; 0 when it does not, or its first
 * word is no address (a zone such as fe80::1%eth0 makes it none). */
static int hosts_line(const char *line, size_t len, const char *name, size_t nlen, char *out, size_t size)
{
	const char *end = memchr(line, '#', len), *p = line, *word;
	unsigned char bin[sizeof(struct in6_addr)];
	char addr[MAD_ADDR_MAX];
	int family = 0;

	if (!end)
		end = line + len;
	while (p < end) {
		size_t n;

		while (p < end && hosts_space(*p))
			p++;
		for (word = p; p < end && !hosts_space(*p); p++)
			;
		n = (size_t)(p - word);
		if (!n)
			break;
		if (!family) { /* the address */
			if (n >= sizeof(addr) || memchr(word, '\0', n))
				return 0;
			memcpy(addr, word, n);
			addr[n] = '\0';
			if (inet_pton(AF_INET, addr, bin) == 1)
				family = AF_INET;
			else if (inet_pton(AF_INET6, addr, bin) == 1)
				family = AF_INET6;
			else
				return 0;
			continue;
		}
		if (same_name(word, n, name, nlen)) {
			inet_ntop(family, bin, out, (socklen_t)size);
			return family;
		}
	}
	return 0;
}

/* What the lines so far say of one name: stops at the first IPv4 address,
 * keeps the first IPv6 one in case no IPv4 address comes. */
struct hosts_match {
	const char *name;
	size_t nlen;
	char v4[MAD_ADDR_MAX], v6[MAD_ADDR_MAX];
};

/* Takes one line; 1 when an IPv4 address ends the search. */
static int hosts_take(struct hosts_match *m, const char *line, size_t len)
{
	char addr[MAD_ADDR_MAX];
	int family = hosts_line(line, len, m->name, m->nlen, addr, sizeof(addr));

	if (family == AF_INET)
		snprintf(m->v4, sizeof(m->v4), "%s", addr);
	else if (family == AF_INET6 && !*m->v6)
		snprintf(m->v6, sizeof(m->v6), "%s", addr);
	return family == AF_INET;
}

static int hosts_result(const struct hosts_match *m, char *out, size_t size)
{
	const char *a = *m->v4 ? m->v4 : m->v6;

	if (!*a || strlen(a) >= size)
		return 0;
	memcpy(out, a, strlen(a) + 1);
	return 1;
}

int mad_hosts_find(const char *text, size_t len, const char *name, char *out, size_t size)
{
	struct hosts_match m = { name, strlen(name), "", "" };
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (hosts_take(&m, p, n) || !nl)
			break;
		p = nl + 1;
	}
	return hosts_result(&m, out, size);
}

/* NAME in the hosts file PATH, read a line at a time (a site's file may
 * list thousands of nodes); 0 when it is not there or cannot be read. */
static int hosts_file_find(const char *path, const char *name, char *out, size_t size)
{
	struct hosts_match m = { name, strlen(name), "", "" };
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return 0;
	while ((n = getline(&line, &cap, f)) > 0)
		if (hosts_take(&m, line, line[n - 1] == '\n' ? (size_t)n - 1 : (size_t)n))
			break;
	free(line);
	fclose(f);
	return hosts_result(&m, out, size);
}

/* --------------------------------------------------------- the resolver */

/* One question to the resolver (getaddrinfo_a), held by the caller, who
 * stops waiting at its deadline, and by glibc's notice that the answer
 * came, which may come any time later: whoever lets go last frees it.
 * gai_cancel is not used: a request it takes off glibc's queue never
 * gives its notice, and glibc then keeps its own record of the request
 * for ever (resolv/gai_cancel.c, getaddrinfo_a.c); a question left to
 * run ends when the resolver gives up (resolv.conf's timeout and
 * attempts), and is freed then. */
struct lookup {
	pthread_mutex_t lock;
	pthread_cond_t answered;
	int done;    /* the answer came */
	int holders; /* the caller and the notice */
	struct gaicb cb;
	struct addrinfo hints;
	char name[];
};

static void lookup_release(struct lookup *l)
{
	int last;

	pthread_mutex_lock(&l->lock);
	last = --l->holders == 0;
	pthread_mutex_unlock(&l->lock);
	if (!last)
		return;
	if (l->cb.ar_result)
		freeaddrinfo(l->cb.ar_result);
	/* No pthread_*_destroy: both are unused from here on, and glibc's
	 * destroy only reads the mutex word the other holder's unlock just
	 * wrote, which helgrind (marking the release before glibc's store)
	 * reports as a race when the two holders let go at once. */
	free(l);
}

/* glibc's notice, in a thread of its own, once the answer is in L->cb. */
static void lookup_answered(union sigval v)
{
	struct lookup *l = v.sival_ptr;

	pthread_mutex_lock(&l->lock);
	l->done = 1;
	pthread_cond_signal(&l->answered);
	pthread_mutex_unlock(&l->lock);
	lookup_release(l);
}

static struct lookup *lookup_new(const char *host)
{
	size_t n = strlen(host) + 1;
	struct lookup *l = calloc(1, sizeof(*l) + n);
	pthread_condattr_t ca;
	int bad;

	if (!l)
		return NULL;
	if (pthread_condattr_init(&ca)) {
		free(l);
		return NULL;
	}
	bad = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) || pthread_cond_init(&l->answered, &ca);
	pthread_condattr_destroy(&ca);
	if (bad) {
		free(l);
		return NULL;
	}
	if (pthread_mutex_init(&l->lock, NULL)) {
		pthread_cond_destroy(&l->answered);
		free(l);
		return NULL;
	}
	memcpy(l->name, host, n);
	l->holders = 2;
	l->hints.ai_family = AF_UNSPEC;
	l->hints.ai_socktype = SOCK_STREAM;
	l->cb.ar_name = l->name;
	l->cb.ar_request = &l->hints;
	return l;
}

/* The first IPv4 address of RES, else its first IPv6 one. */
static int pick(const struct addrinfo *res, char *out, size_t size)
{
	static const int families[] = { AF_INET, AF_INET6 };

	for (size_t i = 0; i < sizeof(families) / sizeof(*families); i++)
		for (const struct addrinfo *a = res; a; a = a->ai_next)
			if (a->ai_family == families[i] && a->ai_addr) {
				addr_text(a->ai_addr, out, size);
				return 0;
			}
	return -1;
}

static int ask_resolver(const char *host, const char *shown, const char *hosts, long timeout_ms,
			char *out, size_t size, char *err, size_t errsize)
{
	struct lookup *l = lookup_new(host);
	struct gaicb *list[1];
	struct sigevent sev;
	struct timespec at;
	int rc, done;

	if (!l)
		return mad_error(err, errsize, "cannot resolve rank 0's node '%s': out of memory",
				 shown);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = lookup_answered;
	sev.sigev_value.sival_ptr = l;
	list[0] = &l->cb;
	rc = getaddrinfo_a(GAI_NOWAIT, list, 1, &sev);
	if (rc) {
		/* glibc may still run the question, or give the notice: only
		 * the caller lets go (short of memory, L may then stay) */
		lookup_release(l);
		return mad_error(err, errsize,
				 "cannot resolve rank 0's node '%s': the resolver could not be asked: %s",
				 shown, gai_strerror(rc));
	}
	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_sec += timeout_ms / 1000;
	at.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&l->lock);
	while (!l->done && pthread_cond_timedwait(&l->answered, &l->lock, &at) == 0)
		; /* woken without the answer: wait on */
	done = l->done;
	pthread_mutex_unlock(&l->lock);
	if (!done) {
		lookup_release(l);
		return mad_error(err, errsize,
				 "cannot resolve rank 0's node '%s': not in %s, and the resolver did not answer within %g s",
				 shown, hosts, (double)timeout_ms / 1000);
	}
	rc = gai_error(&l->cb);
	if (rc == 0 && pick(l->cb.ar_result, out, size) == 0) {
		lookup_release(l);
		return 0;
	}
	lookup_release(l);
	return mad_error(err, errsize, "cannot resolve rank 0's node '%s': %s", shown,
			 rc ? gai_strerror(rc) : "no IPv4 or IPv6 address");
}

int mad_resolve_addr_within(const char *host, const char *hosts, long timeout_ms, char *out,
			    size_t size, char *err, size_t errsize)
{
	unsigned char bin[sizeof(struct in6_addr)];
	char shown[MAD_PRINTABLE_SIZE];

	if (inet_pton(AF_INET, host, bin) == 1) {
		inet_ntop(AF_INET, bin, out, (socklen_t)size);
		return 0;
	}
	if (inet_pton(AF_INET6, host, bin) == 1) {
		inet_ntop(AF_INET6, bin, out, (socklen_t)size);
		return 0;
	}
	if (hosts_file_find(hosts, host, out, size))
		return 0;
	mad_printable(shown, sizeof(shown), host, strlen(host));
	return ask_resolver(host, shown, hosts, timeout_ms, out, size, err, errsize);
}

int mad_resolve_addr(const char *host, char *out, size_t size, char *err, size_t errsize)
{
	return mad_resolve_addr_within(host, MAD_HOSTS_FILE, MAD_RESOLVE_TIMEOUT * 1000L, out, size,
				       err, errsize);
}

int mad_addr_is_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return 0;
}

int mad_addr_valid(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	return inet_pton(AF_INET, addr, &a4) == 1 || inet_pton(AF_INET6, addr, &a6) == 1;
}

/* An address a peer on another node can use: not loopback, and for IPv6
 * not link-local (it would need a scope id). */
static int usable(const struct sockaddr *sa)
{
	char text[MAD_ADDR_MAX];

	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_UNSPECIFIED(a))
			return 0;
	} else if (sa->sa_family != AF_INET) {
		return 0;
	}
	addr_text(sa, text, sizeof(text));
	return !mad_addr_is_loopback(text);
}

/* The address of interface NAME (or, NAME NULL, of the first usable one):
 * IPv4 first, IPv6 if the interface has no IPv4 address. */
static int iface_addr(const char *name, char *out, size_t size)
{
	struct ifaddrs *ifs, *i;
	int family, found = -1;

	if (getifaddrs(&ifs))
		return -1;
	for (family = AF_INET; found && family; family = family == AF_INET ? AF_INET6 : 0)
		for (i = ifs; i && found; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != family ||
			    !usable(i->ifa_addr) || !(i->ifa_flags & IFF_UP))
				continue;
			if (name && strcmp(i->ifa_name, name))
				continue;
			addr_text(i->ifa_addr, out, size);
			found = 0;
		}
	freeifaddrs(ifs);
	return found;
}

/* The interface of the IPv4 default route (/proc/net/route), else of the
 * IPv6 one (/proc/net/ipv6_route: destination ::/0, not loopback). */
static int default_route_iface(char *name, size_t size)
{
	char line[512], ifname[64], dest6[40];
	unsigned long dest, flags;
	unsigned int plen;
	FILE *f = fopen("/proc/net/route", "re");
	int rc = -1;

	if (f) {
		while (rc && fgets(line, sizeof(line), f))
			if (sscanf(line, "%63s %lx %*x %lx", ifname, &dest, &flags) == 3 &&
			    dest == 0 && (flags & 1) && strlen(ifname) < size) {
				strcpy(name, ifname);
				rc = 0;
			}
		fclose(f);
	}
	if (rc == 0)
		return 0;
	f = fopen("/proc/net/ipv6_route", "re");
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f))
		if (sscanf(line, "%32s %x %*s %*s %*s %*s %*s %*s %*s %63s", dest6, &plen, ifname) == 3 &&
		    plen == 0 && strspn(dest6, "0") == 32 && strcmp(ifname, "lo") &&
		    strlen(ifname) < size) {
			strcpy(name, ifname);
			rc = 0;
		}
	fclose(f);
	return rc;
}

int mad_local_addr(const char *iface, const char *nccl_ifnames, char *out, size_t size, char *err,
		   size_t errsize)
{
	char name[64];

	if (iface && *iface) {
		if (iface_addr(iface, out, size) == 0)
			return 0;
		return mad_error(err, errsize,
				 "interface '%s' (--mad-iface) has no address that is up and not loopback",
				 iface);
	}
	if (nccl_ifnames && *nccl_ifnames && *nccl_ifnames != '^') {
		size_t n = strcspn(nccl_ifnames, ",");

		if (n < sizeof(name)) {
			memcpy(name, nccl_ifnames, n);
			name[n] = '\0';
			if (iface_addr(name, out, size) == 0)
				return 0;
			return mad_error(err, errsize,
					 "interface '%s' (first of NCCL_SOCKET_IFNAME) has no address that is up and not loopback",
					 name);
		}
	}
	if (default_route_iface(name, sizeof(name)) == 0 && iface_addr(name, out, size) == 0)
		return 0;
	if (iface_addr(NULL, out, size) == 0)
		return 0;
	return mad_error(err, errsize, "this node has no address except loopback; set --mad-iface");
}

/* Whether SA holds the address ADDR (binary, of FAMILY). */
static int same_addr(const struct sockaddr *sa, int family, const void *addr)
{
	if (!sa || sa->sa_family != family)
		return 0;
	if (family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, addr,
			       sizeof(struct in_addr));
	return !memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, addr,
		       sizeof(struct in6_addr));
}

static enum mad_iface_state flags_state(unsigned int flags)
{
	if (flags & IFF_LOOPBACK)
		return MAD_IFACE_LOOPBACK;
	/* administratively down, or up without a carrier (ip's "state DOWN") */
	if (!(flags & IFF_UP) || !(flags & IFF_RUNNING))
		return MAD_IFACE_DOWN;
	return MAD_IFACE_USABLE;
}

enum mad_iface_state mad_iface_state_in(const struct ifaddrs *ifs, const char *name)
{
	const struct ifaddrs *i;

	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_name && !strcmp(i->ifa_name, name))
			return flags_state(i->ifa_flags);
	return MAD_IFACE_ABSENT;
}

enum mad_iface_state mad_iface_of_addr_in(const struct ifaddrs *ifs, const char *addr, char *name,
					  size_t size)
{
	unsigned char bin[sizeof(struct in6_addr)];
	const struct ifaddrs *i;
	int family = AF_INET;

	if (size)
		name[0] = '\0';
	if (inet_pton(AF_INET, addr, bin) != 1) {
		family = AF_INET6;
		if (inet_pton(AF_INET6, addr, bin) != 1)
			return MAD_IFACE_ABSENT;
	}
	if (mad_addr_is_loopback(addr))
		return MAD_IFACE_LOOPBACK;
	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_name && same_addr(i->ifa_addr, family, bin)) {
			if (strlen(i->ifa_name) >= size)
				return MAD_IFACE_ABSENT;
			memcpy(name, i->ifa_name, strlen(i->ifa_name) + 1);
			return flags_state(i->ifa_flags);
		}
	return MAD_IFACE_ABSENT;
}

enum mad_iface_state mad_iface_state(const char *name)
{
	struct ifaddrs *ifs;
	enum mad_iface_state st;

	if (getifaddrs(&ifs))
		return MAD_IFACE_ABSENT;
	st = mad_iface_state_in(ifs, name);
	freeifaddrs(ifs);
	return st;
}

enum mad_iface_state mad_route_iface(const char *addr, char *name, size_t size)
{
	struct sockaddr_storage to, from;
	socklen_t len = sizeof(from);
	struct ifaddrs *ifs;
	char src[MAD_ADDR_MAX];
	enum mad_iface_state st;
	int fd;

	memset(&to, 0, sizeof(to));
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)(void *)&to)->sin_addr) == 1) {
		to.ss_family = AF_INET;
		((struct sockaddr_in *)(void *)&to)->sin_port = htons(9);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)(void *)&to)->sin6_addr) == 1) {
		to.ss_family = AF_INET6;
		((struct sockaddr_in6 *)(void *)&to)->sin6_port = htons(9);
		len = sizeof(struct sockaddr_in6);
	} else {
		return MAD_IFACE_ABSENT;
	}
	/* connect() on a datagram socket only asks the routing table for the
	 * route and its source address: nothing is sent */
	fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return MAD_IFACE_ABSENT;
	if (connect(fd, (struct sockaddr *)&to, len)) {
		close(fd);
		return MAD_IFACE_ABSENT; /* no route */
	}
	len = sizeof(from);
	if (getsockname(fd, (struct sockaddr *)&from, &len)) {
		close(fd);
		return MAD_IFACE_ABSENT;
	}
	close(fd);
	addr_text((struct sockaddr *)&from, src, sizeof(src));
	if (getifaddrs(&ifs))
		return MAD_IFACE_ABSENT;
	st = mad_iface_of_addr_in(ifs, src, name, size);
	freeifaddrs(ifs);
	return st;
}

int mad_port_check(long port, const char *host, char *err, size_t errsize)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	int fd, one = 1, rc;

	/* A dual-stack wildcard socket finds an IPv4 or IPv6 holder alike;
	 * a node without IPv6 gets an IPv4 one. */
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_port = htons((unsigned short)port);
	a6.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		rc = bind(fd, (struct sockaddr *)&a6, sizeof(a6));
	} else {
		memset(&a4, 0, sizeof(a4));
		a4.sin_family = AF_INET;
		a4.sin_port = htons((unsigned short)port);
		a4.sin_addr.s_addr = htonl(INADDR_ANY);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return 0; /* no socket at all: the program will say why */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		rc = bind(fd, (struct sockaddr *)&a4, sizeof(a4));
	}
	if (rc == 0 || errno != EADDRINUSE) {
		close(fd);
		return 0;
	}
	close(fd);
	return mad_error(err, errsize,
			 "MASTER_PORT %ld is already in use on rank 0's node %s (another job or program holds it): choose another with --mad-master-port, or leave it auto",
			 port, host);
}

long mad_resv_ports_first(const char *spec)
{
	size_t len;
	uint64_t n;

	if (!spec)
		return -1;
	len = mad_decimal_len(spec);
	if (mad_decimal_span(spec, len, 1, 65535, &n) ||
	    (spec[len] && spec[len] != '-' && spec[len] != ','))
		return -1;
	return (long)n;
}
