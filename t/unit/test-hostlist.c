/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/hostlist: grammar, counting, indexing, compression. */
#include "hostlist.h"
#include "strbuf.h"
#include "unit.h"

#include <stdlib.h>

/* Expands TEXT into one space-separated string, or "ERR: <message>". */
static char result[1 << 16];

static int join_visit(const char *name, size_t len, void *arg)
{
	struct strbuf *sb = arg;

	if (sb->len)
		sb_addc(sb, ' ');
	sb_add(sb, name, len);
	return 0;
}

static const char *expand(const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	struct hostlist *hl;
	struct hl_error err;

	if (hostlist_parse(text, strlen(text), &hl, &err)) {
		snprintf(result, sizeof(result), "ERR: %s", err.msg);
		return result;
	}
	hostlist_foreach(hl, join_visit, &sb);
	snprintf(result, sizeof(result), "%s", sb_cstr(&sb));
	sb_free(&sb);
	hostlist_free(hl);
	return result;
}

static int is_error(const char *text, const char *part)
{
	const char *r = expand(text);

	if (strncmp(r, "ERR: ", 5) != 0)
		return 0;
	if (!strstr(r, part)) {
		printf("# message for '%s' lacks '%s': %s\n", text, part, r);
		return 0;
	}
	return 1;
}

/* Compresses the expansion of TEXT, after sorting/uniq as asked. */
static const char *compress(const char *text, int sort, int uniq)
{
	struct hostvec v = HOSTVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct hostlist *hl;
	struct hl_error err;

	if (hostlist_parse(text, strlen(text), &hl, &err))
		return "parse error";
	hostvec_add_hostlist(&v, hl);
	if (sort)
		hostvec_sort(&v);
	if (uniq)
		hostvec_uniq(&v);
	hostvec_compress(&v, &sb);
	snprintf(result, sizeof(result), "%s", sb_cstr(&sb));
	sb_free(&sb);
	hostvec_free(&v);
	hostlist_free(hl);
	return result;
}

TEST(plain_names_keep_order_and_duplicates)
{
	CHECK_STR(expand("node10,node9,b1"), "node10 node9 b1");
	CHECK_STR(expand("n1 n2\tn1\nn3"), "n1 n2 n1 n3");
	CHECK_STR(expand("a.example.com,b_c-d"), "a.example.com b_c-d");
	CHECK_STR(expand(",,n1,,"), "n1");
}

TEST(brackets_ranges_and_padding)
{
	CHECK_STR(expand("node[1-3,5]"), "node1 node2 node3 node5");
	CHECK_STR(expand("node[001-003]"), "node001 node002 node003");
	CHECK_STR(expand("n[08-11]"), "n08 n09 n10 n11");
	/* width is the low bound's, as SLURM does */
	CHECK_STR(expand("n[1-010]"), "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10");
	CHECK_STR(expand("n[01-1]"), "n01");
	CHECK_STR(expand("n[098-101]"), "n098 n099 n100 n101");
	CHECK_STR(expand("n[1-2],n[2-3]"), "n1 n2 n2 n3");
	CHECK_STR(expand("n[3,1-2,1]"), "n3 n1 n2 n1");
	CHECK_STR(expand("[1-2]"), "1 2");
}

TEST(several_groups_and_suffixes)
{
	CHECK_STR(expand("rack[1-2]-node[01-02]"),
		  "rack1-node01 rack1-node02 rack2-node01 rack2-node02");
	CHECK_STR(expand("node[1-3][1-2]"), "node11 node12 node21 node22 node31 node32");
	CHECK_STR(expand("node[1-3]-ib"), "node1-ib node2-ib node3-ib");
	CHECK_STR(expand("x[1-2]y[3,5]z"), "x1y3z x1y5z x2y3z x2y5z");
	CHECK_STR(expand("a[1-2],b[1-2]c"), "a1 a2 b1c b2c");
	/* SLURM's order for three groups: last fastest, then first, second */
	CHECK_STR(expand("a[1-2]b[1-2]c[1-2]"),
		  "a1b1c1 a1b1c2 a2b1c1 a2b1c2 a1b2c1 a1b2c2 a2b2c1 a2b2c2");
	CHECK_STR(expand("n[1-2][3-4][5-6]"), "n135 n136 n235 n236 n145 n146 n245 n246");
}

TEST(bad_lists_name_the_bad_part)
{
	CHECK(is_error("node[5-3]", "'5-3' goes down"));
	CHECK(is_error("node[1-3", "never closed"));
	CHECK(is_error("node1-3]", "']' without '['"));
	CHECK(is_error("node[]", "empty element"));
	CHECK(is_error("node[1,,2]", "empty element"));
	CHECK(is_error("node[1,]", "empty element"));
	CHECK(is_error("node[1-]", "empty high bound"));
	CHECK(is_error("node[-1]", "negative"));
	CHECK(is_error("node[1-10/3]", "step"));
	CHECK(is_error("node[a-b]", "character 'a'"));
	CHECK(is_error("node[[1]]", "cannot nest"));
	CHECK(is_error("node[ 1-2]", "character ' '"));
	CHECK(is_error("node[000x133]", "character 'x'"));
	CHECK(is_error("feature{gpu}", "hostlist functions"));
	CHECK(is_error("n$(id)", "character '$'"));
	CHECK(is_error("n\x01", "\\x01"));
	CHECK(is_error("n[1234567890123456789]", "more than 18 digits"));
	CHECK(is_error("", "empty"));
	CHECK(is_error(" , \n", "empty"));
	/* the message shows the pattern and the byte offset */
	CHECK(is_error("a,node[5-3],b", "'node[5-3]' (byte 7)"));
}

TEST(count_and_nth_never_expand)
{
	struct hostlist *hl;
	struct hl_error err;
	char buf[64];
	const char *text = "big[000000000000000000-999999999999999999],x";

	CHECK(hostlist_parse(text, strlen(text), &hl, &err) == 0);
	CHECK(hostlist_count(hl) == 1000000000000000001ULL);
	CHECK(hostlist_nth(hl, 0, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "big000000000000000000");
	CHECK(hostlist_nth(hl, 999999999999999999ULL, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "big999999999999999999");
	CHECK(hostlist_nth(hl, 1000000000000000000ULL, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "x");
	CHECK(hostlist_nth(hl, 1000000000000000001ULL, buf, sizeof(buf)) < 0);
	CHECK(hostlist_nth(hl, 0, buf, 5) < 0); /* too small a buffer */
	hostlist_free(hl);

	text = "a[0-999999999999999999][0-999999999999999999]";
	CHECK(hostlist_parse(text, strlen(text), &hl, &err) < 0);
	CHECK(strstr(err.msg, "too many hosts") != NULL);
}

static int collect_visit(const char *name, size_t len, void *arg)
{
	return hostvec_push(arg, name, len);
}

TEST(nth_agrees_with_foreach)
{
	static const char *lists[] = {
		"n[1-3,7,010-012]x[1-2]y,m,r[9-11][001-3]-ib,z[5]",
		"a[1-2]b[1-2]c[1-2]d",
		"w[1-3]x[1,5]y[7-9]z[0-1]",
		"single",
		"[0-9]",
	};
	size_t l, i;

	for (l = 0; l < sizeof(lists) / sizeof(*lists); l++) {
		struct hostvec v = HOSTVEC_INIT;
		struct hostlist *hl;
		struct hl_error err;
		char buf[128];

		CHECK(hostlist_parse(lists[l], strlen(lists[l]), &hl, &err) == 0);
		CHECK(hostlist_foreach(hl, collect_visit, &v) == 0);
		CHECK(v.n == hostlist_count(hl));
		for (i = 0; i < v.n; i++) {
			CHECK(hostlist_nth(hl, i, buf, sizeof(buf)) == (long)strlen(hostvec_at(&v, i)));
			CHECK_STR(buf, hostvec_at(&v, i));
		}
		hostvec_free(&v);
		hostlist_free(hl);
	}
}

TEST(compress_keeps_order_like_scontrol)
{
	CHECK_STR(compress("n1,n2,n3", 0, 0), "n[1-3]");
	CHECK_STR(compress("n3,n1,n2,n1", 0, 0), "n[3,1-2,1]");
	CHECK_STR(compress("n1", 0, 0), "n1");
	CHECK_STR(compress("a,a,b", 0, 0), "a,a,b");
	CHECK_STR(compress("a1,b1,a2", 0, 0), "a1,b1,a2");
	CHECK_STR(compress("node001,node002,node3,node010", 0, 0), "node[001-002,3,010]");
	CHECK_STR(compress("n8,n9,n10,n11", 0, 0), "n[8-11]");
	CHECK_STR(compress("n098,n099,n100", 0, 0), "n[098-100]");
	CHECK_STR(compress("n09,n010", 0, 0), "n[09,010]");
	/* only a trailing number is compressed, as SLURM 22.05 reads it */
	CHECK_STR(compress("n1-ib,n2-ib", 0, 0), "n1-ib,n2-ib");
	CHECK_STR(compress("7,8", 0, 0), "[7-8]");
	CHECK_STR(compress("n1234567890123456789,n1234567890123456790", 0, 0),
		  "n1234567890123456789,n1234567890123456790");
}

TEST(sort_and_uniq)
{
	CHECK_STR(compress("n3,n1,n2,n1", 1, 0), "n[1,1-3]");
	CHECK_STR(compress("n3,n1,n2,n1", 1, 1), "n[1-3]");
	CHECK_STR(compress("n3,n1,n2,n1", 0, 1), "n[3,1-2]");
	CHECK_STR(compress("b2,a10,a9,b,a", 1, 0), "a,a[9-10],b,b2");
	CHECK_STR(compress("n01,n1,n001", 1, 1), "n[1,01,001]");
}

static int random_list(char *buf, size_t size, unsigned *seed)
{
	size_t o = 0;
	int parts = 1 + rand_r(seed) % 4, p;

	for (p = 0; p < parts && o + 40 < size; p++) {
		int lo = rand_r(seed) % 120, n = rand_r(seed) % 30;

		o += (size_t)snprintf(buf + o, size - o, "%s%s[%0*d-%d]", p ? "," : "",
				      rand_r(seed) % 2 ? "n" : "m", rand_r(seed) % 3 + 1, lo, lo + n);
		if (rand_r(seed) % 3 == 0)
			o += (size_t)snprintf(buf + o, size - o, ",n%d", rand_r(seed) % 150);
	}
	return 0;
}

TEST(compress_round_trips)
{
	unsigned seed = 42;
	int i, mode;

	for (i = 0; i < 500; i++) {
		char text[512];

		random_list(text, sizeof(text), &seed);
		for (mode = 0; mode < 3; mode++) {
			struct hostvec a = HOSTVEC_INIT, b = HOSTVEC_INIT;
			struct strbuf sb = STRBUF_INIT;
			struct hostlist *hl, *back;
			struct hl_error err;
			size_t k;

			CHECK(hostlist_parse(text, strlen(text), &hl, &err) == 0);
			hostvec_add_hostlist(&a, hl);
			if (mode >= 1)
				hostvec_sort(&a);
			if (mode == 2)
				hostvec_uniq(&a);
			CHECK(hostvec_compress(&a, &sb) == 0);
			CHECK(hostlist_parse(sb.buf, sb.len, &back, &err) == 0);
			hostvec_add_hostlist(&b, back);
			CHECK(a.n == b.n);
			for (k = 0; k < a.n && k < b.n; k++)
				if (strcmp(hostvec_at(&a, k), hostvec_at(&b, k))) {
					printf("# %s -> %s differs at %zu\n", text, sb.buf, k);
					CHECK(0);
					break;
				}
			hostlist_free(hl);
			hostlist_free(back);
			hostvec_free(&a);
			hostvec_free(&b);
			sb_free(&sb);
		}
	}
}

int main(void)
{
	RUN(plain_names_keep_order_and_duplicates);
	RUN(brackets_ranges_and_padding);
	RUN(several_groups_and_suffixes);
	RUN(bad_lists_name_the_bad_part);
	RUN(count_and_nth_never_expand);
	RUN(nth_agrees_with_foreach);
	RUN(compress_keeps_order_like_scontrol);
	RUN(sort_and_uniq);
	RUN(compress_round_trips);
	return unit_done();
}
