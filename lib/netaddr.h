/* netaddr.h: addresses for MASTER_ADDR. */
#ifndef MAD_NETADDR_H
#define MAD_NETADDR_H

#include <stddef.h>

/* The first IPv4 address HOST resolves to, as text; 0 or -1 with ERR. */
int mad_resolve_ipv4(const char *host, char *out, size_t size, char *err,
		     size_t errsize);

/* This node's transport address: IFACE's IPv4 address when given, else the
 * first interface of NCCL_IFNAMES (NCCL_SOCKET_IFNAME's value; "^..."
 * exclusion lists are skipped), else the default route's interface, else
 * the first interface that is up and not loopback.  Never 127.x.
 * 0 or -1 with ERR. */
int mad_local_ipv4(const char *iface, const char *nccl_ifnames, char *out,
		   size_t size, char *err, size_t errsize);

#endif
