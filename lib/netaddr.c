/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netaddr.c: see netaddr.h. */
#include "netaddr.h"
#include "error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void addr_text(const struct sockaddr *sa, char *out, size_t size)
{
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
			  out, (socklen_t)size);
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  out, (socklen_t)size);
}

int mad_resolve_addr(const char *host, char *out, size_t size, char *err,
		     size_t errsize)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct addrinfo hints, *res = NULL;
	int rc = EAI_NONAME;
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(*families); i++) {
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = families[i];
		hints.ai_socktype = SOCK_STREAM;
		rc = getaddrinfo(host, NULL, &hints, &res);
		if (rc == 0 && res) {
			addr_text(res->ai_addr, out, size);
			freeaddrinfo(res);
			return 0;
		}
		if (res)
			freeaddrinfo(res);
		res = NULL;
	}
	return mad_error(err, errsize, "cannot resolve rank 0's node '%s': %s", host, gai_strerror(rc));
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
		if (sscanf(line, "%32s %x %*s %*s %*s %*s %*s %*s %*s %63s", dest6, &plen,
			   ifname) == 3 && plen == 0 && strspn(dest6, "0") == 32 &&
		    strcmp(ifname, "lo") && strlen(ifname) < size) {
			strcpy(name, ifname);
			rc = 0;
		}
	fclose(f);
	return rc;
}

int mad_local_addr(const char *iface, const char *nccl_ifnames, char *out,
		   size_t size, char *err, size_t errsize)
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
	if (default_route_iface(name, sizeof(name)) == 0 &&
	    iface_addr(name, out, size) == 0)
		return 0;
	if (iface_addr(NULL, out, size) == 0)
		return 0;
	return mad_error(err, errsize, "this node has no address except loopback; set --mad-iface");
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
	char *end;
	long n;

	if (!spec || *spec < '0' || *spec > '9')
		return -1;
	errno = 0;
	n = strtol(spec, &end, 10);
	if (errno || n < 1 || n > 65535 || (*end && *end != '-' && *end != ','))
		return -1;
	return n;
}
