/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template-filter.c: the template's filters, one function each, in one
 * table the parser resolves names against. */
#include "template-private.h"
#include "shquote.h"
#include "strbuf.h"

#include <ctype.h>
#include <string.h>

static size_t utf8_length(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* The bytes of the white space (as Python's str.strip() sees it) at the
 * start (END 0) or end (END 1) of S, or 0. */
static size_t py_space(const char *s, size_t len, int end)
{
	static const char *const wide[] = {
		"\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81",
		"\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86",
		"\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8",
		"\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80", NULL,
	};
	unsigned char ch = (unsigned char)(end ? s[len - 1] : s[0]);

	if (tpl_is_space((char)ch) || (ch >= 0x1c && ch <= 0x1f))
		return 1;
	for (size_t k = 0; wide[k]; k++) {
		size_t n = strlen(wide[k]);

		if (n <= len && memcmp(end ? s + len - n : s, wide[k], n) == 0)
			return n;
	}
	return 0;
}

static int ascii_only(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] >= 0x80)
			return 0;
	return 1;
}

/* Fails unless the filter X's input V is of type T. */
static void filter_wants(struct ctx *c, const struct expr *x, const struct value *v, enum vtype t)
{
	if (v->t != t)
		tpl_fail(c, x->pos, "'| %.*s' needs a %s, not a %s", (int)x->nlen, x->name,
			 vtype_name(t), vtype_name(v->t));
}

/* A filter's function: IN[0] is its input, IN[1..] its arguments (as many
 * as its row in the table allows, each defined). */
typedef struct value filter_fn(struct ctx *c, const struct expr *x, const struct value *in);

static struct value f_default(struct ctx *c, const struct expr *x, const struct value *in)
{
	(void)c;
	if (in[0].t == V_UNDEF || (x->nargs == 2 && v_truthy(&in[2]) && !v_truthy(&in[0])))
		return in[1];
	return in[0];
}

static struct value f_int(struct ctx *c, const struct expr *x, const struct value *in)
{
	unsigned long long u = 0;
	const char *s;
	size_t k = 0, len;
	int neg = 0;

	if (in->t == V_INT)
		return *in;
	if (in->t != V_STR)
		tpl_fail(c, x->pos, "'| int' needs a string of digits, not a %s", vtype_name(in->t));
	s = in->u.str.s;
	len = in->u.str.len;
	if (k < len && (s[k] == '-' || s[k] == '+'))
		neg = s[k++] == '-';
	if (k == len)
		tpl_fail(c, x->pos, "'| int': '%.*s' is not an integer", (int)len, s);
	for (; k < len; k++) {
		if (!isdigit((unsigned char)s[k]))
			tpl_fail(c, x->pos, "'| int': '%.*s' is not an integer",
				 (int)(len > 64 ? 64 : len), s);
		if (u > (~0ULL - 9) / 10)
			u = ~0ULL; /* saturates: too large below */
		else
			u = u * 10 + (unsigned long long)(s[k] - '0');
	}
	if (u > (unsigned long long)__LONG_LONG_MAX__ + (unsigned long long)neg)
		tpl_fail(c, x->pos, "'| int': '%.*s' is too large", (int)(len > 64 ? 64 : len), s);
	return v_int(neg ? (long long)(0 - u) : (long long)u);
}

static struct value f_string(struct ctx *c, const struct expr *x, const struct value *in)
{
	size_t len;
	const char *s = tpl_str_of(c, in, &len, x->pos);

	return v_str_ref(s, len);
}

/* lower and upper */
static struct value f_case(struct ctx *c, const struct expr *x, const struct value *in)
{
	const char *s;
	size_t len;
	char *p;

	filter_wants(c, x, in, V_STR);
	s = in->u.str.s;
	len = in->u.str.len;
	if (!ascii_only(s, len))
		tpl_fail(c, x->pos, "'| %.*s' of text that is not ASCII is not supported",
			 (int)x->nlen, x->name);
	p = tpl_alloc(c, len + 1);
	for (size_t k = 0; k < len; k++)
		p[k] = (char)(x->filter == F_LOWER ? tolower((unsigned char)s[k]) :
						     toupper((unsigned char)s[k]));
	return v_str_ref(p, len);
}

static struct value f_trim(struct ctx *c, const struct expr *x, const struct value *in)
{
	const char *s;
	size_t len, w;

	filter_wants(c, x, in, V_STR);
	s = in->u.str.s;
	len = in->u.str.len;
	while (len && (w = py_space(s, len, 0)))
		s += w, len -= w;
	while (len && (w = py_space(s, len, 1)))
		len -= w;
	return v_str_ref(s, len);
}

/* length and count */
static struct value f_length(struct ctx *c, const struct expr *x, const struct value *in)
{
	if (in->t == V_STR)
		return v_int((long long)utf8_length(in->u.str.s, in->u.str.len));
	if (in->t == V_LIST)
		return v_int((long long)in->u.list->n);
	if (in->t == V_DICT)
		return v_int((long long)in->u.dict->n);
	tpl_fail(c, x->pos, "'| length' of a %s", vtype_name(in->t));
}

/* SB's bytes as a string of the arena; frees SB. */
static struct value sb_value(struct ctx *c, const struct expr *x, struct strbuf *sb)
{
	struct value v;

	if (!sb_cstr(sb))
		tpl_fail(c, x->pos, "out of memory");
	v = v_str(c->arena, sb->buf, sb->len);
	sb_free(sb);
	return v;
}

static struct value f_join(struct ctx *c, const struct expr *x, const struct value *in)
{
	struct strbuf sb = STRBUF_INIT;
	const char *sep = "", *s;
	size_t seplen = 0, len;

	filter_wants(c, x, in, V_LIST);
	if (x->nargs)
		sep = tpl_str_of(c, &in[1], &seplen, x->args[0]->pos);
	for (size_t k = 0; k < in->u.list->n; k++) {
		s = tpl_str_of(c, &in->u.list->item[k], &len, x->pos);
		if (k)
			sb_add(&sb, sep, seplen);
		sb_add(&sb, s, len);
	}
	return sb_value(c, x, &sb);
}

static struct value f_replace(struct ctx *c, const struct expr *x, const struct value *in)
{
	struct strbuf sb = STRBUF_INIT;
	const char *old, *new, *s;
	size_t ol, nl, len;

	filter_wants(c, x, in, V_STR);
	s = in->u.str.s;
	len = in->u.str.len;
	old = tpl_str_of(c, &in[1], &ol, x->args[0]->pos);
	new = tpl_str_of(c, &in[2], &nl, x->args[1]->pos);
	if (!ol)
		tpl_fail(c, x->args[0]->pos, "'| replace' of an empty string is not supported");
	for (size_t k = 0; k < len;) {
		if (k + ol <= len && memcmp(s + k, old, ol) == 0) {
			sb_add(&sb, new, nl);
			k += ol;
		} else {
			sb_addc(&sb, s[k++]);
		}
	}
	return sb_value(c, x, &sb);
}

/* first and last */
static struct value f_end(struct ctx *c, const struct expr *x, const struct value *in)
{
	filter_wants(c, x, in, V_LIST);
	if (!in->u.list->n)
		tpl_fail(c, x->pos, "'| %.*s' of an empty list", (int)x->nlen, x->name);
	return in->u.list->item[x->filter == F_FIRST ? 0 : in->u.list->n - 1];
}

/* basename and dirname, as Python's posixpath has them */
static struct value f_path(struct ctx *c, const struct expr *x, const struct value *in)
{
	const char *s;
	size_t len, cut, all = 1;

	filter_wants(c, x, in, V_STR);
	s = in->u.str.s;
	len = in->u.str.len;
	for (cut = len; cut > 0 && s[cut - 1] != '/'; cut--)
		;
	if (x->filter == F_BASENAME)
		return v_str_ref(s + cut, len - cut);
	/* dirname: the head, its trailing slashes gone unless all slashes */
	for (size_t k = 0; k < cut; k++)
		all &= s[k] == '/';
	if (cut && !all)
		while (cut > 0 && s[cut - 1] == '/')
			cut--;
	return v_str_ref(s, cut);
}

static struct value f_raw(struct ctx *c, const struct expr *x, const struct value *in)
{
	const char *s;
	size_t len;
	struct value v;

	if (in->t != V_STR && in->t != V_INT)
		tpl_fail(c, x->pos, "'| raw' takes a string or an integer, not a %s",
			 vtype_name(in->t));
	s = tpl_str_of(c, in, &len, x->pos);
	v = v_str_ref(s, len);
	v.raw = 1;
	return v;
}

static struct value f_sbatch(struct ctx *c, const struct expr *x, const struct value *in)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len;
	const char *s = tpl_str_of(c, in, &len, x->pos);
	struct value v;

	if (sbatch_quote(&sb, s, len))
		tpl_fail(c, x->pos,
			 "'| sbatch': a newline, carriage return or NUL cannot be in an #SBATCH line");
	v = sb_value(c, x, &sb);
	v.raw = 1;
	return v;
}

static struct value f_envname(struct ctx *c, const struct expr *x, const struct value *in)
{
	size_t len;
	const char *s = tpl_str_of(c, in, &len, x->pos);
	struct value v;

	if (!shell_name_ok(s, len))
		tpl_fail(c, x->pos,
			 "'| envname': '%.*s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
			 (int)(len > 64 ? 64 : len), s);
	v = v_str_ref(s, len);
	v.raw = 1;
	return v;
}

/* The filters, by the enum the parser resolved their names to.  An alias
 * (d) has a row of its own, so messages name the filter as written. */
static const struct filter {
	const char *name;
	int min_args, max_args; /* at most FILTER_ARGS_MAX */
	int takes_undefined;    /* the input may be undefined (default) */
	int sbatch_safe;        /* its output may stand on an #SBATCH line */
	filter_fn *fn;
} filters[F_UNKNOWN] = {
	[F_DEFAULT] = { "default", 1, 2, 1, 0, f_default },
	[F_D] = { "d", 1, 2, 1, 0, f_default },
	[F_INT] = { "int", 0, 0, 0, 1, f_int },
	[F_STRING] = { "string", 0, 0, 0, 0, f_string },
	[F_LOWER] = { "lower", 0, 0, 0, 0, f_case },
	[F_UPPER] = { "upper", 0, 0, 0, 0, f_case },
	[F_TRIM] = { "trim", 0, 0, 0, 0, f_trim },
	[F_LENGTH] = { "length", 0, 0, 0, 0, f_length },
	[F_COUNT] = { "count", 0, 0, 0, 0, f_length },
	[F_JOIN] = { "join", 0, 1, 0, 0, f_join },
	[F_REPLACE] = { "replace", 2, 2, 0, 0, f_replace },
	[F_FIRST] = { "first", 0, 0, 0, 0, f_end },
	[F_LAST] = { "last", 0, 0, 0, 0, f_end },
	[F_BASENAME] = { "basename", 0, 0, 0, 0, f_path },
	[F_DIRNAME] = { "dirname", 0, 0, 0, 0, f_path },
	[F_RAW] = { "raw", 0, 0, 0, 1, f_raw },
	[F_SBATCH] = { "sbatch", 0, 0, 0, 1, f_sbatch },
	[F_ENVNAME] = { "envname", 0, 0, 0, 0, f_envname },
};

enum filter_id tpl_filter_named(const char *name, size_t len)
{
	enum filter_id f;

	for (f = 0; f < F_UNKNOWN; f++)
		if (len && filters[f].name[0] == name[0] && strlen(filters[f].name) == len &&
		    memcmp(filters[f].name, name, len) == 0)
			break;
	return f;
}

/* An unknown filter is an error only when it runs, as in Jinja2 3: one in
 * a branch not taken renders. */
struct value tpl_apply_filter(struct ctx *c, const struct expr *x)
{
	struct value in[1 + FILTER_ARGS_MAX];
	const struct filter *f = x->filter < F_UNKNOWN ? &filters[x->filter] : NULL;

	in[0] = tpl_eval(c, x->a);
	if (!f || !f->takes_undefined)
		tpl_defined(c, &in[0], x->a->pos);
	if (!f)
		tpl_fail(c, x->pos, "unknown filter '%.*s'", (int)x->nlen, x->name);
	if ((int)x->nargs < f->min_args || (int)x->nargs > f->max_args)
		tpl_fail(c, x->pos, "the filter '%.*s' takes %d to %d arguments", (int)x->nlen,
			 x->name, f->min_args, f->max_args);
	for (size_t k = 0; k < x->nargs; k++) {
		in[1 + k] = tpl_eval(c, x->args[k]);
		tpl_defined(c, &in[1 + k], x->args[k]->pos);
	}
	return f->fn(c, x, in);
}

/* Whether X's value may stand on an #SBATCH line as it is. */
int tpl_sbatch_ok(const struct expr *x)
{
	return x->kind == E_FILTER && x->filter < F_UNKNOWN && filters[x->filter].sbatch_safe;
}
