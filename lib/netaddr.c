/* netaddr.c: see netaddr.h. */
#include "netaddr.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int mad_resolve_ipv4(const char *host, char *out, size_t size, char *err,
		     size_t errsize)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc || !res) {
		snprintf(err, errsize, "cannot resolve rank 0's node '%s': %s", host,
			 rc ? gai_strerror(rc) : "no address");
		return -1;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, out,
		  (socklen_t)size);
	freeaddrinfo(res);
	return 0;
}

static int is_loopback(const struct sockaddr_in *sa)
{
	return (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
}

/* IPv4 address of interface NAME (or, NAME NULL, the first usable one). */
static int iface_ipv4(const char *name, char *out, size_t size)
{
	struct ifaddrs *ifs, *i;
	int found = -1;

	if (getifaddrs(&ifs))
		return -1;
	for (i = ifs; i && found; i = i->ifa_next) {
		const struct sockaddr_in *sa = (const void *)i->ifa_addr;

		if (!sa || sa->sin_family != AF_INET || is_loopback(sa) ||
		    !(i->ifa_flags & IFF_UP))
			continue;
		if (name && strcmp(i->ifa_name, name))
			continue;
		inet_ntop(AF_INET, &sa->sin_addr, out, (socklen_t)size);
		found = 0;
	}
	freeifaddrs(ifs);
	return found;
}

/* The interface of the IPv4 default route, from /proc/net/route. */
static int default_route_iface(char *name, size_t size)
{
	char line[256], ifname[64];
	unsigned long dest, flags;
	FILE *f = fopen("/proc/net/route", "re");
	int rc = -1;

	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lx %*x %lx", ifname, &dest, &flags) == 3 &&
		    dest == 0 && (flags & 1) && strlen(ifname) < size) {
			strcpy(name, ifname);
			rc = 0;
		}
	fclose(f);
	return rc;
}

int mad_local_ipv4(const char *iface, const char *nccl_ifnames, char *out,
		   size_t size, char *err, size_t errsize)
{
	char name[64];

	if (iface && *iface) {
		if (iface_ipv4(iface, out, size) == 0)
			return 0;
		snprintf(err, errsize, "interface '%s' (--mad-iface) has no IPv4 address that is up",
			 iface);
		return -1;
	}
	if (nccl_ifnames && *nccl_ifnames && *nccl_ifnames != '^') {
		size_t n = strcspn(nccl_ifnames, ",");

		if (n < sizeof(name)) {
			memcpy(name, nccl_ifnames, n);
			name[n] = '\0';
			if (iface_ipv4(name, out, size) == 0)
				return 0;
			snprintf(err, errsize,
				 "interface '%s' (first of NCCL_SOCKET_IFNAME) has no IPv4 address that is up",
				 name);
			return -1;
		}
	}
	if (default_route_iface(name, sizeof(name)) == 0 &&
	    iface_ipv4(name, out, size) == 0)
		return 0;
	if (iface_ipv4(NULL, out, size) == 0)
		return 0;
	snprintf(err, errsize,
		 "this node has no IPv4 address except loopback; set --mad-iface");
	return -1;
}
