/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netaddr.h: addresses and ports for MASTER_ADDR and MASTER_PORT.
 * Addresses are text as torch and NCCL take them: IPv4 dotted, IPv6
 * without brackets.  IPv4 is preferred; IPv6 is used where a host or node
 * has no IPv4 address.  Nothing here prints. */
#ifndef MAD_NETADDR_H
#define MAD_NETADDR_H

#include <stddef.h>

#define MAD_ADDR_MAX 64         /* INET6_ADDRSTRLEN and a margin */

/* The first IPv4 address HOST resolves to, else its first IPv6 one, as
 * text; 0 or -1 with ERR naming HOST. */
int mad_resolve_addr(const char *host, char *out, size_t size, char *err,
		     size_t errsize);

/* Whether ADDR (text) is a loopback address: 127.0.0.0/8 or ::1. */
int mad_addr_is_loopback(const char *addr);

/* Whether ADDR is an address in text form (IPv4 or IPv6). */
int mad_addr_valid(const char *addr);

/* This node's transport address: IFACE's address when given, else the
 * first interface of NCCL_IFNAMES (NCCL_SOCKET_IFNAME's value; "^..."
 * exclusion lists are skipped), else the default route's interface, else
 * the first interface that is up and not loopback; on each, IPv4 before
 * IPv6 (global scope only).  Never loopback.  0 or -1 with ERR. */
int mad_local_addr(const char *iface, const char *nccl_ifnames, char *out,
		   size_t size, char *err, size_t errsize);

/* Whether a listener could bind PORT on this node now (wildcard address,
 * SO_REUSEADDR as torch's store sets it, so only a live listener or a
 * bound socket counts).  0 free, -1 with ERR naming PORT and HOST. */
int mad_port_check(long port, const char *host, char *err, size_t errsize);

/* The first port of SLURM_STEP_RESV_PORTS ("12000-12003", "12000,12005"),
 * or -1 when SPEC holds none. */
long mad_resv_ports_first(const char *spec);

#endif
