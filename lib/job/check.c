/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check.c: see check.h.
 *
 * The wire, one line each way:
 *   rank R -> rank 0:  "mad-check 1 rank=R world_size=W nnodes=N master_port=P
 *                       master_addr=A host=H\n"
 *   rank 0 -> rank R:  "ok\n" or "fail SUMMARY\n"
 * then rank R closes first and rank 0 closes when it reads the end. */
#include "check.h"
#include "error.h"
#include "clock.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE_MAX_BYTES 640
/* Rank 0's answer: "fail " and a summary of at most three ranks. */
#define VERDICT_MAX 1400
/* Rank 0 keeps listening this long after the last rank arrived: a second
 * task with the same RANK, started with the first, arrives within it. */
#define LINGER 0.1
/* Connections beyond WORLD_SIZE - 1 rank 0 takes (duplicates, strays). */
#define EXTRA_CONNS 64
/* Rows in a failure table when the job is small enough to show them all. */
#define ALL_ROWS_UP_TO 64
#define WORLD_MAX (1L << 22)

/* ------------------------------------------------------------- values */

struct from_contract {
	struct mad_check_values *v;
	mad_getenv_fn getenv_fn;
	void *ctx;
	const char *bad; /* the first variable that was not a number */
};

static int take(struct from_contract *k, const char *name, const char *exported, char *buf, size_t size)
{
	int rc = k->getenv_fn(k->ctx, name, buf, size);

	if (rc == 1 && *buf)
		return 0;
	if (rc < 0 || strlen(exported) >= size) {
		k->bad = name;
		return -1;
	}
	strcpy(buf, exported);
	return 0;
}

static int collect(void *ctx, const char *name, const char *value, const char *source)
{
	static const char *const numbers[] = { "RANK", "WORLD_SIZE", "NNODES", "MASTER_PORT" };
	struct from_contract *k = ctx;
	char buf[32];
	long *dst[4];
	size_t i;

	(void)source;
	if (!value) /* not set for this process: the check finds it missing */
		return 0;
	dst[0] = &k->v->rank;
	dst[1] = &k->v->world_size;
	dst[2] = &k->v->nnodes;
	dst[3] = &k->v->master_port;
	if (!strcmp(name, "MASTER_ADDR"))
		return take(k, name, value, k->v->master_addr, sizeof(k->v->master_addr));
	for (i = 0; i < sizeof(numbers) / sizeof(*numbers); i++) {
		if (strcmp(name, numbers[i]))
			continue;
		if (take(k, name, value, buf, sizeof(buf)) ||
		    (*dst[i] = mad_parse_long(buf)) == MAD_NONE) {
			k->bad = name;
			return -1;
		}
	}
	return 0;
}

int mad_check_values_from(struct mad_check_values *v, const struct mad_options *o,
			  const struct mad_contract *c, mad_getenv_fn getenv_fn, void *ctx,
			  char *err, size_t size)
{
	struct from_contract k = { NULL, getenv_fn, ctx, NULL };

	memset(v, 0, sizeof(*v));
	k.v = v;
	v->rank = v->world_size = v->nnodes = v->master_port = MAD_NONE;
	if (gethostname(v->host, sizeof(v->host) - 1))
		strcpy(v->host, "?");
	mad_contract_export(o, c, "mad-env", collect, &k);
	if (k.bad)
		return mad_error(err, size,
				 "%s is not a number (or too long) in the task's environment", k.bad);
	if (v->rank == MAD_NONE || v->world_size == MAD_NONE || v->nnodes == MAD_NONE ||
	    v->master_port == MAD_NONE || !*v->master_addr)
		return mad_error(err, size,
				 "this task has no complete contract (RANK, WORLD_SIZE, NNODES, MASTER_ADDR, MASTER_PORT)");
	return 0;
}

static int values_ok(const struct mad_check_values *v, char *err, size_t size)
{
	if (v->world_size < 1 || v->world_size > WORLD_MAX)
		return mad_error(err, size, "WORLD_SIZE %ld is not between 1 and %ld",
				 v->world_size, WORLD_MAX);
	if (v->rank < 0 || v->rank >= v->world_size)
		return mad_error(err, size, "RANK %ld is not in 0..%ld (WORLD_SIZE %ld)", v->rank,
				 v->world_size - 1, v->world_size);
	if (v->nnodes < 1)
		return mad_error(err, size, "NNODES %ld is not a node count", v->nnodes);
	if (v->master_port < 1 || v->master_port > 65535)
		return mad_error(err, size, "MASTER_PORT %ld is not a port", v->master_port);
	if (!*v->master_addr)
		return mad_error(err, size, "MASTER_ADDR is empty");
	return 0;
}

/* A value as one word on the wire: blanks and control bytes become '?'. */
static void word(char *out, size_t size, const char *in)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < size; i++)
		out[i] = (unsigned char)in[i] <= ' ' || in[i] == 127 ? '?' : in[i];
	out[i] = '\0';
}

int mad_check_parse_line(char *line, struct mad_check_values *v)
{
	char *save = NULL, *tok, *eq;
	unsigned seen = 0;

	memset(v, 0, sizeof(*v));
	tok = strtok_r(line, " ", &save);
	if (!tok || strcmp(tok, "mad-check"))
		return -1;
	tok = strtok_r(NULL, " ", &save);
	if (!tok || strcmp(tok, "1"))
		return -1;
	while ((tok = strtok_r(NULL, " ", &save))) {
		eq = strchr(tok, '=');
		if (!eq)
			return -1;
		*eq++ = '\0';
		if (!strcmp(tok, "rank"))
			v->rank = mad_parse_long(eq), seen |= 1;
		else if (!strcmp(tok, "world_size"))
			v->world_size = mad_parse_long(eq), seen |= 2;
		else if (!strcmp(tok, "nnodes"))
			v->nnodes = mad_parse_long(eq), seen |= 4;
		else if (!strcmp(tok, "master_port"))
			v->master_port = mad_parse_long(eq), seen |= 8;
		else if (!strcmp(tok, "master_addr") && strlen(eq) < sizeof(v->master_addr))
			strcpy(v->master_addr, eq), seen |= 16;
		else if (!strcmp(tok, "host") && strlen(eq) < sizeof(v->host))
			strcpy(v->host, eq), seen |= 32;
		else
			return -1;
	}
	return seen == 63 && v->rank != MAD_NONE && v->world_size != MAD_NONE &&
			       v->nnodes != MAD_NONE && v->master_port != MAD_NONE ?
		       0 :
		       -1;
}

/* ------------------------------------------------------------ sockets */

static int ms_until(double t)
{
	double d = t - mad_monotonic();

	if (d <= 0)
		return 0;
	return d > 3600 ? 3600000 : (int)(d * 1000) + 1;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct addrinfo *resolve(const struct mad_check_values *v, char *err, size_t size)
{
	struct addrinfo hints, *ai = NULL;
	char port[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%ld", v->master_port);
	rc = getaddrinfo(v->master_addr, port, &hints, &ai);
	if (rc) {
		mad_error(err, size, "rank %ld on %s cannot resolve MASTER_ADDR '%s': %s", v->rank,
			  v->host, v->master_addr, gai_strerror(rc));
		return NULL;
	}
	return ai;
}

/* Rank 0's listener: any address of MASTER_ADDR's family (what torch's
 * store does), SO_REUSEADDR so the real program binds right after. */
static int listen_on(const struct mad_check_values *v, long backlog, char *err, size_t size)
{
	struct addrinfo *ai = resolve(v, err, size);
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, zero = 0, family;

	if (!ai)
		return -1;
	family = ai->ai_family;
	freeaddrinfo(ai);
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((unsigned short)v->master_port);
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons((unsigned short)v->master_port);
		len = sizeof(*s4);
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return mad_error(err, size, "rank 0 on %s: socket: %s", v->host, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) ||
	    listen(fd, (int)(backlog > 4096 ? 4096 : backlog + 1))) {
		int e = errno;

		close(fd);
		return mad_error(err, size, "rank 0 on %s cannot listen on MASTER_PORT %ld: %s%s",
				 v->host, v->master_port, strerror(e),
				 e == EADDRINUSE ?
					 " (another process holds it, or a second task has RANK=0)" :
					 "");
	}
	return fd;
}

/* One non-blocking connect to AI, waited for up to DEADLINE: the fd, or -1
 * with *E the reason. */
static int connect_once(const struct addrinfo *ai, double deadline, int *e)
{
	struct pollfd p;
	socklen_t elen = sizeof(*e);
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		*e = errno;
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		*e = errno;
		close(fd);
		return -1;
	}
	p.fd = fd;
	p.events = POLLOUT;
	if (poll(&p, 1, ms_until(deadline)) <= 0) {
		*e = ETIMEDOUT;
		close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, e, &elen) || *e) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Writes all of BUF to non-blocking FD before DEADLINE: 0 or -1. */
static int send_all(int fd, const char *buf, size_t len, double deadline)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (poll(&p, 1, ms_until(deadline)) <= 0)
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- peers */

static int run_peer(const struct mad_check_values *v, double deadline, char *err, size_t size)
{
	struct addrinfo *ai = resolve(v, err, size), *a;
	char line[LINE_MAX_BYTES], addr[sizeof(v->master_addr)], host[sizeof(v->host)];
	char answer[VERDICT_MAX];
	struct pollfd p;
	size_t len = 0;
	long backoff = 10;
	int fd = -1, e = ECONNREFUSED;
	ssize_t n;

	if (!ai)
		return -1;
	while (fd < 0) {
		for (a = ai; a && fd < 0; a = a->ai_next)
			fd = connect_once(a, deadline, &e);
		if (fd >= 0 || mad_monotonic() >= deadline)
			break;
		/* rank 0 not listening yet: retry, briefly apart */
		pause_ms(backoff);
		backoff = backoff * 2 > 50 ? 50 : backoff * 2;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return mad_error(err, size, "rank %ld on %s cannot reach rank 0 at %s port %ld: %s",
				 v->rank, v->host, v->master_addr, v->master_port, strerror(e));
	word(addr, sizeof(addr), v->master_addr);
	word(host, sizeof(host), v->host);
	snprintf(line, sizeof(line),
		 "mad-check 1 rank=%ld world_size=%ld nnodes=%ld master_port=%ld master_addr=%s host=%s\n",
		 v->rank, v->world_size, v->nnodes, v->master_port, addr, host);
	if (send_all(fd, line, strlen(line), deadline + MAD_CHECK_VERDICT_GRACE)) {
		close(fd);
		return mad_error(err, size,
				 "rank %ld on %s: rank 0 at %s port %ld closed the connection (is it a mad check?)",
				 v->rank, v->host, v->master_addr, v->master_port);
	}
	p.fd = fd;
	p.events = POLLIN;
	while (len + 1 < sizeof(answer) && !memchr(answer, '\n', len)) {
		if (poll(&p, 1, ms_until(deadline + MAD_CHECK_VERDICT_GRACE)) <= 0)
			break;
		n = recv(fd, answer + len, sizeof(answer) - 1 - len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	/* closing first puts TIME_WAIT here, on an ephemeral port */
	close(fd);
	answer[len] = '\0';
	if (!memchr(answer, '\n', len))
		return mad_error(err, size,
				 "rank %ld on %s: no verdict from rank 0 at %s port %ld in time",
				 v->rank, v->host, v->master_addr, v->master_port);
	*strchr(answer, '\n') = '\0';
	if (!strcmp(answer, "ok"))
		return 0;
	return mad_error(err, size, "rank %ld on %s: the check failed at rank 0 (%s port %ld): %s",
			 v->rank, v->host, v->master_addr, v->master_port,
			 strncmp(answer, "fail ", 5) ? "an answer that is not a mad check's" :
						       answer + 5);
}

/* ------------------------------------------------------------ rank 0 */

struct conn {
	int fd;
	size_t len;
	char buf[LINE_MAX_BYTES];
	char from[64]; /* the peer's address */
	int said;      /* a valid line arrived: v holds it */
	struct mad_check_values v;
	char problem[320]; /* "" when it agrees */
};

struct rank0 {
	const struct mad_check_values *me;
	struct conn *conns;
	long nconns, cap;
	long *first;    /* first conn claiming each rank, -1 */
	long arrived;   /* distinct ranks 1..W-1 that told their values */
	int out_of_fds; /* accept failed for want of descriptors */
};

static void add_problem(struct conn *c, const char *what)
{
	size_t used = strlen(c->problem);

	snprintf(c->problem + used, sizeof(c->problem) - used, "%s%s", used ? "; " : "", what);
}

static void judge(struct rank0 *z, long i)
{
	struct conn *c = &z->conns[i];
	const struct mad_check_values *me = z->me, *v = &c->v;
	char what[320];

	if (v->rank < 1 || v->rank >= me->world_size) {
		snprintf(what, sizeof(what),
			 v->rank == 0 ? "a second task with RANK=0" : "RANK %ld is not in 1..%ld",
			 v->rank, me->world_size - 1);
		add_problem(c, what);
	} else if (z->first[v->rank] >= 0) {
		struct conn *f = &z->conns[z->first[v->rank]];

		snprintf(what, sizeof(what), "RANK %ld claimed twice (also by %s, %s)", v->rank,
			 f->v.host, f->from);
		add_problem(c, what);
		snprintf(what, sizeof(what), "RANK %ld claimed twice (also by %s, %s)", v->rank,
			 v->host, c->from);
		add_problem(f, what);
	} else {
		z->first[v->rank] = i;
		z->arrived++;
	}
	if (v->world_size != me->world_size) {
		snprintf(what, sizeof(what), "WORLD_SIZE %ld, rank 0 has %ld", v->world_size,
			 me->world_size);
		add_problem(c, what);
	}
	if (v->nnodes != me->nnodes) {
		snprintf(what, sizeof(what), "NNODES %ld, rank 0 has %ld", v->nnodes, me->nnodes);
		add_problem(c, what);
	}
	if (strcmp(v->master_addr, me->master_addr)) {
		snprintf(what, sizeof(what), "MASTER_ADDR %.100s, rank 0 has %.100s",
			 v->master_addr, me->master_addr);
		add_problem(c, what);
	}
	if (v->master_port != me->master_port) {
		snprintf(what, sizeof(what), "MASTER_PORT %ld, rank 0 has %ld", v->master_port,
			 me->master_port);
		add_problem(c, what);
	}
}

static void accept_all(struct rank0 *z, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	while (z->nconns < z->cap) {
		len = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* the listener stays readable: stop polling it, or spin */
			if (errno == EMFILE || errno == ENFILE)
				z->out_of_fds = 1;
			return;
		}
		memset(&z->conns[z->nconns], 0, sizeof(struct conn));
		z->conns[z->nconns].fd = fd;
		if (getnameinfo((struct sockaddr *)&ss, len, z->conns[z->nconns].from,
				sizeof(z->conns[z->nconns].from), NULL, 0, NI_NUMERICHOST))
			strcpy(z->conns[z->nconns].from, "?");
		z->nconns++;
	}
}

/* Closes a connection that is not a rank's with a reset: no TIME_WAIT on
 * MASTER_PORT for it either. */
static void abort_conn(int fd)
{
	struct linger lg = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static void read_line(struct rank0 *z, long i)
{
	struct conn *c = &z->conns[i];
	char *nl;
	ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		c->len += (size_t)n;
		c->buf[c->len] = '\0';
		nl = memchr(c->buf, '\n', c->len);
		if (nl) {
			*nl = '\0';
			if (mad_check_parse_line(c->buf, &c->v) == 0) {
				c->said = 1;
				judge(z, i);
				return;
			}
		} else if (c->len + 1 < sizeof(c->buf)) {
			return;
		}
	}
	/* closed before a line, or not a mad check's line: a stray */
	abort_conn(c->fd);
	c->fd = -1;
}

static void row(struct strbuf *t, const char *rank, const char *host, const char *from,
		const struct mad_check_values *v, const char *status)
{
	char line[1024];

	if (v)
		snprintf(line, sizeof(line),
			 "%-6s %-16.64s %-16.64s %-10ld %-6ld %-16.100s %-11ld %s\n", rank, host,
			 from, v->world_size, v->nnodes, v->master_addr, v->master_port, status);
	else
		snprintf(line, sizeof(line), "%-6s %-16.64s %-16.64s %-10s %-6s %-16s %-11s %s\n",
			 rank, host, from, "-", "-", "-", "-", status);
	sb_adds(t, line);
}

/* The table and the one-line summary; the number of failing ranks. */
static long report(struct rank0 *z, struct strbuf *t, char *summary, size_t ssize)
{
	const struct mad_check_values *me = z->me;
	long r, i, bad = 0, shown = 0;
	int all = me->world_size <= ALL_ROWS_UP_TO;
	char rank[24], item[800];
	size_t used = 0;

	summary[0] = '\0';
	/* first pass counts and summarises, the second writes the rows */
	for (r = 1; r < me->world_size; r++) {
		if (z->first[r] < 0) {
			snprintf(item, sizeof(item), "rank %ld did not connect", r);
		} else if (*z->conns[z->first[r]].problem) {
			snprintf(item, sizeof(item), "rank %ld on %s: %s", r,
				 z->conns[z->first[r]].v.host, z->conns[z->first[r]].problem);
		} else {
			continue;
		}
		if (bad++ < 3 && used + 3 < ssize)
			used += (size_t)snprintf(summary + used, ssize - used, "%s%s",
						 used ? "; " : "", item);
	}
	for (i = 0; i < z->nconns; i++) {
		struct conn *c = &z->conns[i];

		if (c->said && *c->problem &&
		    (c->v.rank < 1 || c->v.rank >= me->world_size || z->first[c->v.rank] != i)) {
			snprintf(item, sizeof(item), "a task on %s (%s): %s", c->v.host, c->from,
				 c->problem);
			if (bad++ < 3 && used + 3 < ssize)
				used += (size_t)snprintf(summary + used, ssize - used, "%s%s",
							 used ? "; " : "", item);
		}
	}
	if (bad > 3 && used + 3 < ssize)
		snprintf(summary + used, ssize - used, "; and %ld more", bad - 3);
	if (!bad || !t)
		return bad;
	snprintf(item, sizeof(item), "%-6s %-16s %-16s %-10s %-6s %-16s %-11s %s\n", "RANK", "HOST",
		 "FROM", "WORLD_SIZE", "NNODES", "MASTER_ADDR", "MASTER_PORT", "STATUS");
	sb_adds(t, item);
	row(t, "0", me->host, "-", me, "rank 0");
	for (r = 1; r < me->world_size; r++) {
		snprintf(rank, sizeof(rank), "%ld", r);
		if (z->first[r] < 0) {
			row(t, rank, "-", "-", NULL, "did not connect by the deadline");
		} else {
			struct conn *c = &z->conns[z->first[r]];

			if (!all && !*c->problem)
				continue;
			row(t, rank, c->v.host, c->from, &c->v, *c->problem ? c->problem : "ok");
		}
		shown++;
	}
	for (i = 0; i < z->nconns; i++) {
		struct conn *c = &z->conns[i];

		if (c->said && *c->problem &&
		    (c->v.rank < 1 || c->v.rank >= me->world_size || z->first[c->v.rank] != i)) {
			snprintf(rank, sizeof(rank), "%ld", c->v.rank);
			row(t, rank, c->v.host, c->from, &c->v, c->problem);
		}
	}
	snprintf(item, sizeof(item),
		 bad <= me->world_size ? "%ld of %ld ranks failed the check\n" :
					 "%ld tasks failed the check for %ld ranks\n",
		 bad, me->world_size);
	sb_adds(t, item);
	return bad;
}

/* Tells every peer VERDICT, then waits (until UNTIL at most) for each to
 * close first: no shutdown here, so rank 0 is never the side that closes
 * first and MASTER_PORT is left with no TIME_WAIT. */
static void finish(struct rank0 *z, const char *verdict, double until)
{
	struct pollfd p;
	char sink[256];
	long i;
	ssize_t n;

	for (i = 0; i < z->nconns; i++) {
		if (z->conns[i].fd >= 0 &&
		    (!z->conns[i].said || send_all(z->conns[i].fd, verdict, strlen(verdict), until))) {
			/* silent to the end: a stray, not waited for */
			abort_conn(z->conns[i].fd);
			z->conns[i].fd = -1;
		}
	}
	for (i = 0; i < z->nconns; i++) {
		if (z->conns[i].fd < 0)
			continue;
		p.fd = z->conns[i].fd;
		p.events = POLLIN;
		while (poll(&p, 1, ms_until(until)) > 0) {
			n = recv(p.fd, sink, sizeof(sink), 0);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
		}
		close(z->conns[i].fd);
		z->conns[i].fd = -1;
	}
}

static int run_rank0(const struct mad_check_values *v, double deadline, struct strbuf *table,
		     char *err, size_t size)
{
	struct rank0 z = { v, NULL, 0, 0, NULL, 0, 0 };
	char summary[1200], verdict[VERDICT_MAX - 1], what[64];
	double linger_until = 0, now, until;
	struct pollfd *fds = NULL;
	long need = v->world_size - 1, i, n, bad;
	int lfd = listen_on(v, need, err, size), rc = -1;

	if (lfd < 0)
		return -1;
	z.cap = need + EXTRA_CONNS;
	z.conns = calloc((size_t)z.cap, sizeof(*z.conns));
	z.first = malloc((size_t)v->world_size * sizeof(*z.first));
	fds = calloc((size_t)z.cap + 1, sizeof(*fds));
	if (!z.conns || !z.first || !fds) {
		mad_error(err, size, "rank 0: out of memory for %ld ranks", v->world_size);
		goto out;
	}
	for (i = 0; i < v->world_size; i++)
		z.first[i] = -1;
	while (need > 0) {
		now = mad_monotonic();
		if (z.arrived == need && !linger_until)
			linger_until = now + LINGER;
		until = linger_until && linger_until < deadline ? linger_until : deadline;
		if (now >= until)
			break;
		fds[0].fd = z.nconns < z.cap && !z.out_of_fds ? lfd : -1;
		fds[0].events = POLLIN;
		for (i = 0; i < z.nconns; i++) {
			/* a rank that said its values is only read again to finish */
			fds[i + 1].fd = z.conns[i].said ? -1 : z.conns[i].fd;
			fds[i + 1].events = POLLIN;
			fds[i + 1].revents = 0;
		}
		n = poll(fds, (nfds_t)z.nconns + 1, ms_until(until));
		if (n <= 0)
			continue;
		for (i = 0; i < z.nconns; i++)
			if (fds[i + 1].fd >= 0 && fds[i + 1].revents)
				read_line(&z, i);
		if (fds[0].fd >= 0 && fds[0].revents)
			accept_all(&z, lfd);
	}
	/* the port is released before anyone is told to go on */
	close(lfd);
	lfd = -1;
	bad = report(&z, table, summary, sizeof(summary));
	if (bad) {
		/* duplicates and strays can outnumber the ranks */
		snprintf(what, sizeof(what),
			 bad <= v->world_size ? "%ld of %ld ranks" : "%ld tasks failing for %ld ranks",
			 bad, v->world_size);
		snprintf(verdict, sizeof(verdict), "fail %s: %s\n", what, summary);
		mad_error(err, size, "the check failed: %s: %s%s", what, summary,
			  z.out_of_fds ? " (rank 0 ran out of file descriptors: raise ulimit -n)" : "");
	} else {
		snprintf(verdict, sizeof(verdict), "ok\n");
		rc = 0;
	}
	if (table && table->failed)
		rc = mad_error(err, size, "rank 0: out of memory for the table");
	finish(&z, verdict, mad_monotonic() + MAD_CHECK_VERDICT_GRACE);
out:
	if (lfd >= 0)
		close(lfd);
	if (z.conns)
		for (i = 0; i < z.nconns; i++)
			if (z.conns[i].fd >= 0)
				close(z.conns[i].fd);
	free(z.conns);
	free(z.first);
	free(fds);
	return rc;
}

int mad_check_run(const struct mad_check_values *v, double deadline, struct strbuf *table,
		  char *err, size_t size)
{
	char why[MAD_ERR_MAX];

	if (values_ok(v, why, sizeof(why)))
		return mad_error(err, size, "rank %ld on %s: %s", v->rank, v->host, why);
	return v->rank == 0 ? run_rank0(v, deadline, table, err, size) :
			      run_peer(v, deadline, err, size);
}
