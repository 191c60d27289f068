/* SPDX-License-Identifier: GPL-2.0-or-later */
/* queue.c: see queue.h. */
#include "queue.h"
#include "decimal.h"
#include "error.h"
#include "site/slurm.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

/* Up to three ':'-separated numbers into PART; their count, or -1. */
static int clock_parts(const char *p, long part[3])
{
	int n = 0;

	for (;;) {
		size_t len = mad_decimal_len(p);
		uint64_t v;

		if (n == 3 || mad_decimal_span(p, len, 0, 1000000, &v))
			return -1;
		part[n++] = (long)v;
		if (p[len] == '\0')
			return n;
		if (p[len] != ':')
			return -1;
		p += len + 1;
	}
}

long mad_time_limit_parse(const char *s)
{
	long part[3] = { 0, 0, 0 };
	const char *dash = strchr(s, '-');
	uint64_t days;

	if (dash) { /* D-H, D-H:M, D-H:M:S */
		if (mad_decimal_span(s, (size_t)(dash - s), 0, 100000, &days) ||
		    clock_parts(dash + 1, part) < 0)
			return -1;
		return (long)days * 86400 + part[0] * 3600 + part[1] * 60 + part[2];
	}
	switch (clock_parts(s, part)) {
	case 1:
		return part[0] * 60; /* M */
	case 2:
		return part[0] * 60 + part[1]; /* M:S */
	case 3:
		return part[0] * 3600 + part[1] * 60 + part[2]; /* H:M:S */
	default:
		return -1;
	}
}

int mad_state_final(const char *state)
{
	static const char *const final[] = {
		"BOOT_FAIL",     "CANCELLED", "COMPLETED", "DEADLINE", "FAILED",       "NODE_FAIL",
		"OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT",   "REVOKED",  "SPECIAL_EXIT",
	};

	for (size_t i = 0; i < sizeof(final) / sizeof(final[0]); i++)
		if (strcmp(state, final[i]) == 0)
			return 1;
	return 0;
}

long mad_submit_time_parse(const char *s)
{
	struct tm tm;
	char *end;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end)
		return -1;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	return t < 0 ? -1 : (long)t;
}

/* The job id a squeue id belongs to: "12", "12_3", "12_[0-3%2]", "12+0". */
static long base_id(const char *tok)
{
	size_t len = mad_decimal_len(tok);
	uint64_t id;

	if (mad_decimal_span(tok, len, 0, LONG_MAX, &id) ||
	    (tok[len] && tok[len] != '_' && tok[len] != '+'))
		return -1;
	return (long)id;
}

/* Several clusters answering is the one way rows of a job disagree. */
#define SEVERAL_CLUSTERS                                                              \
	"several clusters answering (SLURM_CLUSTERS, -M)?  Whose files count cannot " \
	"be told: ask one cluster"

/* One listed row of a job, kept to compare rows of the same squeue id. */
struct row {
	size_t entry;
	char id[64];     /* squeue's id as printed: "12", "12_3" */
	char submit[32]; /* %V as printed */
};

static int row_order(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* The user token U of a row for E: the first names the job's user (its uid
 * when numeric), a different one is E's problem. */
static void take_user(struct mad_queue_entry *e, const char *u)
{
	char a[MAD_PRINTABLE_SIZE], b[MAD_PRINTABLE_SIZE];
	long uid;

	if (!e->user[0] && strlen(u) < sizeof(e->user)) {
		memcpy(e->user, u, strlen(u) + 1);
		if (mad_decimal(u, 0, 4294967294L, &uid) == 0)
			e->uid = uid;
	} else if (strcmp(e->user, u) != 0 && !e->problem[0]) {
		mad_printable(a, sizeof(a), e->user, strlen(e->user));
		mad_printable(b, sizeof(b), u, strlen(u));
		snprintf(e->problem, sizeof(e->problem),
			 "squeue lists it under two users, '%s' and '%s': " SEVERAL_CLUSTERS, a, b);
	}
}

/* Rows R[N] sorted: the same squeue id with two submit times. */
static void compare_rows(struct row *r, size_t n, struct mad_queue_entry *e)
{
	char id[MAD_PRINTABLE_SIZE], a[MAD_PRINTABLE_SIZE], b[MAD_PRINTABLE_SIZE];

	for (size_t i = 1; i < n; i++) {
		struct mad_queue_entry *x = &e[r[i].entry];

		if (r[i].entry != r[i - 1].entry || strcmp(r[i].id, r[i - 1].id) != 0 ||
		    strcmp(r[i].submit, r[i - 1].submit) == 0 || x->problem[0])
			continue;
		mad_printable(id, sizeof(id), r[i].id, strlen(r[i].id));
		mad_printable(a, sizeof(a), r[i - 1].submit, strlen(r[i - 1].submit));
		mad_printable(b, sizeof(b), r[i].submit, strlen(r[i].submit));
		snprintf(x->problem, sizeof(x->problem),
			 "squeue lists %s twice, submitted at %s and at %s: " SEVERAL_CLUSTERS, id,
			 a, b);
	}
}

size_t mad_queue_parse(const char *text, size_t len, struct mad_queue_entry *e, size_t n)
{
	const char *p = text, *end = text + len;
	size_t skipped = 0, nrows = 0, cap = 0;
	struct row *rows = NULL;
	int oom = 0;

	for (size_t i = 0; i < n; i++) {
		e[i].listing = MAD_LISTING_ABSENT;
		e[i].state[0] = '\0';
		e[i].time_limit = -1;
		e[i].array = 0;
		e[i].user[0] = '\0';
		e[i].uid = -1;
		e[i].submitted = -1;
		e[i].started = -1;
		e[i].problem[0] = '\0';
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		char line[512], *tok[6] = { NULL, NULL, NULL, NULL, NULL, NULL }, *save = NULL, *w;
		size_t ln = (size_t)((eol ? eol : end) - p);
		int nt = 0;
		long id;

		if (ln >= sizeof(line) || memchr(p, '\0', ln)) {
			skipped += ln > 0;
			p = eol ? eol + 1 : end;
			continue;
		}
		memcpy(line, p, ln);
		line[ln] = '\0';
		p = eol ? eol + 1 : end;
		for (w = strtok_r(line, " \t\r", &save); w && nt < 6;
		     w = strtok_r(NULL, " \t\r", &save))
			tok[nt++] = w;
		if (nt == 0)
			continue;
		id = nt >= 2 ? base_id(tok[0]) : -1;
		if (id < 0 || strlen(tok[1]) >= sizeof(e[0].state)) {
			skipped++;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			if (e[i].id != id)
				continue;
			if (strchr(tok[0], '_'))
				e[i].array = 1;
			if (e[i].listing == MAD_LISTING_ABSENT || !mad_state_final(tok[1]))
				snprintf(e[i].state, sizeof(e[i].state), "%s", tok[1]);
			/* active once any row is: some task pending, running, ... */
			if (!mad_state_final(tok[1]))
				e[i].listing = MAD_LISTING_ACTIVE;
			else if (e[i].listing == MAD_LISTING_ABSENT)
				e[i].listing = MAD_LISTING_ENDED;
			if (nt >= 3) {
				long lim = mad_time_limit_parse(tok[2]);

				if (lim > e[i].time_limit)
					e[i].time_limit = lim;
			}
			if (nt >= 4)
				take_user(&e[i], tok[3]);
			if (nt >= 5) {
				long t = mad_submit_time_parse(tok[4]);

				if (t >= 0 && (e[i].submitted < 0 || t < e[i].submitted))
					e[i].submitted = t;
			}
			if (nt >= 5 && !oom && strlen(tok[0]) < sizeof(rows[0].id) &&
			    strlen(tok[4]) < sizeof(rows[0].submit)) {
				if (nrows == cap) {
					size_t ncap = cap ? cap * 2 : 16;
					struct row *r = realloc(rows, ncap * sizeof(*r));

					if (r) {
						rows = r;
						cap = ncap;
					}
				}
				if (nrows < cap) {
					rows[nrows].entry = i;
					strcpy(rows[nrows].id, tok[0]);
					strcpy(rows[nrows].submit, tok[4]);
					nrows++;
				} else {
					oom = 1;
				}
			}
			/* a run's start; a pending job's %S is a forecast */
			if (nt >= 6 && strcmp(tok[1], "PENDING") != 0 &&
			    strncmp(tok[1], "REQUEUE", 7) != 0) {
				long t = mad_submit_time_parse(tok[5]);

				if (t > e[i].started)
					e[i].started = t;
			}
		}
	}
	if (nrows > 1) {
		qsort(rows, nrows, sizeof(*rows), row_order);
		compare_rows(rows, nrows, e);
	}
	free(rows);
	for (size_t i = 0; i < n && oom; i++)
		if (e[i].listing != MAD_LISTING_ABSENT && !e[i].problem[0])
			snprintf(e[i].problem, sizeof(e[i].problem),
				 "out of memory comparing squeue's rows");
	return skipped;
}

/* E's uid by its user's name; one this host cannot resolve is E's problem:
 * taking the caller's instead would pass over the job's own folder as
 * another user's. */
static void lookup_user(struct mad_queue_entry *e)
{
	char shown[MAD_PRINTABLE_SIZE];
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(e->user);
	if (pw) {
		e->uid = (long)pw->pw_uid;
		return;
	}
	mad_printable(shown, sizeof(shown), e->user, strlen(e->user));
	snprintf(e->problem, sizeof(e->problem),
		 "squeue names its user '%s', whom this host cannot resolve (getpwnam): %s; "
		 "whose files count cannot be checked: make the cluster's users known to this "
		 "host (NSS: LDAP, sssd), or wait on a host that knows them",
		 shown,
		 errno == 0 || errno == ENOENT || errno == ESRCH || errno == EBADF || errno == EPERM ?
			 "no such user" :
			 strerror(errno));
}

int mad_queue_ask(struct mad_queue_entry *e, size_t n, double timeout, char *err, size_t size)
{
	struct strbuf ids = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status = 0, rc = -1;
	char *argv[10];

	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_addc(&ids, ',');
		sb_addu64(&ids, (uint64_t)e[i].id, 0);
	}
	/* One id alone that SLURM has purged is an error ("Invalid job id
	 * specified"); the same id twice is an empty answer. */
	if (n == 1) {
		sb_addc(&ids, ',');
		sb_addu64(&ids, (uint64_t)e[0].id, 0);
	}
	if (!sb_cstr(&ids))
		return mad_error(err, size, "out of memory");
	argv[0] = "squeue";
	argv[1] = "--noheader";
	argv[2] = "--states=all";
	argv[3] = "--jobs";
	argv[4] = ids.buf;
	argv[5] = "--format";
	argv[6] = "%i %T %l %u %V %S";
	argv[7] = NULL;

	if (mad_slurm_run(argv, timeout, &out, &errout, &status, err, size))
		goto out;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		mad_queue_parse(out.buf, out.len, e, n);
		for (size_t i = 0; i < n; i++) {
			if (e[i].listing != MAD_LISTING_ABSENT && e[i].user[0] && e[i].uid < 0 &&
			    !e[i].problem[0])
				lookup_user(&e[i]);
			/* a submit time in the future was printed in another zone
			 * (spur prints UTC, SLURM local time): not one to trust */
			if (e[i].submitted > (long)time(NULL) + 60)
				e[i].submitted = -1;
			if (e[i].started > (long)time(NULL) + 60)
				e[i].started = -1;
		}
		rc = 0;
	} else if (WIFEXITED(status) && strstr(errout.buf, "Invalid job id specified")) {
		mad_queue_parse("", 0, e, n); /* every id purged: none listed */
		rc = 0;
	} else {
		char said[MAD_PRINTABLE_SIZE];

		mad_printable(said, sizeof(said), errout.buf, strcspn(errout.buf, "\n"));
		if (WIFEXITED(status))
			mad_error(err, size, "squeue failed (exit %d)%s%s", WEXITSTATUS(status),
				  *said ? ": " : "", said);
		else
			mad_error(err, size, "squeue killed by signal %d", WTERMSIG(status));
	}
out:
	sb_free(&ids);
	sb_free(&out);
	sb_free(&errout);
	return rc;
}
