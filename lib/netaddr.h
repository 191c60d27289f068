/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netaddr.h: addresses and ports for MASTER_ADDR and MASTER_PORT.
 * Addresses are text as torch and NCCL take them: IPv4 dotted, IPv6
 * without brackets.  IPv4 is preferred; IPv6 is used where a host or node
 * has no IPv4 address.  Nothing here prints. */
#ifndef MAD_NETADDR_H
#define MAD_NETADDR_H

#include <stddef.h>

#define MAD_ADDR_MAX 64 /* INET6_ADDRSTRLEN and a margin */

/* The hosts file mad_resolve_addr reads itself, before the resolver. */
#define MAD_HOSTS_FILE "/etc/hosts"

/* How long the resolver may take for a name the hosts file lacks, in
 * seconds.  mad.so resolves rank 0's node in task_init: on spur inside
 * spurd's async worker threads, so a resolver that never answers (DNS
 * down) must fail the task, not hold the node daemon; on SLURM it holds a
 * task's start.  10 s lets a live resolver answer on its second try
 * (resolv.conf's default timeout is 5 s) and is short beside a job's
 * start; a site whose names must not depend on DNS lists them in the hosts
 * file, which is always read first. */
#define MAD_RESOLVE_TIMEOUT 10

/* HOST's address as text: HOST itself when it is an address; else its
 * first IPv4 address in MAD_HOSTS_FILE, else its first IPv6 one there
 * (read here, whatever nsswitch.conf says); else the resolver's answer
 * (getaddrinfo_a: nsswitch, DNS), IPv4 first, within MAD_RESOLVE_TIMEOUT.
 * 0, or -1 with ERR naming HOST (and, when the resolver did not answer,
 * the deadline).  Thread-safe; a late answer is freed when it comes. */
int mad_resolve_addr(const char *host, char *out, size_t size, char *err, size_t errsize);

/* mad_resolve_addr with the hosts file HOSTS and a deadline of TIMEOUT_MS
 * milliseconds, for tests (mad_resolve_addr passes MAD_HOSTS_FILE and
 * MAD_RESOLVE_TIMEOUT). */
int mad_resolve_addr_within(const char *host, const char *hosts, long timeout_ms, char *out,
			    size_t size, char *err, size_t errsize);

/* NAME's address in TEXT, LEN bytes of a hosts file ("ADDRESS NAME
 * [ALIAS...]" lines, '#' comments, names matched without case, lines
 * whose address is none skipped): the first IPv4 address, else the first
 * IPv6 one, as text into OUT.  1 found, 0 not there. */
int mad_hosts_find(const char *text, size_t len, const char *name, char *out, size_t size);

/* Whether ADDR (text) is a loopback address: 127.0.0.0/8 or ::1. */
int mad_addr_is_loopback(const char *addr);

/* Whether ADDR is an address in text form (IPv4 or IPv6). */
int mad_addr_valid(const char *addr);

/* This node's transport address: IFACE's address when given, else the
 * first interface of NCCL_IFNAMES (NCCL_SOCKET_IFNAME's value; "^..."
 * exclusion lists are skipped), else the default route's interface, else
 * the first interface that is up and not loopback; on each, IPv4 before
 * IPv6 (global scope only).  Never loopback.  0 or -1 with ERR. */
int mad_local_addr(const char *iface, const char *nccl_ifnames, char *out, size_t size, char *err,
		   size_t errsize);

/* An interface of this node as MAD_IFNAME may name it (design.md §5):
 * usable (up, running, not loopback), or why not. */
enum mad_iface_state { MAD_IFACE_USABLE, MAD_IFACE_LOOPBACK, MAD_IFACE_DOWN, MAD_IFACE_ABSENT };

struct ifaddrs;

/* The state of interface NAME in IFS (getifaddrs' list). */
enum mad_iface_state mad_iface_state_in(const struct ifaddrs *ifs, const char *name);
/* The interface of IFS holding address ADDR (text), its name into NAME. */
enum mad_iface_state mad_iface_of_addr_in(const struct ifaddrs *ifs, const char *addr, char *name,
					  size_t size);
/* The same on this node's interfaces. */
enum mad_iface_state mad_iface_state(const char *name);
/* The interface this node reaches ADDR through: the one holding the
 * source address the kernel's route to ADDR chooses (a UDP socket
 * connected to ADDR, from which no packet is sent), its name into NAME.
 * Rank 0's own address gives the interface that holds it. */
enum mad_iface_state mad_route_iface(const char *addr, char *name, size_t size);

/* Whether a listener could bind PORT on this node now (wildcard address,
 * SO_REUSEADDR as torch's store sets it, so only a live listener or a
 * bound socket counts).  0 free, -1 with ERR naming PORT and HOST. */
int mad_port_check(long port, const char *host, char *err, size_t errsize);

/* The first port of SLURM_STEP_RESV_PORTS ("12000-12003", "12000,12005"),
 * or -1 when SPEC holds none. */
long mad_resv_ports_first(const char *spec);

#endif
