/* template.c: see template.h.  Three stages: the source is cut into text
 * and tags (with Jinja2's trim_blocks, lstrip_blocks and '-' whitespace
 * control), the tags are parsed into a tree, and the tree is evaluated.
 * Errors unwind with longjmp to mad_render(): everything lives in one arena
 * freed there, so nothing leaks on the way out. */
#include "template.h"
#include "shquote.h"
#include "strbuf.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH_MAX 200
#define EXPR_DEPTH_MAX 1000
#define OUTPUT_MAX ((size_t)64 << 20)
#define ITERATIONS_MAX 10000000L

/* ------------------------------------------------------------ the tree */

/* What the parser resolves names and operators to, so that evaluation
 * never compares a name again. */
enum op {
	OP_NONE,                   /* ~, and, or: their kind says it all */
	OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_MOD,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOT_IN,
};

enum test { TEST_DEFINED, TEST_NONE };

enum filter_id {
	F_DEFAULT, F_D, F_INT, F_STRING, F_LOWER, F_UPPER, F_TRIM, F_LENGTH, F_COUNT,
	F_JOIN, F_REPLACE, F_FIRST, F_LAST, F_BASENAME, F_DIRNAME, F_RAW, F_SBATCH,
	F_ENVNAME,
	F_UNKNOWN,                 /* and the number of filters */
};

#define FILTER_ARGS_MAX 2

enum ekind {
	E_CONST, E_NAME, E_ATTR, E_INDEX, E_LIST, E_NOT, E_NEG, E_POS,
	E_ARITH, E_CONCAT, E_AND, E_OR, E_COMPARE, E_TEST, E_FILTER,
};

struct expr {
	enum ekind kind;
	size_t pos;
	struct value v;            /* E_CONST */
	const char *name;          /* E_NAME, E_ATTR, E_FILTER, E_TEST, as written */
	size_t nlen;
	enum op op;                /* E_ARITH, E_COMPARE */
	enum test test;            /* E_TEST */
	enum filter_id filter;     /* E_FILTER */
	int method;                /* E_ATTR: the name of a method of Python's dict */
	struct expr *a, *b;        /* operands; E_COMPARE: a op b, chained through next */
	struct expr **args;        /* E_LIST items, E_FILTER arguments */
	size_t nargs;
	int negate;                /* E_TEST "is not" */
	int depth;                 /* of the tree below: evaluation recurses that deep */
	struct expr *chain;        /* E_COMPARE: the next comparison (b op chain->b) */
};

enum nkind { N_TEXT, N_OUT, N_IF, N_FOR, N_SET };

struct node {
	enum nkind kind;
	size_t pos;
	size_t b, e;               /* N_TEXT */
	struct expr *x;            /* N_OUT, N_SET value, N_FOR iterable */
	struct node **cond_body;   /* N_IF: a body per condition, then the else body */
	struct expr **cond;
	size_t nconds;
	struct node *body;         /* N_FOR */
	const char *var1, *var2;   /* N_FOR targets, N_SET name */
	int items;                 /* N_FOR over .items() */
	struct node *next;
};

/* ------------------------------------------------------------ context */

enum tkind { TK_TEXT, TK_OUT, TK_BLOCK, TK_COMMENT };

struct tok {
	enum tkind kind;
	size_t b, e;               /* text, or the inside of the tag */
	size_t pos;                /* where the tag starts */
	int strip_left, strip_right, keep_left, keep_right;
};

struct scope {
	struct vdict vars;
	struct scope *up;
};

struct ctx {
	const char *src;
	size_t len;
	struct arena *arena;
	struct mad_render_error *err;
	jmp_buf fail;
	struct tok *toks;
	size_t ntoks, cur;
	struct strbuf *out;
	struct scope *scope;
	const struct value *data;
	int depth;
	long iterations;
	/* the expression tokenizer, over src[xb, xe) */
	size_t xpos, xe;
};

static void where(const struct ctx *c, size_t pos, struct mad_render_error *err)
{
	size_t line = 1, bol = 0, eol;

	for (size_t i = 0; i < pos && i < c->len; i++)
		if (c->src[i] == '\n') {
			line++;
			bol = i + 1;
		}
	for (eol = bol; eol < c->len && c->src[eol] != '\n'; eol++)
		;
	err->line = (int)line;
	err->col = (int)(pos - bol + 1);
	snprintf(err->text, sizeof(err->text), "%.*s", (int)(eol - bol), c->src + bol);
}

__attribute__((format(printf, 3, 4), noreturn))
static void fail(struct ctx *c, size_t pos, const char *fmt, ...)
{
	va_list ap;

	where(c, pos, c->err);
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	longjmp(c->fail, 1);
}

static void *alloc(struct ctx *c, size_t size)
{
	void *p = arena_alloc(c->arena, size);

	if (!p)
		fail(c, 0, "out of memory");
	return p;
}

/* ------------------------------------------------------------ stage 1: cut */

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* The end of a {{ }} or {% %} tag opened at POS: the first CLOSE outside
 * a string literal. */
static size_t tag_end(struct ctx *c, size_t from, char close, size_t pos)
{
	char quote = 0;

	for (size_t i = from; i + 1 < c->len; i++) {
		char ch = c->src[i];

		if (quote) {
			if (ch == '\\')
				i++;
			else if (ch == quote)
				quote = 0;
		} else if (ch == '\'' || ch == '"') {
			quote = ch;
		} else if (ch == close && c->src[i + 1] == '}') {
			return i;
		}
	}
	fail(c, pos, "'%s' is never closed", close == '}' ? "{{" : "{%");
}

static void push_tok(struct ctx *c, struct tok t, size_t *cap)
{
	if (c->ntoks == *cap) {
		struct tok *n = alloc(c, (*cap ? *cap * 2 : 64) * sizeof(*n));

		if (c->ntoks)
			memcpy(n, c->toks, c->ntoks * sizeof(*n));
		c->toks = n;
		*cap = *cap ? *cap * 2 : 64;
	}
	c->toks[c->ntoks++] = t;
}

static void cut(struct ctx *c)
{
	size_t i = 0, text = 0, cap = 0;

	while (i + 1 < c->len) {
		char open = c->src[i] == '{' ? c->src[i + 1] : 0;
		struct tok t = { TK_TEXT, 0, 0, i, 0, 0, 0, 0 };
		size_t in, end;

		if (open != '{' && open != '%' && open != '#') {
			i++;
			continue;
		}
		if (i > text)
			push_tok(c, (struct tok){ TK_TEXT, text, i, text, 0, 0, 0, 0 }, &cap);
		in = i + 2;
		if (in < c->len && c->src[in] == '-') {
			t.strip_left = 1;
			in++;
		} else if (in < c->len && c->src[in] == '+' && open != '{') {
			t.keep_left = 1;
			in++;
		}
		if (open == '#') {
			const char *close = NULL;

			for (size_t k = in; k + 1 < c->len; k++)
				if (c->src[k] == '#' && c->src[k + 1] == '}') {
					close = c->src + k;
					break;
				}
			if (!close)
				fail(c, i, "'{#' is never closed");
			end = (size_t)(close - c->src);
			t.kind = TK_COMMENT;
		} else {
			end = tag_end(c, in, open == '{' ? '}' : '%', i);
			t.kind = open == '{' ? TK_OUT : TK_BLOCK;
		}
		if (end > in && c->src[end - 1] == '-') {
			t.strip_right = 1;
			end--;
		} else if (end > in && c->src[end - 1] == '+' && open != '{') {
			t.keep_right = 1;
			end--;
		}
		t.b = in;
		t.e = end;
		push_tok(c, t, &cap);
		i = end + (t.strip_right || t.keep_right ? 1 : 0) + 2;
		text = i;
	}
	if (text < c->len)
		push_tok(c, (struct tok){ TK_TEXT, text, c->len, text, 0, 0, 0, 0 }, &cap);
}

/* Jinja2's whitespace rules, applied to the text around each tag:
 * '-' strips all whitespace on its side; block and comment tags also take
 * the newline right after them (trim_blocks) and the spaces and tabs
 * before them on their line (lstrip_blocks). */
static void trim(struct ctx *c)
{
	for (size_t k = 0; k < c->ntoks; k++) {
		struct tok *t = &c->toks[k];
		struct tok *prev = k > 0 && c->toks[k - 1].kind == TK_TEXT ? &c->toks[k - 1] : NULL;
		struct tok *next = k + 1 < c->ntoks && c->toks[k + 1].kind == TK_TEXT ? &c->toks[k + 1] : NULL;
		int block = t->kind == TK_BLOCK || t->kind == TK_COMMENT;

		if (t->kind == TK_TEXT)
			continue;
		if (prev && t->strip_left) {
			while (prev->e > prev->b && is_space(c->src[prev->e - 1]))
				prev->e--;
		} else if (block && !t->keep_left) {
			/* only spaces and tabs between the line's start and the tag */
			size_t s = t->pos;

			while (s > 0 && c->src[s - 1] != '\n' && is_space(c->src[s - 1]))
				s--;
			if (s == 0 || c->src[s - 1] == '\n') {
				if (prev && prev->e > s && prev->b <= s)
					prev->e = s;
			}
		}
		if (next && t->strip_right) {
			while (next->b < next->e && is_space(c->src[next->b]))
				next->b++;
		} else if (next && block && !t->keep_right && next->b < next->e && c->src[next->b] == '\n') {
			next->b++;
		}
	}
}

/* ------------------------------------------------------------ expression tokens */

enum xkind { X_END, X_NAME, X_INT, X_STR, X_OP };

struct xtok {
	enum xkind kind;
	size_t b, e;               /* in src */
	size_t pos;
};

static struct xtok xpeek(struct ctx *c)
{
	struct xtok t = { X_END, 0, 0, 0 };
	size_t i = c->xpos;
	static const char *const ops[] = {
		"==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%",
		"~", "|", ".", ",", "(", ")", "[", "]", "=", "{", "}", ":",
	};

	while (i < c->xe && is_space(c->src[i]))
		i++;
	t.pos = t.b = t.e = i;
	if (i >= c->xe)
		return t;
	if (isalpha((unsigned char)c->src[i]) || c->src[i] == '_') {
		while (i < c->xe && (isalnum((unsigned char)c->src[i]) || c->src[i] == '_'))
			i++;
		t.kind = X_NAME;
	} else if (isdigit((unsigned char)c->src[i])) {
		while (i < c->xe && (isalnum((unsigned char)c->src[i]) || c->src[i] == '_'))
			i++;
		if (i < c->xe && c->src[i] == '.' && i + 1 < c->xe && isdigit((unsigned char)c->src[i + 1]))
			fail(c, t.pos, "floating point numbers are not supported");
		t.kind = X_INT;
	} else if (c->src[i] == '\'' || c->src[i] == '"') {
		char q = c->src[i++];

		while (i < c->xe && c->src[i] != q)
			i += c->src[i] == '\\' ? 2 : 1;
		if (i >= c->xe)
			fail(c, t.pos, "unterminated string");
		i++;
		t.kind = X_STR;
	} else {
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			size_t n = strlen(ops[k]);

			if (i + n <= c->xe && memcmp(c->src + i, ops[k], n) == 0) {
				t.kind = X_OP;
				t.e = i + n;
				return t;
			}
		}
		fail(c, t.pos, "unexpected character '%c'", c->src[i]);
	}
	t.e = i;
	return t;
}

static struct xtok xnext(struct ctx *c)
{
	struct xtok t = xpeek(c);

	c->xpos = t.e;
	return t;
}

static int xis(const struct ctx *c, struct xtok t, const char *s)
{
	size_t n = strlen(s);

	return (t.kind == X_OP || t.kind == X_NAME) && t.e - t.b == n &&
	       memcmp(c->src + t.b, s, n) == 0;
}

static int xaccept(struct ctx *c, const char *s)
{
	struct xtok t = xpeek(c);

	if (!xis(c, t, s))
		return 0;
	c->xpos = t.e;
	return 1;
}

static void xexpect(struct ctx *c, const char *s)
{
	struct xtok t = xpeek(c);

	if (!xaccept(c, s)) {
		if (t.kind == X_END)
			fail(c, t.pos, "expected '%s', found the end of the tag", s);
		fail(c, t.pos, "expected '%s', found '%.*s'", s, (int)(t.e - t.b), c->src + t.b);
	}
}

/* ------------------------------------------------------------ expressions */

static struct expr *new_expr(struct ctx *c, enum ekind kind, size_t pos)
{
	struct expr *x = alloc(c, sizeof(*x));

	x->kind = kind;
	x->pos = pos;
	return x;
}

static struct expr *parse_expr(struct ctx *c);
static enum filter_id filter_named(const char *name, size_t len);

static const char *const op_text[] = {
	[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_FLOORDIV] = "//", [OP_MOD] = "%",
	[OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">",
	[OP_GE] = ">=", [OP_IN] = "in",
};

/* The operator token T stands for; OP_NONE for "~", "and", "or". */
static enum op op_of(const struct ctx *c, struct xtok t)
{
	for (enum op op = OP_ADD; op < OP_NOT_IN; op++)
		if (xis(c, t, op_text[op]))
			return op;
	return OP_NONE;
}

/* Python's dict methods: Jinja2 gives the method for "m.items", not the
 * key "items". */
static int dict_method(const char *name, size_t len)
{
	static const char *const methods[] = {
		"items", "keys", "values", "get", "pop", "popitem", "update",
		"copy", "clear", "setdefault", "fromkeys", NULL,
	};

	for (size_t k = 0; methods[k]; k++)
		if (len == strlen(methods[k]) && memcmp(name, methods[k], len) == 0)
			return 1;
	return 0;
}

/* Records how deep X's tree is.  Loops build long chains ("1+1+...",
 * "a.b.b...", "x|trim|trim...") without recursing in the parser, but the
 * evaluator recurses along them: refuse them before the stack does. */
static struct expr *nest(struct ctx *c, struct expr *x)
{
	int d = 0;

	if (x->a && x->a->depth > d)
		d = x->a->depth;
	if (x->b && x->b->depth > d)
		d = x->b->depth;
	for (size_t i = 0; i < x->nargs; i++)
		if (x->args[i]->depth > d)
			d = x->args[i]->depth;
	x->depth = d + 1;
	if (x->depth > EXPR_DEPTH_MAX)
		fail(c, x->pos, "an expression nested deeper than %d", EXPR_DEPTH_MAX);
	return x;
}

static void enter(struct ctx *c, size_t pos)
{
	if (++c->depth > DEPTH_MAX)
		fail(c, pos, "nested deeper than %d", DEPTH_MAX);
}

static struct value parse_string(struct ctx *c, struct xtok t)
{
	char *s = alloc(c, t.e - t.b);
	size_t n = 0;

	for (size_t i = t.b + 1; i + 1 < t.e; i++) {
		char ch = c->src[i];

		if (ch == '\\') {
			switch (c->src[++i]) {
			case '\\': ch = '\\'; break;
			case '\'': ch = '\''; break;
			case '"': ch = '"'; break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			default:
				fail(c, i - 1, "the escape '\\%c' is not supported (\\\\ \\' \\\" \\n \\t are)",
				     c->src[i]);
			}
		}
		s[n++] = ch;
	}
	s[n] = '\0';
	return v_str_ref(s, n);
}

static struct expr *parse_primary(struct ctx *c)
{
	struct xtok t = xnext(c);
	struct expr *x;

	switch (t.kind) {
	case X_NAME: {
		static const char *const lits[] = { "true", "True", "false", "False", "none", "None" };
		size_t n = t.e - t.b;

		for (size_t k = 0; k < 6; k++)
			if (n == strlen(lits[k]) && memcmp(c->src + t.b, lits[k], n) == 0) {
				x = new_expr(c, E_CONST, t.pos);
				x->v = k < 4 ? v_bool(k < 2) : v_none();
				return x;
			}
		x = new_expr(c, E_NAME, t.pos);
		x->name = c->src + t.b;
		x->nlen = n;
		return x;
	}
	case X_INT: {
		long long v = 0;

		for (size_t i = t.b; i < t.e; i++) {
			if (!isdigit((unsigned char)c->src[i]))
				fail(c, t.pos, "'%.*s' is not a decimal integer", (int)(t.e - t.b), c->src + t.b);
			if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c->src[i] - '0', &v))
				fail(c, t.pos, "integer too large");
		}
		x = new_expr(c, E_CONST, t.pos);
		x->v = v_int(v);
		return x;
	}
	case X_STR:
		x = new_expr(c, E_CONST, t.pos);
		x->v = parse_string(c, t);
		/* adjacent literals join, as in Jinja2 */
		while (xpeek(c).kind == X_STR) {
			struct value more = parse_string(c, xnext(c));
			char *s = alloc(c, x->v.u.str.len + more.u.str.len + 1);

			memcpy(s, x->v.u.str.s, x->v.u.str.len);
			memcpy(s + x->v.u.str.len, more.u.str.s, more.u.str.len + 1);
			x->v = v_str_ref(s, x->v.u.str.len + more.u.str.len);
		}
		return x;
	case X_OP:
		if (xis(c, t, "(")) {
			x = parse_expr(c);
			if (xis(c, xpeek(c), ","))
				fail(c, xpeek(c).pos, "tuples are not supported");
			xexpect(c, ")");
			return x;
		}
		if (xis(c, t, "[")) {
			size_t cap = 0;

			x = new_expr(c, E_LIST, t.pos);
			while (!xaccept(c, "]")) {
				if (x->nargs == cap) {
					struct expr **n = alloc(c, (cap = cap ? cap * 2 : 8) * sizeof(*n));

					if (x->nargs)
						memcpy(n, x->args, x->nargs * sizeof(*n));
					x->args = n;
				}
				x->args[x->nargs++] = parse_expr(c);
				if (!xaccept(c, ",")) {
					xexpect(c, "]");
					break;
				}
			}
			return nest(c, x);
		}
		if (xis(c, t, "{"))
			fail(c, t.pos, "map literals are not supported");
		fail(c, t.pos, "unexpected '%.*s'", (int)(t.e - t.b), c->src + t.b);
	default:
		fail(c, t.pos, "an expression is missing");
	}
}

static struct expr *parse_postfix(struct ctx *c, struct expr *x)
{
	for (;;) {
		struct xtok t = xpeek(c);
		struct expr *y;

		if (xis(c, t, ".")) {
			struct xtok name;

			xnext(c);
			name = xnext(c);
			if (name.kind != X_NAME)
				fail(c, name.pos, "expected a name after '.'");
			y = new_expr(c, E_ATTR, name.pos);
			y->a = x;
			y->name = c->src + name.b;
			y->nlen = name.e - name.b;
			y->method = dict_method(y->name, y->nlen);
			if (xis(c, xpeek(c), "("))
				fail(c, xpeek(c).pos, "calling '%.*s' is not supported (only 'for k, v in m.items()')",
				     (int)y->nlen, y->name);
			x = nest(c, y);
		} else if (xis(c, t, "[")) {
			xnext(c);
			if (xis(c, xpeek(c), ":"))
				fail(c, xpeek(c).pos, "slices are not supported");
			y = new_expr(c, E_INDEX, t.pos);
			y->a = x;
			y->b = parse_expr(c);
			if (xis(c, xpeek(c), ":"))
				fail(c, xpeek(c).pos, "slices are not supported");
			xexpect(c, "]");
			x = nest(c, y);
		} else if (xis(c, t, "(")) {
			fail(c, t.pos, "calls are not supported");
		} else {
			return x;
		}
	}
}

static struct expr *parse_filters(struct ctx *c, struct expr *x)
{
	for (;;) {
		struct xtok t = xpeek(c);
		struct expr *y;

		if (xis(c, t, "|")) {
			struct xtok name;
			size_t cap = 0;

			xnext(c);
			name = xnext(c);
			if (name.kind != X_NAME)
				fail(c, name.pos, "expected a filter name after '|'");
			y = new_expr(c, E_FILTER, name.pos);
			y->a = x;
			y->name = c->src + name.b;
			y->nlen = name.e - name.b;
			y->filter = filter_named(y->name, y->nlen);
			if (xaccept(c, "(")) {
				while (!xaccept(c, ")")) {
					struct xtok a1 = xpeek(c), a2;

					if (a1.kind == X_NAME) {
						size_t save = c->xpos;

						xnext(c);
						a2 = xpeek(c);
						if (xis(c, a2, "="))
							fail(c, a1.pos, "keyword arguments are not supported");
						c->xpos = save;
					}
					if (y->nargs == cap) {
						struct expr **n = alloc(c, (cap = cap ? cap * 2 : 4) * sizeof(*n));

						if (y->nargs)
							memcpy(n, y->args, y->nargs * sizeof(*n));
						y->args = n;
					}
					y->args[y->nargs++] = parse_expr(c);
					if (!xaccept(c, ",")) {
						xexpect(c, ")");
						break;
					}
				}
			}
			x = nest(c, y);
		} else if (xis(c, t, "is")) {
			struct xtok name;

			xnext(c);
			y = new_expr(c, E_TEST, t.pos);
			y->negate = xaccept(c, "not");
			name = xnext(c);
			if (!xis(c, name, "defined") && !xis(c, name, "none"))
				fail(c, name.pos, "only the tests 'defined' and 'none' are supported");
			y->a = x;
			y->name = c->src + name.b;
			y->nlen = name.e - name.b;
			y->test = xis(c, name, "defined") ? TEST_DEFINED : TEST_NONE;
			/* Jinja2 reads a name or literal right after the test as its
			 * argument ("x is defined not in l"): refuse, as it would */
			{
				struct xtok arg = xpeek(c);

				if ((arg.kind == X_NAME && !xis(c, arg, "else") && !xis(c, arg, "or") &&
				     !xis(c, arg, "and")) || arg.kind == X_STR || arg.kind == X_INT ||
				    xis(c, arg, "(") || xis(c, arg, "[") || xis(c, arg, "{"))
					fail(c, arg.pos, "the test '%.*s' takes no arguments", (int)y->nlen, y->name);
			}
			x = nest(c, y);
		} else {
			return x;
		}
	}
}

static struct expr *parse_unary(struct ctx *c, int with_filter)
{
	struct xtok t = xpeek(c);
	struct expr *x;

	enter(c, t.pos);
	if (xis(c, t, "-") || xis(c, t, "+")) {
		xnext(c);
		x = new_expr(c, xis(c, t, "-") ? E_NEG : E_POS, t.pos);
		x->a = parse_unary(c, 0);
		nest(c, x);
	} else {
		x = parse_primary(c);
	}
	x = parse_postfix(c, x);
	if (with_filter)
		x = parse_filters(c, x);
	c->depth--;
	return x;
}

static struct expr *binary(struct ctx *c, enum ekind kind, struct xtok op,
			   struct expr *a, struct expr *b)
{
	struct expr *x = new_expr(c, kind, op.pos);

	x->op = op_of(c, op);
	x->a = a;
	x->b = b;
	return a && b ? nest(c, x) : x;
}

static struct expr *parse_pow(struct ctx *c)
{
	struct expr *x = parse_unary(c, 1);

	if (xis(c, xpeek(c), "**"))
		fail(c, xpeek(c).pos, "'**' is not supported");
	return x;
}

static struct expr *parse_math2(struct ctx *c)
{
	struct expr *x = parse_pow(c);

	for (;;) {
		struct xtok t = xpeek(c);

		if (xis(c, t, "/"))
			fail(c, t.pos, "'/' is not supported (it gives a float): use '//'");
		if (!xis(c, t, "*") && !xis(c, t, "//") && !xis(c, t, "%"))
			return x;
		xnext(c);
		x = binary(c, E_ARITH, t, x, parse_pow(c));
	}
}

static struct expr *parse_concat(struct ctx *c)
{
	struct expr *x = parse_math2(c);

	for (;;) {
		struct xtok t = xpeek(c);

		if (!xis(c, t, "~"))
			return x;
		xnext(c);
		x = binary(c, E_CONCAT, t, x, parse_math2(c));
	}
}

static struct expr *parse_math1(struct ctx *c)
{
	struct expr *x = parse_concat(c);

	for (;;) {
		struct xtok t = xpeek(c);

		if (!xis(c, t, "+") && !xis(c, t, "-"))
			return x;
		xnext(c);
		x = binary(c, E_ARITH, t, x, parse_concat(c));
	}
}

/* The comparison at T, or OP_NONE; for "not in", the tokenizer is left
 * after "not". */
static enum op compare_op(struct ctx *c, struct xtok t)
{
	enum op op = op_of(c, t);
	size_t save = c->xpos;

	if (op >= OP_EQ && op <= OP_IN)
		return op;
	if (xis(c, t, "not")) {
		c->xpos = t.e;
		if (xis(c, xpeek(c), "in"))
			return OP_NOT_IN;
		c->xpos = save;
	}
	return OP_NONE;
}

static struct expr *parse_compare(struct ctx *c)
{
	struct expr *x = parse_math1(c), *first = NULL, *last = NULL;

	for (;;) {
		struct xtok t = xpeek(c);
		enum op op = compare_op(c, t);
		struct expr *y;

		if (op == OP_NONE)
			return first ? first : x;
		xnext(c); /* the operator, or "in" after "not" */
		y = binary(c, E_COMPARE, t, NULL, NULL);
		y->op = op;
		y->a = last ? last->b : x;
		y->b = parse_math1(c);
		nest(c, y);
		if (last)
			last->chain = y;
		else
			first = y;
		last = y;
	}
}

static struct expr *parse_not(struct ctx *c)
{
	struct xtok t = xpeek(c);

	if (xis(c, t, "not")) {
		struct expr *x = new_expr(c, E_NOT, t.pos);

		xnext(c);
		enter(c, t.pos);
		x->a = parse_not(c);
		c->depth--;
		return nest(c, x);
	}
	return parse_compare(c);
}

static struct expr *parse_and(struct ctx *c)
{
	struct expr *x = parse_not(c);

	for (;;) {
		struct xtok t = xpeek(c);

		if (!xis(c, t, "and"))
			return x;
		xnext(c);
		x = binary(c, E_AND, t, x, parse_not(c));
	}
}

static struct expr *parse_expr(struct ctx *c)
{
	struct expr *x;
	struct xtok t = xpeek(c);

	enter(c, t.pos);
	x = parse_and(c);
	for (;;) {
		t = xpeek(c);
		if (!xis(c, t, "or"))
			break;
		xnext(c);
		x = binary(c, E_OR, t, x, parse_and(c));
	}
	if (xis(c, xpeek(c), "if"))
		fail(c, xpeek(c).pos, "conditional expressions ('a if b else c') are not supported");
	c->depth--;
	return x;
}

/* Parses src[b, e) as one whole expression. */
static struct expr *parse_whole(struct ctx *c, size_t b, size_t e)
{
	struct expr *x;
	struct xtok t;

	c->xpos = b;
	c->xe = e;
	if (xpeek(c).kind == X_END)
		fail(c, b, "an expression is missing");
	x = parse_expr(c);
	t = xpeek(c);
	if (t.kind != X_END)
		fail(c, t.pos, "unexpected '%.*s'", (int)(t.e - t.b), c->src + t.b);
	return x;
}

/* ------------------------------------------------------------ statements */

static struct node *new_node(struct ctx *c, enum nkind kind, size_t pos)
{
	struct node *n = alloc(c, sizeof(*n));

	n->kind = kind;
	n->pos = pos;
	return n;
}

/* The keyword of a block tag, and the position after it. */
static struct xtok block_word(struct ctx *c, const struct tok *t)
{
	struct xtok w;

	c->xpos = t->b;
	c->xe = t->e;
	w = xnext(c);
	if (w.kind != X_NAME)
		fail(c, t->pos, "a tag name is missing after '{%%'");
	return w;
}

static const char *name_copy(struct ctx *c, struct xtok t)
{
	return arena_strndup(c->arena, c->src + t.b, t.e - t.b);
}

static void end_of_tag(struct ctx *c)
{
	struct xtok t = xpeek(c);

	if (t.kind != X_END)
		fail(c, t.pos, "unexpected '%.*s'", (int)(t.e - t.b), c->src + t.b);
}

/* Is src[b, e) a single quote character Q? */
static int quote_check(struct ctx *c, size_t k)
{
	const struct tok *prev = k > 0 && c->toks[k - 1].kind == TK_TEXT ? &c->toks[k - 1] : NULL;
	const struct tok *next = k + 1 < c->ntoks && c->toks[k + 1].kind == TK_TEXT ? &c->toks[k + 1] : NULL;
	char q;

	if (!prev || !next || prev->e == prev->b || next->e == next->b)
		return 0;
	q = c->src[prev->e - 1];
	return (q == '"' || q == '\'') && c->src[next->b] == q;
}

static struct node *parse_body(struct ctx *c, const char *const *ends, struct xtok *stop);

static struct node *parse_if(struct ctx *c, const struct tok *t)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	static const char *const end_else[] = { "endif", NULL };
	struct node *n = new_node(c, N_IF, t->pos);
	struct expr *cond;
	size_t cap = 0;
	struct xtok stop;

	c->xpos = block_word(c, t).e; /* after "if" */
	cond = parse_whole(c, c->xpos, c->xe);
	for (;;) {
		if (n->nconds + 1 >= cap) {
			struct expr **x = alloc(c, (cap = cap ? cap * 2 : 4) * sizeof(*x));
			struct node **b = alloc(c, cap * sizeof(*b));

			if (n->nconds) {
				memcpy(x, n->cond, n->nconds * sizeof(*x));
				memcpy(b, n->cond_body, n->nconds * sizeof(*b));
			}
			n->cond = x;
			n->cond_body = b;
		}
		n->cond[n->nconds] = cond;
		n->cond_body[n->nconds++] = parse_body(c, ends, &stop);
		if (xis(c, stop, "elif")) {
			cond = parse_whole(c, c->xpos, c->xe);
			continue;
		}
		if (xis(c, stop, "else")) {
			end_of_tag(c);
			n->cond_body[n->nconds] = parse_body(c, end_else, &stop);
		} else {
			n->cond_body[n->nconds] = NULL;
		}
		end_of_tag(c);
		return n;
	}
}

static struct node *parse_for(struct ctx *c, const struct tok *t)
{
	static const char *const ends[] = { "endfor", NULL };
	struct node *n = new_node(c, N_FOR, t->pos);
	struct xtok v1, v2, stop;
	size_t b, e;

	c->xpos = block_word(c, t).e;
	v1 = xnext(c);
	if (v1.kind != X_NAME)
		fail(c, v1.pos, "expected a loop variable");
	n->var1 = name_copy(c, v1);
	if (xaccept(c, ",")) {
		v2 = xnext(c);
		if (v2.kind != X_NAME)
			fail(c, v2.pos, "expected a second loop variable");
		n->var2 = name_copy(c, v2);
	}
	xexpect(c, "in");
	b = c->xpos;
	e = c->xe;
	while (e > b && is_space(c->src[e - 1]))
		e--;
	/* "m.items()": the one call the subset has */
	if (e - b > 8 && memcmp(c->src + e - 8, ".items()", 8) == 0) {
		n->items = 1;
		n->x = parse_whole(c, b, e - 8);
	} else {
		n->x = parse_whole(c, b, c->xe);
	}
	if (!n->var2 != !n->items)
		fail(c, t->pos, "two loop variables go with 'in MAP.items()', and it with them");
	n->body = parse_body(c, ends, &stop);
	end_of_tag(c);
	return n;
}

static struct node *parse_set(struct ctx *c, const struct tok *t)
{
	struct node *n = new_node(c, N_SET, t->pos);
	struct xtok name;

	c->xpos = block_word(c, t).e;
	name = xnext(c);
	if (name.kind != X_NAME)
		fail(c, name.pos, "expected a variable name after 'set'");
	n->var1 = name_copy(c, name);
	if (!xis(c, xpeek(c), "="))
		fail(c, xpeek(c).pos, "expected '=' (block assignments are not supported)");
	xnext(c);
	n->x = parse_whole(c, c->xpos, c->xe);
	return n;
}

/* Parses tags until one of ENDS (NULL: the end of the template); *STOP is
 * the end tag's keyword, with the tokenizer after it. */
static struct node *parse_body(struct ctx *c, const char *const *ends, struct xtok *stop)
{
	struct node head = { 0 }, *tail = &head;
	size_t open_pos = c->cur > 0 ? c->toks[c->cur - 1].pos : 0;

	enter(c, open_pos);
	while (c->cur < c->ntoks) {
		size_t k = c->cur++;
		const struct tok *t = &c->toks[k];
		struct node *n = NULL;

		switch (t->kind) {
		case TK_COMMENT:
			continue;
		case TK_TEXT:
			if (t->e == t->b)
				continue;
			n = new_node(c, N_TEXT, t->pos);
			n->b = t->b;
			n->e = t->e;
			break;
		case TK_OUT:
			if (quote_check(c, k))
				fail(c, t->pos, "a '{{ }}' between quotes would be quoted twice: it is already one shell word, remove the quotes");
			n = new_node(c, N_OUT, t->pos);
			n->x = parse_whole(c, t->b, t->e);
			break;
		case TK_BLOCK: {
			struct xtok w = block_word(c, t);

			for (size_t e = 0; ends && ends[e]; e++)
				if (xis(c, w, ends[e])) {
					*stop = w;
					c->depth--;
					return head.next;
				}
			if (xis(c, w, "if"))
				n = parse_if(c, t);
			else if (xis(c, w, "for"))
				n = parse_for(c, t);
			else if (xis(c, w, "set"))
				n = parse_set(c, t);
			else if (xis(c, w, "endif") || xis(c, w, "endfor") || xis(c, w, "else") || xis(c, w, "elif"))
				fail(c, t->pos, "'%.*s' without a matching opening tag", (int)(w.e - w.b), c->src + w.b);
			else
				fail(c, t->pos, "the tag '%.*s' is not supported (if, elif, else, for, set are)",
				     (int)(w.e - w.b), c->src + w.b);
			break;
		}
		}
		tail->next = n;
		tail = n;
	}
	if (ends) {
		const char *const *last = ends;

		while (last[1])
			last++;
		fail(c, open_pos, "this block is never closed (no '{%% %s %%}')", *last);
	}
	c->depth--;
	return head.next;
}

/* ------------------------------------------------------------ evaluation */

static struct value lookup(struct ctx *c, const char *name, size_t len)
{
	for (struct scope *s = c->scope; s; s = s->up) {
		struct value *v = vdict_get(&s->vars, name, len);

		if (v)
			return *v;
	}
	if (c->data && c->data->t == V_DICT) {
		struct value *v = vdict_get(c->data->u.dict, name, len);

		if (v)
			return *v;
	}
	return v_undef(arena_strndup(c->arena, name, len));
}

static void defined(struct ctx *c, const struct value *v, size_t pos)
{
	if (v->t == V_UNDEF)
		fail(c, pos, "'%s' is undefined", v->u.undef_name ? v->u.undef_name : "value");
}

static struct value eval(struct ctx *c, const struct expr *x);

static const char *str_of(struct ctx *c, const struct value *v, size_t *len, size_t pos)
{
	const char *s;

	defined(c, v, pos);
	if (v_to_str(c->arena, v, &s, len))
		fail(c, pos, "a %s cannot be turned into text here", vtype_name(v->t));
	return s;
}

static long long want_int(struct ctx *c, const struct value *v, size_t pos, const char *what)
{
	defined(c, v, pos);
	if (v->t == V_INT)
		return v->u.i;
	fail(c, pos, "%s needs integers, not a %s (convert with '| int')", what, vtype_name(v->t));
}

static struct value arith(struct ctx *c, const struct expr *x)
{
	struct value a = eval(c, x->a), b = eval(c, x->b);
	long long l, r, v;

	defined(c, &a, x->a->pos);
	defined(c, &b, x->b->pos);
	if (x->op == OP_ADD && a.t == V_STR && b.t == V_STR) {
		char *s = alloc(c, a.u.str.len + b.u.str.len + 1);

		memcpy(s, a.u.str.s, a.u.str.len);
		memcpy(s + a.u.str.len, b.u.str.s, b.u.str.len + 1);
		return v_str_ref(s, a.u.str.len + b.u.str.len);
	}
	l = want_int(c, &a, x->a->pos, "arithmetic");
	r = want_int(c, &b, x->b->pos, "arithmetic");
	if ((x->op == OP_FLOORDIV || x->op == OP_MOD) && r == 0)
		fail(c, x->pos, "division by zero");
	switch (x->op) {
	case OP_ADD:
		if (__builtin_add_overflow(l, r, &v))
			fail(c, x->pos, "integer overflow");
		break;
	case OP_SUB:
		if (__builtin_sub_overflow(l, r, &v))
			fail(c, x->pos, "integer overflow");
		break;
	case OP_MUL:
		if (__builtin_mul_overflow(l, r, &v))
			fail(c, x->pos, "integer overflow");
		break;
	case OP_FLOORDIV: /* floors, as in Python */
		if (l == -__LONG_LONG_MAX__ - 1 && r == -1)
			fail(c, x->pos, "integer overflow");
		v = l / r;
		if ((l % r != 0) && ((l < 0) != (r < 0)))
			v--;
		break;
	default: /* OP_MOD takes the divisor's sign, as in Python */
		if (r == -1)
			v = 0;
		else {
			v = l % r;
			if (v != 0 && ((v < 0) != (r < 0)))
				v += r;
		}
		break;
	}
	return v_int(v);
}

static int contains(struct ctx *c, const struct value *item, const struct value *in, size_t pos)
{
	defined(c, in, pos);
	defined(c, item, pos);
	switch (in->t) {
	case V_LIST:
		for (size_t i = 0; i < in->u.list->n; i++)
			if (v_equal(item, &in->u.list->item[i]))
				return 1;
		return 0;
	case V_DICT:
		return item->t == V_STR && vdict_get(in->u.dict, item->u.str.s, item->u.str.len) != NULL;
	case V_STR:
		if (item->t != V_STR)
			fail(c, pos, "'in' a string needs a string on the left, not a %s", vtype_name(item->t));
		if (item->u.str.len == 0)
			return 1;
		for (size_t i = 0; i + item->u.str.len <= in->u.str.len; i++)
			if (memcmp(in->u.str.s + i, item->u.str.s, item->u.str.len) == 0)
				return 1;
		return 0;
	default:
		fail(c, pos, "'in' needs a list, a map or a string, not a %s", vtype_name(in->t));
	}
}

static int compare(struct ctx *c, const struct expr *x, const struct value *a,
		   const struct value *b)
{
	int cmp;

	if (x->op == OP_IN)
		return contains(c, a, b, x->pos);
	if (x->op == OP_NOT_IN)
		return !contains(c, a, b, x->pos);
	defined(c, a, x->a->pos);
	defined(c, b, x->b->pos);
	if (a->t == V_INT && b->t == V_INT) {
		cmp = a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	} else if (a->t == V_STR && b->t == V_STR) {
		size_t n = a->u.str.len < b->u.str.len ? a->u.str.len : b->u.str.len;

		cmp = memcmp(a->u.str.s, b->u.str.s, n);
		if (cmp == 0)
			cmp = a->u.str.len < b->u.str.len ? -1 : a->u.str.len > b->u.str.len;
	} else {
		/* Python would say "4" == 4 is False: in a job template that is a
		 * bug (YAML values are strings), so it is an error */
		fail(c, x->pos, "cannot compare a %s with a %s (only integer with integer, string with string; convert with '| int')",
		     vtype_name(a->t), vtype_name(b->t));
	}
	switch (x->op) {
	case OP_EQ: return cmp == 0;
	case OP_NE: return cmp != 0;
	case OP_LT: return cmp < 0;
	case OP_LE: return cmp <= 0;
	case OP_GT: return cmp > 0;
	default: return cmp >= 0; /* OP_GE */
	}
}

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
		"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81",
		"\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86",
		"\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8",
		"\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80", NULL,
	};
	unsigned char ch = (unsigned char)(end ? s[len - 1] : s[0]);

	if (is_space((char)ch) || (ch >= 0x1c && ch <= 0x1f))
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
		fail(c, x->pos, "'| %.*s' needs a %s, not a %s", (int)x->nlen, x->name, vtype_name(t),
		     vtype_name(v->t));
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
		fail(c, x->pos, "'| int' needs a string of digits, not a %s", vtype_name(in->t));
	s = in->u.str.s;
	len = in->u.str.len;
	if (k < len && (s[k] == '-' || s[k] == '+'))
		neg = s[k++] == '-';
	if (k == len)
		fail(c, x->pos, "'| int': '%.*s' is not an integer", (int)len, s);
	for (; k < len; k++) {
		if (!isdigit((unsigned char)s[k]))
			fail(c, x->pos, "'| int': '%.*s' is not an integer", (int)(len > 64 ? 64 : len), s);
		if (u > (~0ULL - 9) / 10)
			u = ~0ULL; /* saturates: too large below */
		else
			u = u * 10 + (unsigned long long)(s[k] - '0');
	}
	if (u > (unsigned long long)__LONG_LONG_MAX__ + (unsigned long long)neg)
		fail(c, x->pos, "'| int': '%.*s' is too large", (int)(len > 64 ? 64 : len), s);
	return v_int(neg ? (long long)(0 - u) : (long long)u);
}

static struct value f_string(struct ctx *c, const struct expr *x, const struct value *in)
{
	size_t len;
	const char *s = str_of(c, in, &len, x->pos);

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
		fail(c, x->pos, "'| %.*s' of text that is not ASCII is not supported", (int)x->nlen, x->name);
	p = alloc(c, len + 1);
	for (size_t k = 0; k < len; k++)
		p[k] = (char)(x->filter == F_LOWER ? tolower((unsigned char)s[k]) : toupper((unsigned char)s[k]));
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
	fail(c, x->pos, "'| length' of a %s", vtype_name(in->t));
}

/* SB's bytes as a string of the arena; frees SB. */
static struct value sb_value(struct ctx *c, const struct expr *x, struct strbuf *sb)
{
	struct value v;

	if (!sb_cstr(sb))
		fail(c, x->pos, "out of memory");
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
		sep = str_of(c, &in[1], &seplen, x->args[0]->pos);
	for (size_t k = 0; k < in->u.list->n; k++) {
		s = str_of(c, &in->u.list->item[k], &len, x->pos);
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
	old = str_of(c, &in[1], &ol, x->args[0]->pos);
	new = str_of(c, &in[2], &nl, x->args[1]->pos);
	if (!ol)
		fail(c, x->args[0]->pos, "'| replace' of an empty string is not supported");
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
		fail(c, x->pos, "'| %.*s' of an empty list", (int)x->nlen, x->name);
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
		fail(c, x->pos, "'| raw' takes a string or an integer, not a %s", vtype_name(in->t));
	s = str_of(c, in, &len, x->pos);
	v = v_str_ref(s, len);
	v.raw = 1;
	return v;
}

static struct value f_sbatch(struct ctx *c, const struct expr *x, const struct value *in)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len;
	const char *s = str_of(c, in, &len, x->pos);
	struct value v;

	if (sbatch_quote(&sb, s, len))
		fail(c, x->pos, "'| sbatch': a newline, carriage return or NUL cannot be in an #SBATCH line");
	v = sb_value(c, x, &sb);
	v.raw = 1;
	return v;
}

static struct value f_envname(struct ctx *c, const struct expr *x, const struct value *in)
{
	size_t len;
	const char *s = str_of(c, in, &len, x->pos);
	struct value v;

	if (!shell_name_ok(s, len))
		fail(c, x->pos, "'| envname': '%.*s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
		     (int)(len > 64 ? 64 : len), s);
	v = v_str_ref(s, len);
	v.raw = 1;
	return v;
}

/* The filters, by the enum the parser resolved their names to.  An alias
 * (d) has a row of its own, so messages name the filter as written. */
static const struct filter {
	const char *name;
	int min_args, max_args;    /* at most FILTER_ARGS_MAX */
	int takes_undefined;       /* the input may be undefined (default) */
	int sbatch_ok;             /* its output may stand on an #SBATCH line */
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

static enum filter_id filter_named(const char *name, size_t len)
{
	enum filter_id f;

	for (f = 0; f < F_UNKNOWN; f++)
		if (strlen(filters[f].name) == len && memcmp(filters[f].name, name, len) == 0)
			break;
	return f;
}

/* An unknown filter is an error only when it runs, as the filters' type
 * errors are: the same template fails at the same place as before. */
static struct value apply_filter(struct ctx *c, const struct expr *x)
{
	struct value in[1 + FILTER_ARGS_MAX];
	const struct filter *f = x->filter < F_UNKNOWN ? &filters[x->filter] : NULL;

	in[0] = eval(c, x->a);
	if (!f || !f->takes_undefined)
		defined(c, &in[0], x->a->pos);
	if (!f)
		fail(c, x->pos, "unknown filter '%.*s'", (int)x->nlen, x->name);
	if ((int)x->nargs < f->min_args || (int)x->nargs > f->max_args)
		fail(c, x->pos, "the filter '%.*s' takes %d to %d arguments", (int)x->nlen, x->name,
		     f->min_args, f->max_args);
	for (size_t k = 0; k < x->nargs; k++) {
		in[1 + k] = eval(c, x->args[k]);
		defined(c, &in[1 + k], x->args[k]->pos);
	}
	return f->fn(c, x, in);
}

/* Whether X's value may stand on an #SBATCH line as it is. */
static int sbatch_ok(const struct expr *x)
{
	return x->kind == E_FILTER && x->filter < F_UNKNOWN && filters[x->filter].sbatch_ok;
}

static struct value eval(struct ctx *c, const struct expr *x)
{
	struct value a, b;

	switch (x->kind) {
	case E_CONST:
		return x->v;
	case E_NAME:
		return lookup(c, x->name, x->nlen);
	case E_ATTR:
	case E_INDEX:
		a = eval(c, x->a);
		defined(c, &a, x->a->pos);
		if (x->kind == E_ATTR) {
			struct value *v;

			/* Jinja2 gives a map's method here, not its key: refuse the
			 * difference rather than print something else */
			if (a.t == V_DICT && x->method)
				fail(c, x->pos, "'.%.*s' of a map is a method in Jinja2: write ['%.*s'] for the key",
				     (int)x->nlen, x->name, (int)x->nlen, x->name);
			if (a.t == V_DICT && (v = vdict_get(a.u.dict, x->name, x->nlen)))
				return *v;
			return v_undef(arena_strndup(c->arena, x->name, x->nlen));
		}
		b = eval(c, x->b);
		defined(c, &b, x->b->pos);
		if (a.t == V_DICT && b.t == V_STR) {
			struct value *v = vdict_get(a.u.dict, b.u.str.s, b.u.str.len);

			return v ? *v : v_undef(arena_strndup(c->arena, b.u.str.s, b.u.str.len));
		}
		if (a.t == V_LIST && b.t == V_INT) {
			long long i = b.u.i, n = (long long)a.u.list->n;

			if (i < 0)
				i += n;
			if (i < 0 || i >= n)
				return v_undef("list item"); /* Jinja2: undefined, not an error yet */
			return a.u.list->item[i];
		}
		fail(c, x->pos, "cannot index a %s with a %s", vtype_name(a.t), vtype_name(b.t));
	case E_LIST: {
		struct value l = v_list(c->arena);

		if (l.t == V_UNDEF)
			fail(c, x->pos, "out of memory");
		for (size_t i = 0; i < x->nargs; i++) {
			a = eval(c, x->args[i]);
			defined(c, &a, x->args[i]->pos);
			if (vlist_push(c->arena, l.u.list, a))
				fail(c, x->pos, "out of memory");
		}
		return l;
	}
	case E_NOT:
		a = eval(c, x->a);
		defined(c, &a, x->a->pos);
		return v_bool(!v_truthy(&a));
	case E_NEG:
	case E_POS: {
		long long i;

		a = eval(c, x->a);
		i = want_int(c, &a, x->a->pos, x->kind == E_NEG ? "'-'" : "'+'");
		if (x->kind == E_NEG && i == -__LONG_LONG_MAX__ - 1)
			fail(c, x->pos, "integer overflow");
		return v_int(x->kind == E_NEG ? -i : i);
	}
	case E_ARITH:
		return arith(c, x);
	case E_CONCAT: {
		const char *l, *r;
		size_t ll, rl;
		char *s;

		a = eval(c, x->a);
		b = eval(c, x->b);
		l = str_of(c, &a, &ll, x->a->pos);
		r = str_of(c, &b, &rl, x->b->pos);
		s = alloc(c, ll + rl + 1);
		memcpy(s, l, ll);
		memcpy(s + ll, r, rl);
		return v_str_ref(s, ll + rl);
	}
	case E_AND:
	case E_OR:
		a = eval(c, x->a);
		defined(c, &a, x->a->pos);
		if (v_truthy(&a) == (x->kind == E_OR))
			return a;
		b = eval(c, x->b);
		defined(c, &b, x->b->pos);
		return b;
	case E_COMPARE: {
		const struct expr *y = x;

		a = eval(c, x->a);
		for (; y; y = y->chain) {
			b = eval(c, y->b);
			if (!compare(c, y, &a, &b))
				return v_bool(0);
			a = b;
		}
		return v_bool(1);
	}
	case E_TEST:
		a = eval(c, x->a);
		if (x->test == TEST_DEFINED)
			return v_bool((a.t != V_UNDEF) != x->negate);
		defined(c, &a, x->a->pos);
		return v_bool((a.t == V_NONE) != x->negate);
	case E_FILTER:
		return apply_filter(c, x);
	}
	fail(c, x->pos, "internal error: unknown expression");
}

/* ------------------------------------------------------------ rendering */

static void emit(struct ctx *c, const char *s, size_t len, size_t pos)
{
	if (c->out->len + len > OUTPUT_MAX)
		fail(c, pos, "the output is larger than %zu MiB", OUTPUT_MAX >> 20);
	sb_add(c->out, s, len);
}

/* Whether the output's current line is an #SBATCH line. */
static int on_sbatch_line(const struct ctx *c)
{
	size_t b = c->out->len;

	while (b > 0 && c->out->buf[b - 1] != '\n')
		b--;
	return c->out->len - b >= 7 && memcmp(c->out->buf + b, "#SBATCH", 7) == 0;
}

static void set_var(struct ctx *c, const char *name, struct value v, size_t pos)
{
	if (!c->scope)
		c->scope = alloc(c, sizeof(*c->scope));
	if (vdict_set(c->arena, &c->scope->vars, name, strlen(name), v))
		fail(c, pos, "out of memory");
}

static void run(struct ctx *c, const struct node *n);

static void run_for(struct ctx *c, const struct node *n)
{
	struct value it = eval(c, n->x), loop;
	struct scope *outer = c->scope;
	size_t count;

	defined(c, &it, n->x->pos);
	if (n->items && it.t != V_DICT)
		fail(c, n->x->pos, "'.items()' needs a map, not a %s", vtype_name(it.t));
	if (it.t == V_LIST)
		count = it.u.list->n;
	else if (it.t == V_DICT)
		count = it.u.dict->n;
	else
		fail(c, n->x->pos, "cannot loop over a %s", vtype_name(it.t));
	for (size_t i = 0; i < count; i++) {
		struct scope *s = alloc(c, sizeof(*s));

		if (++c->iterations > ITERATIONS_MAX)
			fail(c, n->pos, "more than %ld loop iterations", ITERATIONS_MAX);
		s->up = outer;
		c->scope = s;
		loop = v_dict(c->arena);
		if (loop.t == V_UNDEF ||
		    vdict_set(c->arena, loop.u.dict, "index", 5, v_int((long long)i + 1)) ||
		    vdict_set(c->arena, loop.u.dict, "index0", 6, v_int((long long)i)) ||
		    vdict_set(c->arena, loop.u.dict, "first", 5, v_bool(i == 0)) ||
		    vdict_set(c->arena, loop.u.dict, "last", 4, v_bool(i + 1 == count)) ||
		    vdict_set(c->arena, loop.u.dict, "length", 6, v_int((long long)count)))
			fail(c, n->pos, "out of memory");
		set_var(c, "loop", loop, n->pos);
		if (it.t == V_LIST) {
			set_var(c, n->var1, it.u.list->item[i], n->pos);
		} else {
			struct value key = v_str_ref(it.u.dict->key[i], it.u.dict->klen[i]);

			set_var(c, n->var1, key, n->pos);
			if (n->items)
				set_var(c, n->var2, it.u.dict->val[i], n->pos);
		}
		run(c, n->body);
		c->scope = outer;
	}
}

static void run(struct ctx *c, const struct node *n)
{
	for (; n; n = n->next) {
		switch (n->kind) {
		case N_TEXT:
			emit(c, c->src + n->b, n->e - n->b, n->pos);
			break;
		case N_OUT: {
			struct value v;
			const char *s;
			size_t len;

			if (on_sbatch_line(c) && !sbatch_ok(n->x))
				fail(c, n->pos, "a value on an #SBATCH line needs '| sbatch' (sbatch reads these lines, not the shell)");
			v = eval(c, n->x);
			if (v.t == V_LIST || v.t == V_DICT)
				fail(c, n->pos, "cannot print a %s", vtype_name(v.t));
			s = str_of(c, &v, &len, n->x->pos);
			if (v.raw) {
				emit(c, s, len, n->pos);
			} else {
				size_t before = c->out->len;

				if (shell_quote(c->out, s, len))
					fail(c, n->pos, "a NUL byte cannot be in a shell word");
				if (c->out->len > OUTPUT_MAX || c->out->len < before)
					fail(c, n->pos, "the output is too large");
			}
			break;
		}
		case N_IF: {
			size_t k;

			for (k = 0; k < n->nconds; k++) {
				struct value v = eval(c, n->cond[k]);

				defined(c, &v, n->cond[k]->pos);
				if (v_truthy(&v))
					break;
			}
			run(c, n->cond_body[k]); /* k == nconds: the else body, or NULL */
			break;
		}
		case N_FOR:
			run_for(c, n);
			break;
		case N_SET: {
			struct value v = eval(c, n->x);

			defined(c, &v, n->x->pos);
			set_var(c, n->var1, v, n->pos);
			break;
		}
		}
		if (c->out->failed)
			fail(c, n->pos, "out of memory");
	}
}

/* Everything that may fail, behind one setjmp (no local of the caller
 * lives across it). */
static int render_guarded(struct ctx *c)
{
	struct node *tree;
	struct xtok stop;
	const char *nul;

	if (setjmp(c->fail))
		return -1;
	/* Jinja2 reads \r\n and \r as \n */
	if (memchr(c->src, '\r', c->len)) {
		char *n = alloc(c, c->len + 1);
		size_t k = 0;

		for (size_t i = 0; i < c->len; i++)
			if (c->src[i] != '\r')
				n[k++] = c->src[i];
			else if (i + 1 >= c->len || c->src[i + 1] != '\n')
				n[k++] = '\n';
		c->src = n;
		c->len = k;
	}
	nul = memchr(c->src, '\0', c->len);
	if (nul)
		fail(c, (size_t)(nul - c->src), "a NUL byte in the template");
	cut(c);
	trim(c);
	tree = parse_body(c, NULL, &stop);
	c->scope = NULL;
	run(c, tree);
	return 0;
}

int mad_render(const char *src, size_t len, const struct value *data,
	       struct strbuf *out, struct mad_render_error *err)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int rc;

	memset(err, 0, sizeof(*err));
	if (!c || !(c->arena = arena_new())) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		free(c);
		return -1;
	}
	c->src = src;
	c->len = len;
	c->err = err;
	c->out = out;
	c->data = data;
	rc = render_guarded(c);
	arena_free(c->arena);
	free(c);
	return rc;
}
