/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostlist.c: see hostlist.h.
 *
 * A parsed expression is a list of patterns; a pattern is N+1 text pieces
 * around N bracket groups; a group is a list of numeric ranges.  Counting,
 * indexing and expansion all work on that form, so "n[1-1000000]" costs a
 * few dozen bytes until a caller asks for the names themselves. */
#include "hostlist.h"
#include "error.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIGITS 18 /* 10^18 - 1 fits in 63 bits, sums too */
#define MAX_COUNT (UINT64_MAX / 2)

struct hl_range {
	uint64_t lo, hi;
	unsigned width; /* digits of the low bound as written */
};

struct hl_text {
	size_t off, len; /* into hostlist.text */
};

struct hl_group {
	size_t first_range, nranges;
	uint64_t count;
	size_t max_len; /* widest number this group prints */
};

struct hl_pattern {
	size_t first_text, first_group, ngroups;
	uint64_t count;
	size_t max_len;
};

struct hostlist {
	char *text;
	struct hl_range *ranges;
	struct hl_group *groups;
	struct hl_text *texts;
	struct hl_pattern *patterns;
	size_t nranges, ngroups, ntexts, npatterns;
	size_t cap_ranges, cap_groups, cap_texts, cap_patterns;
	size_t max_groups; /* most groups in one pattern */
	uint64_t count;
	size_t max_len;
};

/* Makes room for one more element; returns the (maybe moved) array or NULL. */
static void *grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap > SIZE_MAX / elem)
		return NULL;
	p = realloc(arr, ncap * elem);
	if (p)
		*cap = ncap;
	return p;
}

static int is_separator(unsigned char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' ||
	       c == '_' || c == '-';
}

static unsigned count_digits(uint64_t n)
{
	unsigned d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

struct parser {
	const char *s;
	size_t len;
	size_t pos;   /* next byte */
	size_t token; /* start of the current pattern */
	struct hl_error *err;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail_at(struct parser *ps, size_t at, const char *fmt, ...)
{
	char what[120], token[96];
	size_t end = ps->token;
	va_list ap;

	while (end < ps->len && !is_separator((unsigned char)ps->s[end]))
		end++;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mad_printable(token, sizeof(token), ps->s + ps->token, end - ps->token);
	ps->err->offset = at;
	return mad_error(ps->err->msg, sizeof(ps->err->msg), "'%s' (byte %zu): %s", token, at, what);
}

static int fail_char(struct parser *ps, const char *where)
{
	char c[16];

	mad_printable(c, sizeof(c), ps->s + ps->pos, 1);
	return fail_at(ps, ps->pos, "character '%s' is not allowed %s", c, where);
}

/* Reads a bound at ps->pos into *NUM and its digit count into *WIDTH. */
static int parse_number(struct parser *ps, uint64_t *num, unsigned *width, const char *which)
{
	size_t start = ps->pos;
	uint64_t n = 0;

	while (ps->pos < ps->len && is_digit((unsigned char)ps->s[ps->pos])) {
		if (ps->pos - start == MAX_DIGITS)
			return fail_at(ps, start, "number has more than %d digits", MAX_DIGITS);
		n = n * 10 + (uint64_t)(ps->s[ps->pos] - '0');
		ps->pos++;
	}
	if (ps->pos == start) {
		if (ps->pos >= ps->len)
			return fail_at(ps, ps->pos, "'[' is never closed");
		if (ps->s[ps->pos] == ']' || ps->s[ps->pos] == ',')
			return fail_at(ps, ps->pos, "empty %s in brackets", which);
		if (ps->s[ps->pos] == '-')
			return fail_at(ps, ps->pos,
				       "'-' without a %s (negative numbers are not allowed)", which);
		if (ps->s[ps->pos] == '[')
			return fail_at(ps, ps->pos, "brackets cannot nest");
		return fail_char(ps, "inside brackets (only digits, '-' and ',')");
	}
	*num = n;
	*width = (unsigned)(ps->pos - start);
	return 0;
}

/* Parses "[...]" at ps->pos (which is '[') into a new group. */
static int parse_group(struct parser *ps, struct hostlist *hl)
{
	struct hl_group grp = { hl->nranges, 0, 0, 0 };
	void *p;

	ps->pos++;
	for (;;) {
		struct hl_range r;
		unsigned hi_width;
		size_t start = ps->pos;

		if (parse_number(ps, &r.lo, &r.width, "element"))
			return -1;
		r.hi = r.lo;
		if (ps->pos < ps->len && ps->s[ps->pos] == '-') {
			ps->pos++;
			if (parse_number(ps, &r.hi, &hi_width, "high bound"))
				return -1;
		}
		if (r.lo > r.hi)
			return fail_at(ps, start, "range '%.*s' goes down (low bound above high bound)",
				       (int)(ps->pos - start), ps->s + start);
		grp.count += r.hi - r.lo + 1;
		if (grp.count > MAX_COUNT)
			return fail_at(ps, start, "too many hosts");
		if (count_digits(r.hi) > grp.max_len)
			grp.max_len = count_digits(r.hi);
		if (r.width > grp.max_len)
			grp.max_len = r.width;
		p = grow(hl->ranges, &hl->cap_ranges, hl->nranges, sizeof(*hl->ranges));
		if (!p)
			return fail_at(ps, start, "out of memory");
		hl->ranges = p;
		hl->ranges[hl->nranges++] = r;
		grp.nranges++;

		if (ps->pos >= ps->len)
			return fail_at(ps, ps->pos, "'[' is never closed");
		if (ps->s[ps->pos] == ']')
			break;
		if (ps->s[ps->pos] == '/')
			return fail_at(ps, ps->pos, "step ranges ('/') are not supported");
		if (ps->s[ps->pos] != ',')
			return fail_char(ps, "inside brackets (only digits, '-' and ',')");
		ps->pos++;
	}
	ps->pos++;
	p = grow(hl->groups, &hl->cap_groups, hl->ngroups, sizeof(*hl->groups));
	if (!p)
		return fail_at(ps, ps->pos, "out of memory");
	hl->groups = p;
	hl->groups[hl->ngroups++] = grp;
	return 0;
}

static int push_text(struct parser *ps, struct hostlist *hl, size_t start)
{
	void *p = grow(hl->texts, &hl->cap_texts, hl->ntexts, sizeof(*hl->texts));

	if (!p)
		return fail_at(ps, start, "out of memory");
	hl->texts = p;
	hl->texts[hl->ntexts].off = start;
	hl->texts[hl->ntexts].len = ps->pos - start;
	hl->ntexts++;
	return 0;
}

/* Parses one pattern starting at ps->pos (not a separator). */
static int parse_pattern(struct parser *ps, struct hostlist *hl)
{
	struct hl_pattern pat = { hl->ntexts, hl->ngroups, 0, 1, 0 };
	size_t text_start = ps->pos, g;
	void *p;

	ps->token = ps->pos;
	for (;;) {
		unsigned char c = ps->pos < ps->len ? (unsigned char)ps->s[ps->pos] : ',';

		if (is_separator(c))
			break;
		if (c == '[') {
			if (push_text(ps, hl, text_start) || parse_group(ps, hl))
				return -1;
			text_start = ps->pos;
		} else if (c == ']') {
			return fail_at(ps, ps->pos, "']' without '['");
		} else if (c == '{' || c == '}') {
			return fail_at(ps, ps->pos,
				       "hostlist functions ('{...}') need slurmctld and are not supported");
		} else if (!is_host_char(c)) {
			return fail_char(ps, "in a host name");
		} else {
			ps->pos++;
		}
	}
	if (push_text(ps, hl, text_start))
		return -1;
	pat.ngroups = hl->ngroups - pat.first_group;
	for (g = 0; g <= pat.ngroups; g++)
		pat.max_len += hl->texts[pat.first_text + g].len;
	for (g = 0; g < pat.ngroups; g++) {
		const struct hl_group *grp = &hl->groups[pat.first_group + g];

		if (pat.count > MAX_COUNT / grp->count)
			return fail_at(ps, ps->token, "too many hosts");
		pat.count *= grp->count;
		pat.max_len += grp->max_len;
	}
	if (hl->count > MAX_COUNT - pat.count)
		return fail_at(ps, ps->token, "too many hosts");
	hl->count += pat.count;
	if (pat.max_len > hl->max_len)
		hl->max_len = pat.max_len;
	if (pat.ngroups > hl->max_groups)
		hl->max_groups = pat.ngroups;
	p = grow(hl->patterns, &hl->cap_patterns, hl->npatterns, sizeof(*hl->patterns));
	if (!p)
		return fail_at(ps, ps->token, "out of memory");
	hl->patterns = p;
	hl->patterns[hl->npatterns++] = pat;
	return 0;
}

int hostlist_parse(const char *text, size_t len, struct hostlist **out, struct hl_error *err)
{
	struct parser ps = { text, len, 0, 0, err };
	struct hostlist *hl;

	*out = NULL;
	err->msg[0] = '\0';
	err->offset = 0;
	hl = calloc(1, sizeof(*hl));
	if (hl)
		hl->text = malloc(len + 1);
	if (!hl || !hl->text) {
		free(hl);
		return mad_error(err->msg, sizeof(err->msg), "out of memory");
	}
	memcpy(hl->text, text, len);
	hl->text[len] = '\0';
	ps.s = hl->text;

	while (ps.pos < len) {
		if (is_separator((unsigned char)ps.s[ps.pos])) {
			ps.pos++;
			continue;
		}
		if (parse_pattern(&ps, hl)) {
			hostlist_free(hl);
			return -1;
		}
	}
	if (hl->npatterns == 0) {
		hostlist_free(hl);
		return mad_error(err->msg, sizeof(err->msg), "the host list is empty");
	}
	*out = hl;
	return 0;
}

void hostlist_free(struct hostlist *hl)
{
	if (!hl)
		return;
	free(hl->text);
	free(hl->ranges);
	free(hl->groups);
	free(hl->texts);
	free(hl->patterns);
	free(hl);
}

uint64_t hostlist_count(const struct hostlist *hl)
{
	return hl->count;
}

size_t hostlist_max_len(const struct hostlist *hl)
{
	return hl->max_len;
}

static size_t put_text(const struct hostlist *hl, size_t t, char *at)
{
	memcpy(at, hl->text + hl->texts[t].off, hl->texts[t].len);
	return hl->texts[t].len;
}

long hostlist_nth(const struct hostlist *hl, uint64_t n, char *buf, size_t size)
{
	size_t i, g, len;

	for (i = 0; i < hl->npatterns && n >= hl->patterns[i].count; i++)
		n -= hl->patterns[i].count;
	if (i == hl->npatterns || size <= hl->patterns[i].max_len)
		return -1;

	const struct hl_pattern *p = &hl->patterns[i];
	const struct hl_group *last = p->ngroups ? &hl->groups[p->first_group + p->ngroups - 1] : NULL;
	uint64_t q = last ? n / last->count : 0;

	/* Digits in SLURM's order (see advance()): the last group is the
	 * least significant, then the first, second, ... */
	len = put_text(hl, p->first_text, buf);
	for (g = 0; g < p->ngroups; g++) {
		const struct hl_group *grp = &hl->groups[p->first_group + g];
		const struct hl_range *r = &hl->ranges[grp->first_range];
		uint64_t k;

		if (grp == last) {
			k = n % grp->count;
		} else {
			k = q % grp->count;
			q /= grp->count;
		}
		while (k > r->hi - r->lo) {
			k -= r->hi - r->lo + 1;
			r++;
		}
		len += fmt_u64(buf + len, r->lo + k, r->width);
		len += put_text(hl, p->first_text + g + 1, buf + len);
	}
	buf[len] = '\0';
	return (long)len;
}

struct cursor {
	size_t *range; /* per group: index of its current range */
	uint64_t *num; /* per group: current number */
	size_t *pos;   /* per group: where its number starts in buf */
};

/* Rewrites the name from group G0 on; returns the new length. */
static size_t render_from(const struct hostlist *hl, const struct hl_pattern *p, size_t g0,
			  struct cursor *cur, char *buf)
{
	size_t at = cur->pos[g0], g;

	for (g = g0; g < p->ngroups; g++) {
		const struct hl_group *grp = &hl->groups[p->first_group + g];
		const struct hl_range *r = &hl->ranges[grp->first_range + cur->range[g]];

		cur->pos[g] = at;
		at += fmt_u64(buf + at, cur->num[g], r->width);
		at += put_text(hl, p->first_text + g + 1, buf + at);
	}
	buf[at] = '\0';
	return at;
}

/* Steps group G to its next number; 0, or -1 when it wrapped around. */
static int step_group(const struct hostlist *hl, const struct hl_pattern *p, size_t g,
		      struct cursor *cur)
{
	const struct hl_group *grp = &hl->groups[p->first_group + g];
	const struct hl_range *r = &hl->ranges[grp->first_range + cur->range[g]];

	if (cur->num[g] < r->hi) {
		cur->num[g]++;
		return 0;
	}
	if (cur->range[g] + 1 < grp->nranges) {
		cur->range[g]++;
		cur->num[g] = r[1].lo;
		return 0;
	}
	cur->range[g] = 0;
	cur->num[g] = hl->ranges[grp->first_range].lo;
	return -1;
}

/* Moves to the next name; returns the lowest group that changed, or -1
 * after the last name.  SLURM expands "a[..]b[..]c[..]" by recursing on the
 * last bracket of the prefix, so the final group varies fastest, then the
 * first, the second, and so on: a1b1c1 a1b1c2 a2b1c1 a2b1c2 a1b2c1 ... */
static long advance(const struct hostlist *hl, const struct hl_pattern *p, struct cursor *cur)
{
	size_t last, g;

	if (p->ngroups == 0)
		return -1;
	last = p->ngroups - 1;
	if (step_group(hl, p, last, cur) == 0)
		return (long)last;
	for (g = 0; g < last; g++)
		if (step_group(hl, p, g, cur) == 0)
			return 0;
	return -1;
}

int hostlist_foreach(const struct hostlist *hl, hostlist_visit_fn fn, void *arg)
{
	size_t n = hl->max_groups ? hl->max_groups : 1, i, g;
	struct cursor cur;
	char *buf;
	int rc = 0;

	cur.range = calloc(n, sizeof(*cur.range));
	cur.num = calloc(n, sizeof(*cur.num));
	cur.pos = calloc(n, sizeof(*cur.pos));
	buf = malloc(hl->max_len + 1);
	if (!cur.range || !cur.num || !cur.pos || !buf) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < hl->npatterns && rc == 0; i++) {
		const struct hl_pattern *p = &hl->patterns[i];
		size_t len = put_text(hl, p->first_text, buf);
		long changed;

		for (g = 0; g < p->ngroups; g++) {
			cur.range[g] = 0;
			cur.num[g] = hl->ranges[hl->groups[p->first_group + g].first_range].lo;
		}
		cur.pos[0] = len;
		buf[len] = '\0';
		if (p->ngroups)
			len = render_from(hl, p, 0, &cur, buf);
		do {
			rc = fn(buf, len, arg);
			if (rc)
				break;
			changed = advance(hl, p, &cur);
			if (changed >= 0)
				len = render_from(hl, p, (size_t)changed, &cur, buf);
		} while (changed >= 0);
	}
out:
	free(cur.range);
	free(cur.num);
	free(cur.pos);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------ hostvec */

int hostvec_push(struct hostvec *v, const char *name, size_t len)
{
	void *p;

	p = grow(v->off, &v->cap, v->n, sizeof(*v->off));
	if (!p)
		return -1;
	v->off = p;
	if (len >= SIZE_MAX - v->arena_len - 1)
		return -1;
	if (v->arena_len + len + 1 > v->arena_cap) {
		size_t cap = v->arena_cap ? v->arena_cap : 256;

		while (cap < v->arena_len + len + 1)
			cap = cap > SIZE_MAX / 2 ? v->arena_len + len + 1 : cap * 2;
		p = realloc(v->arena, cap);
		if (!p)
			return -1;
		v->arena = p;
		v->arena_cap = cap;
	}
	memcpy(v->arena + v->arena_len, name, len);
	v->sorted = 0;
	v->arena[v->arena_len + len] = '\0';
	v->off[v->n++] = v->arena_len;
	v->arena_len += len + 1;
	return 0;
}

static int push_visit(const char *name, size_t len, void *arg)
{
	return hostvec_push(arg, name, len) ? -1 : 0;
}

int hostvec_add_hostlist(struct hostvec *v, const struct hostlist *hl)
{
	return hostlist_foreach(hl, push_visit, v) ? -1 : 0;
}

void hostvec_free(struct hostvec *v)
{
	free(v->arena);
	free(v->off);
	memset(v, 0, sizeof(*v));
}

/* A name split as SLURM splits it: text, then a trailing number. */
struct hostkey {
	const char *name;
	size_t len, plen; /* whole name, text before the number */
	uint64_t num;
	unsigned width; /* digits of the number; 0 = no number */
	size_t idx;     /* position in the vector, for stability */
};

static void host_key(const struct hostvec *v, size_t i, struct hostkey *k)
{
	size_t d = 0;

	k->name = hostvec_at(v, i);
	k->len = strlen(k->name);
	k->idx = i;
	while (d < k->len && is_digit((unsigned char)k->name[k->len - 1 - d]))
		d++;
	k->num = 0;
	k->width = 0;
	k->plen = k->len;
	if (d == 0 || d > MAX_DIGITS)
		return; /* too long a number stays text, never overflows */
	k->plen = k->len - d;
	k->width = (unsigned)d;
	for (d = k->plen; d < k->len; d++)
		k->num = k->num * 10 + (uint64_t)(k->name[d] - '0');
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_sorted(const void *pa, const void *pb)
{
	const struct hostkey *a = pa, *b = pb;
	size_t n = a->plen < b->plen ? a->plen : b->plen;
	int c = memcmp(a->name, b->name, n);

	if (c)
		return c;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	if (a->width == 0 || b->width == 0)
		c = (a->width != 0) - (b->width != 0);
	if (!c)
		c = cmp_u64(a->num, b->num);
	if (!c)
		c = cmp_u64(a->width, b->width);
	return c ? c : cmp_u64(a->idx, b->idx);
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct hostkey *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : cmp_u64(a->idx, b->idx);
}

static struct hostkey *make_keys(const struct hostvec *v)
{
	struct hostkey *keys;
	size_t i;

	if (v->n == 0)
		return NULL;
	keys = malloc(v->n * sizeof(*keys));
	if (keys)
		for (i = 0; i < v->n; i++)
			host_key(v, i, &keys[i]);
	return keys;
}

int hostvec_sort(struct hostvec *v)
{
	struct hostkey *keys = make_keys(v);
	size_t i;

	if (v->n == 0)
		return 0;
	if (!keys)
		return -1;
	qsort(keys, v->n, sizeof(*keys), cmp_sorted);
	for (i = 0; i < v->n; i++)
		v->off[i] = (size_t)(keys[i].name - v->arena);
	free(keys);
	v->sorted = 1;
	return 0;
}

int hostvec_uniq(struct hostvec *v)
{
	struct hostkey *keys;
	unsigned char *repeat;
	size_t i, n = 0;

	if (v->n == 0)
		return 0;
	if (v->sorted) {
		/* Sorted order puts equal names next to each other. */
		for (i = 0; i < v->n; i++)
			if (n == 0 || strcmp(hostvec_at(v, i), v->arena + v->off[n - 1]))
				v->off[n++] = v->off[i];
		v->n = n;
		return 0;
	}
	keys = make_keys(v);
	repeat = calloc(v->n, 1);
	if (!keys || !repeat) {
		free(keys);
		free(repeat);
		return -1;
	}
	/* Equal names sort together, first occurrence first. */
	qsort(keys, v->n, sizeof(*keys), cmp_name);
	for (i = 1; i < v->n; i++)
		if (strcmp(keys[i].name, keys[i - 1].name) == 0)
			repeat[keys[i].idx] = 1;
	for (i = 0; i < v->n; i++)
		if (!repeat[i])
			v->off[n++] = v->off[i];
	v->n = n;
	free(keys);
	free(repeat);
	return 0;
}

/* NUM printed at width A reads the same as at width B. */
static int same_text(uint64_t num, unsigned a, unsigned b)
{
	unsigned d = count_digits(num);

	return (a > d ? a : d) == (b > d ? b : d);
}

struct run {
	uint64_t lo, hi;
	unsigned width;
};

static void put_group(struct strbuf *out, int first, const struct hostkey *k,
		      const struct run *runs, size_t nruns)
{
	size_t i;

	if (!first)
		sb_addc(out, ',');
	sb_add(out, k->name, k->plen);
	if (k->width == 0)
		return;
	if (nruns == 1 && runs[0].lo == runs[0].hi) {
		sb_addu64(out, runs[0].lo, runs[0].width);
		return;
	}
	sb_addc(out, '[');
	for (i = 0; i < nruns; i++) {
		if (i)
			sb_addc(out, ',');
		sb_addu64(out, runs[i].lo, runs[i].width);
		if (runs[i].hi != runs[i].lo) {
			sb_addc(out, '-');
			sb_addu64(out, runs[i].hi, runs[i].width);
		}
	}
	sb_addc(out, ']');
}

int hostvec_compress(const struct hostvec *v, struct strbuf *out)
{
	struct run *runs = NULL;
	size_t nruns = 0, cap = 0, i;
	struct hostkey group = { NULL, 0, 0, 0, 0, 0 }, k;
	int first = 1;
	void *p;

	for (i = 0; i < v->n; i++) {
		host_key(v, i, &k);
		if (nruns && k.width && group.width && k.plen == group.plen &&
		    memcmp(k.name, group.name, k.plen) == 0) {
			struct run *last = &runs[nruns - 1];

			if (k.num == last->hi + 1 && same_text(k.num, k.width, last->width)) {
				last->hi = k.num;
				continue;
			}
		} else if (nruns) {
			put_group(out, first, &group, runs, nruns);
			first = 0;
			nruns = 0;
		}
		p = grow(runs, &cap, nruns, sizeof(*runs));
		if (!p) {
			free(runs);
			return -1;
		}
		runs = p;
		runs[nruns].lo = runs[nruns].hi = k.num;
		runs[nruns].width = k.width;
		if (nruns++ == 0)
			group = k;
	}
	if (nruns)
		put_group(out, first, &group, runs, nruns);
	free(runs);
	sb_cstr(out);
	return out->failed ? -1 : 0;
}
