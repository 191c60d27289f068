/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostlist.h: SLURM's node list grammar, without SLURM.
 *
 * An expression is a list of host patterns separated by commas or white
 * space.  A pattern is text with any number of bracket groups, each a comma
 * list of N or LO-HI; numbers are zero-padded to the width of the low bound
 * as written ("n[08-10]" is n08 n09 n10, "n[1-010]" is n1..n10).  Text may
 * follow the last group ("n[1-2]-ib", as SLURM >= 23.02.5 accepts).  Order
 * and duplicates are kept.  Several groups expand in SLURM's order: the last
 * group fastest, then the first, the second, and so on ("a[1-2]b[1-2]c[1-2]"
 * is a1b1c1 a1b1c2 a2b1c1 a2b1c2 a1b2c1 ...), which for two groups is plain
 * left-to-right order.
 *
 * Stricter than SLURM, on purpose: host names are [A-Za-z0-9._-]; a sign,
 * space, step ("1-9/2"), empty element or bound, "x" box or "{...}" function
 * inside or around brackets is an error, as is a number of more than 18
 * digits.  There is no per-range cap (SLURM's is 65536): callers cap the
 * total with hostlist_count().
 *
 * Nothing here aborts or prints: every failure is a return value, since the
 * plugin uses this code inside root daemons. */
#ifndef MAD_HOSTLIST_H
#define MAD_HOSTLIST_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct hostlist;

struct hl_error {
	char msg[256]; /* names the bad part of the input */
	size_t offset; /* byte offset of the bad part */
};

/* Parses LEN bytes of TEXT.  0 and *OUT on success; -1 with ERR filled
 * (and *OUT NULL) on a bad expression, an empty one, or no memory. */
int hostlist_parse(const char *text, size_t len, struct hostlist **out, struct hl_error *err);
void hostlist_free(struct hostlist *hl);

/* Number of host names, duplicates included (parse keeps it below 2^63). */
uint64_t hostlist_count(const struct hostlist *hl);
/* Length of the longest host name, for sizing buffers. */
size_t hostlist_max_len(const struct hostlist *hl);

/* Writes host N (0-based) into BUF with a NUL; returns its length, or -1
 * when N is out of range or SIZE too small.  Costs O(patterns + ranges),
 * never an expansion. */
long hostlist_nth(const struct hostlist *hl, uint64_t n, char *buf, size_t size);

/* Calls FN for each host name in order (NAME is NUL-terminated and valid only
 * during the call).  Stops and returns FN's value when that is non-zero;
 * returns -1 if no memory, else 0. */
typedef int (*hostlist_visit_fn)(const char *name, size_t len, void *arg);
int hostlist_foreach(const struct hostlist *hl, hostlist_visit_fn fn, void *arg);

/* ---- host name vectors: what sorting, de-duplication and compression need */

struct hostvec {
	char *arena; /* the names, each NUL-terminated */
	size_t arena_len, arena_cap;
	size_t *off; /* where each name starts in ARENA */
	size_t n, cap;
	int sorted; /* hostvec_sort() ran since the last push */
};

#define HOSTVEC_INIT                      \
	{                                 \
		NULL, 0, 0, NULL, 0, 0, 0 \
	}

int hostvec_push(struct hostvec *v, const char *name, size_t len);
/* Appends every host of HL; -1 if no memory. */
int hostvec_add_hostlist(struct hostvec *v, const struct hostlist *hl);
static inline const char *hostvec_at(const struct hostvec *v, size_t i)
{
	return v->arena + v->off[i];
}
/* SLURM's sorted order: by the name without its trailing number (bytewise),
 * then by that number, then by its padding width.  Stable.  -1 if no memory. */
int hostvec_sort(struct hostvec *v);
/* Drops every repeat of an earlier name, keeping first occurrences in place. */
int hostvec_uniq(struct hostvec *v);
/* Appends the shortest expression of V's names in V's order, merging runs
 * of consecutive trailing numbers the way "scontrol show hostlist" does
 * ("n3,n1,n2" is "n[3,1-2]").  Output re-expands to exactly V and needs
 * no SLURM >= 23.02 syntax.  -1 if no memory. */
int hostvec_compress(const struct hostvec *v, struct strbuf *out);
void hostvec_free(struct hostvec *v);

#endif
