/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for lib/hostlist (and the shell quoter on the same
 * bytes).  Beyond "no crash", it checks the module's promises: count equals
 * the names expanded, nth() agrees with expansion, and compress re-expands
 * to exactly the names it was given, in order. */
#include "hostlist.h"
#include "shquote.h"
#include "strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPAND 20000 /* keep each input fast; count() is still checked */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

static int push(const char *name, size_t len, void *arg)
{
	check(strlen(name) == len && len > 0);
	return hostvec_push(arg, name, len);
}

static void same_names(const struct hostvec *a, const struct hostvec *b)
{
	size_t i;

	check(a->n == b->n);
	for (i = 0; i < a->n; i++)
		check(strcmp(hostvec_at(a, i), hostvec_at(b, i)) == 0);
}

static void compress_round_trip(struct hostvec *v)
{
	struct hostvec back = HOSTVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct hostlist *hl;
	struct hl_error err;

	check(hostvec_compress(v, &sb) == 0);
	check(hostlist_parse(sb.buf, sb.len, &hl, &err) == 0);
	check(hostvec_add_hostlist(&back, hl) == 0);
	same_names(v, &back);
	hostlist_free(hl);
	hostvec_free(&back);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct hostvec v = HOSTVEC_INIT, sorted_first = HOSTVEC_INIT;
	struct strbuf q = STRBUF_INIT;
	struct hostlist *hl;
	struct hl_error err;
	uint64_t count;
	char *buf;
	size_t i;

	check(shell_quote(&q, text, size) == (memchr(data, 0, size) ? -1 : 0));
	sb_free(&q);

	if (hostlist_parse(text, size, &hl, &err)) {
		check(err.msg[0] != '\0');
		return 0;
	}
	count = hostlist_count(hl);
	check(count > 0);
	buf = malloc(hostlist_max_len(hl) + 1);
	check(buf != NULL);
	check(hostlist_nth(hl, count - 1, buf, hostlist_max_len(hl) + 1) > 0);
	check(hostlist_nth(hl, count, buf, hostlist_max_len(hl) + 1) == -1);
	if (count <= MAX_EXPAND) {
		check(hostlist_foreach(hl, push, &v) == 0);
		check(v.n == count);
		for (i = 0; i < v.n; i += 1 + v.n / 64) {
			long len = hostlist_nth(hl, i, buf, hostlist_max_len(hl) + 1);

			check(len > 0 && strcmp(buf, hostvec_at(&v, i)) == 0);
		}
		compress_round_trip(&v);
		check(hostvec_add_hostlist(&sorted_first, hl) == 0);
		check(hostvec_uniq(&v) == 0);
		compress_round_trip(&v);
		check(hostvec_sort(&v) == 0);
		compress_round_trip(&v);
		/* uniq after sort (one pass) equals sort after uniq */
		check(hostvec_sort(&sorted_first) == 0);
		check(hostvec_uniq(&sorted_first) == 0);
		same_names(&v, &sorted_first);
	}
	free(buf);
	hostvec_free(&v);
	hostvec_free(&sorted_first);
	hostlist_free(hl);
	return 0;
}
