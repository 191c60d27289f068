/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template-parse.c: the template's parser: tags into a tree of statements
 * and expressions, with every operator, test and filter resolved from its
 * name here, so that evaluation never compares a name again. */
#include "template-private.h"

#include <ctype.h>
#include <string.h>

/* ------------------------------------------------------------ expressions */

static struct expr *new_expr(struct ctx *c, enum ekind kind, size_t pos)
{
	struct expr *x = tpl_alloc(c, sizeof(*x));

	x->kind = kind;
	x->pos = pos;
	return x;
}

static struct expr *parse_expr(struct ctx *c);

static const char *const op_text[] = {
	[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_FLOORDIV] = "//",
	[OP_MOD] = "%", [OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",
	[OP_LE] = "<=", [OP_GT] = ">",  [OP_GE] = ">=", [OP_IN] = "in",
};

/* The operator token T stands for; OP_NONE for "~", "and", "or". */
static enum op op_of(const struct ctx *c, struct xtok t)
{
	/* every expression ends by asking this of the next token: the first
	 * byte rules out most operators before a string compare */
	if (t.kind != X_OP && t.kind != X_NAME)
		return OP_NONE;
	for (enum op op = OP_ADD; op < OP_NOT_IN; op++)
		if (op_text[op][0] == c->src[t.b] && tpl_xis(c, t, op_text[op]))
			return op;
	return OP_NONE;
}

/* Python's dict methods: Jinja2 gives the method for "m.items", not the
 * key "items". */
static int dict_method(const char *name, size_t len)
{
	static const char *const methods[] = {
		"items",  "keys", "values", "get",        "pop",      "popitem",
		"update", "copy", "clear",  "setdefault", "fromkeys", NULL,
	};

	for (size_t k = 0; methods[k]; k++)
		if (len && methods[k][0] == name[0] && len == strlen(methods[k]) &&
		    memcmp(name, methods[k], len) == 0)
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
		tpl_fail(c, x->pos, "an expression nested deeper than %d", EXPR_DEPTH_MAX);
	return x;
}

static void enter(struct ctx *c, size_t pos)
{
	if (++c->depth > DEPTH_MAX)
		tpl_fail(c, pos, "nested deeper than %d", DEPTH_MAX);
}

static struct value parse_string(struct ctx *c, struct xtok t)
{
	char *s = tpl_alloc(c, t.e - t.b);
	size_t n = 0;

	for (size_t i = t.b + 1; i + 1 < t.e; i++) {
		char ch = c->src[i];

		if (ch == '\\') {
			switch (c->src[++i]) {
			case '\\':
				ch = '\\';
				break;
			case '\'':
				ch = '\'';
				break;
			case '"':
				ch = '"';
				break;
			case 'n':
				ch = '\n';
				break;
			case 't':
				ch = '\t';
				break;
			default:
				tpl_fail(c, i - 1,
					 "the escape '\\%c' is not supported (\\\\ \\' \\\" \\n \\t are)",
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
	struct xtok t = tpl_xnext(c);
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
				tpl_fail(c, t.pos, "'%.*s' is not a decimal integer",
					 (int)(t.e - t.b), c->src + t.b);
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, c->src[i] - '0', &v))
				tpl_fail(c, t.pos, "integer too large");
		}
		x = new_expr(c, E_CONST, t.pos);
		x->v = v_int(v);
		return x;
	}
	case X_STR:
		x = new_expr(c, E_CONST, t.pos);
		x->v = parse_string(c, t);
		/* adjacent literals join, as in Jinja2 */
		while (tpl_xpeek(c).kind == X_STR) {
			struct value more = parse_string(c, tpl_xnext(c));
			char *s = tpl_alloc(c, x->v.u.str.len + more.u.str.len + 1);

			memcpy(s, x->v.u.str.s, x->v.u.str.len);
			memcpy(s + x->v.u.str.len, more.u.str.s, more.u.str.len + 1);
			x->v = v_str_ref(s, x->v.u.str.len + more.u.str.len);
		}
		return x;
	case X_OP:
		if (tpl_xis(c, t, "(")) {
			x = parse_expr(c);
			if (tpl_xis(c, tpl_xpeek(c), ","))
				tpl_fail(c, tpl_xpeek(c).pos, "tuples are not supported");
			tpl_xexpect(c, ")");
			return x;
		}
		if (tpl_xis(c, t, "[")) {
			size_t cap = 0;

			x = new_expr(c, E_LIST, t.pos);
			while (!tpl_xaccept(c, "]")) {
				if (x->nargs == cap) {
					struct expr **n =
						tpl_alloc(c, (cap = cap ? cap * 2 : 8) * sizeof(*n));

					if (x->nargs)
						memcpy(n, x->args, x->nargs * sizeof(*n));
					x->args = n;
				}
				x->args[x->nargs++] = parse_expr(c);
				if (!tpl_xaccept(c, ",")) {
					tpl_xexpect(c, "]");
					break;
				}
			}
			return nest(c, x);
		}
		if (tpl_xis(c, t, "{"))
			tpl_fail(c, t.pos, "map literals are not supported");
		tpl_fail(c, t.pos, "unexpected '%.*s'", (int)(t.e - t.b), c->src + t.b);
	default:
		tpl_fail(c, t.pos, "an expression is missing");
	}
}

static struct expr *parse_postfix(struct ctx *c, struct expr *x)
{
	for (;;) {
		struct xtok t = tpl_xpeek(c);
		struct expr *y;

		if (tpl_xis(c, t, ".")) {
			struct xtok name;

			tpl_xnext(c);
			name = tpl_xnext(c);
			if (name.kind != X_NAME)
				tpl_fail(c, name.pos, "expected a name after '.'");
			y = new_expr(c, E_ATTR, name.pos);
			y->a = x;
			y->name = c->src + name.b;
			y->nlen = name.e - name.b;
			y->method = dict_method(y->name, y->nlen);
			if (tpl_xis(c, tpl_xpeek(c), "("))
				tpl_fail(c, tpl_xpeek(c).pos,
					 "calling '%.*s' is not supported (only 'for k, v in m.items()')",
					 (int)y->nlen, y->name);
			x = nest(c, y);
		} else if (tpl_xis(c, t, "[")) {
			tpl_xnext(c);
			if (tpl_xis(c, tpl_xpeek(c), ":"))
				tpl_fail(c, tpl_xpeek(c).pos, "slices are not supported");
			y = new_expr(c, E_INDEX, t.pos);
			y->a = x;
			y->b = parse_expr(c);
			if (tpl_xis(c, tpl_xpeek(c), ":"))
				tpl_fail(c, tpl_xpeek(c).pos, "slices are not supported");
			tpl_xexpect(c, "]");
			x = nest(c, y);
		} else if (tpl_xis(c, t, "(")) {
			tpl_fail(c, t.pos, "calls are not supported");
		} else {
			return x;
		}
	}
}

static struct expr *parse_filters(struct ctx *c, struct expr *x)
{
	for (;;) {
		struct xtok t = tpl_xpeek(c);
		struct expr *y;

		if (tpl_xis(c, t, "|")) {
			struct xtok name;
			size_t cap = 0;

			tpl_xnext(c);
			name = tpl_xnext(c);
			if (name.kind != X_NAME)
				tpl_fail(c, name.pos, "expected a filter name after '|'");
			y = new_expr(c, E_FILTER, name.pos);
			y->a = x;
			y->name = c->src + name.b;
			y->nlen = name.e - name.b;
			y->filter = tpl_filter_named(y->name, y->nlen);
			if (tpl_xaccept(c, "(")) {
				while (!tpl_xaccept(c, ")")) {
					struct xtok a1 = tpl_xpeek(c), a2;

					if (a1.kind == X_NAME) {
						size_t save = c->xpos;

						tpl_xnext(c);
						a2 = tpl_xpeek(c);
						if (tpl_xis(c, a2, "="))
							tpl_fail(c, a1.pos,
								 "keyword arguments are not supported");
						c->xpos = save;
					}
					if (y->nargs == cap) {
						struct expr **n =
							tpl_alloc(c, (cap = cap ? cap * 2 : 4) *
									     sizeof(*n));

						if (y->nargs)
							memcpy(n, y->args, y->nargs * sizeof(*n));
						y->args = n;
					}
					y->args[y->nargs++] = parse_expr(c);
					if (!tpl_xaccept(c, ",")) {
						tpl_xexpect(c, ")");
						break;
					}
				}
			}
			x = nest(c, y);
		} else if (tpl_xis(c, t, "is")) {
			struct xtok name;

			tpl_xnext(c);
			y = new_expr(c, E_TEST, t.pos);
			y->negate = tpl_xaccept(c, "not");
			name = tpl_xnext(c);
			if (!tpl_xis(c, name, "defined") && !tpl_xis(c, name, "none"))
				tpl_fail(c, name.pos,
					 "only the tests 'defined' and 'none' are supported");
			y->a = x;
			y->name = c->src + name.b;
			y->nlen = name.e - name.b;
			y->test = tpl_xis(c, name, "defined") ? TEST_DEFINED : TEST_NONE;
			/* Jinja2 reads a name or literal right after the test as its
			 * argument ("x is defined not in l"): refuse, as it would */
			{
				struct xtok arg = tpl_xpeek(c);

				if ((arg.kind == X_NAME && !tpl_xis(c, arg, "else") &&
				     !tpl_xis(c, arg, "or") && !tpl_xis(c, arg, "and")) ||
				    arg.kind == X_STR || arg.kind == X_INT || tpl_xis(c, arg, "(") ||
				    tpl_xis(c, arg, "[") || tpl_xis(c, arg, "{"))
					tpl_fail(c, arg.pos, "the test '%.*s' takes no arguments",
						 (int)y->nlen, y->name);
			}
			x = nest(c, y);
		} else {
			return x;
		}
	}
}

static struct expr *parse_unary(struct ctx *c, int with_filter)
{
	struct xtok t = tpl_xpeek(c);
	struct expr *x;

	enter(c, t.pos);
	if (tpl_xis(c, t, "-") || tpl_xis(c, t, "+")) {
		tpl_xnext(c);
		x = new_expr(c, tpl_xis(c, t, "-") ? E_NEG : E_POS, t.pos);
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

static struct expr *binary(struct ctx *c, enum ekind kind, struct xtok op, struct expr *a,
			   struct expr *b)
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

	if (tpl_xis(c, tpl_xpeek(c), "**"))
		tpl_fail(c, tpl_xpeek(c).pos, "'**' is not supported");
	return x;
}

static struct expr *parse_math2(struct ctx *c)
{
	struct expr *x = parse_pow(c);

	for (;;) {
		struct xtok t = tpl_xpeek(c);

		if (tpl_xis(c, t, "/"))
			tpl_fail(c, t.pos, "'/' is not supported (it gives a float): use '//'");
		if (!tpl_xis(c, t, "*") && !tpl_xis(c, t, "//") && !tpl_xis(c, t, "%"))
			return x;
		tpl_xnext(c);
		x = binary(c, E_ARITH, t, x, parse_pow(c));
	}
}

static struct expr *parse_concat(struct ctx *c)
{
	struct expr *x = parse_math2(c);

	for (;;) {
		struct xtok t = tpl_xpeek(c);

		if (!tpl_xis(c, t, "~"))
			return x;
		tpl_xnext(c);
		x = binary(c, E_CONCAT, t, x, parse_math2(c));
	}
}

static struct expr *parse_math1(struct ctx *c)
{
	struct expr *x = parse_concat(c);

	for (;;) {
		struct xtok t = tpl_xpeek(c);

		if (!tpl_xis(c, t, "+") && !tpl_xis(c, t, "-"))
			return x;
		tpl_xnext(c);
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
	if (tpl_xis(c, t, "not")) {
		c->xpos = t.e;
		if (tpl_xis(c, tpl_xpeek(c), "in"))
			return OP_NOT_IN;
		c->xpos = save;
	}
	return OP_NONE;
}

static struct expr *parse_compare(struct ctx *c)
{
	struct expr *x = parse_math1(c), *first = NULL, *last = NULL;

	for (;;) {
		struct xtok t = tpl_xpeek(c);
		enum op op = compare_op(c, t);
		struct expr *y;

		if (op == OP_NONE)
			return first ? first : x;
		tpl_xnext(c); /* the operator, or "in" after "not" */
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
	struct xtok t = tpl_xpeek(c);

	if (tpl_xis(c, t, "not")) {
		struct expr *x = new_expr(c, E_NOT, t.pos);

		tpl_xnext(c);
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
		struct xtok t = tpl_xpeek(c);

		if (!tpl_xis(c, t, "and"))
			return x;
		tpl_xnext(c);
		x = binary(c, E_AND, t, x, parse_not(c));
	}
}

static struct expr *parse_expr(struct ctx *c)
{
	struct expr *x;
	struct xtok t = tpl_xpeek(c);

	enter(c, t.pos);
	x = parse_and(c);
	for (;;) {
		t = tpl_xpeek(c);
		if (!tpl_xis(c, t, "or"))
			break;
		tpl_xnext(c);
		x = binary(c, E_OR, t, x, parse_and(c));
	}
	if (tpl_xis(c, tpl_xpeek(c), "if"))
		tpl_fail(c, tpl_xpeek(c).pos,
			 "conditional expressions ('a if b else c') are not supported");
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
	if (tpl_xpeek(c).kind == X_END)
		tpl_fail(c, b, "an expression is missing");
	x = parse_expr(c);
	t = tpl_xpeek(c);
	if (t.kind != X_END)
		tpl_fail(c, t.pos, "unexpected '%.*s'", (int)(t.e - t.b), c->src + t.b);
	return x;
}

/* ------------------------------------------------------------ statements */

static struct node *new_node(struct ctx *c, enum nkind kind, size_t pos)
{
	struct node *n = tpl_alloc(c, sizeof(*n));

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
	w = tpl_xnext(c);
	if (w.kind != X_NAME)
		tpl_fail(c, t->pos, "a tag name is missing after '{%%'");
	return w;
}

static const char *name_copy(struct ctx *c, struct xtok t)
{
	return arena_strndup(c->arena, c->src + t.b, t.e - t.b);
}

static void end_of_tag(struct ctx *c)
{
	struct xtok t = tpl_xpeek(c);

	if (t.kind != X_END)
		tpl_fail(c, t.pos, "unexpected '%.*s'", (int)(t.e - t.b), c->src + t.b);
}

/* Is src[b, e) a single quote character Q? */
static int quote_check(struct ctx *c, size_t k)
{
	const struct tok *prev = k > 0 && c->toks[k - 1].kind == TK_TEXT ? &c->toks[k - 1] : NULL;
	const struct tok *next =
		k + 1 < c->ntoks && c->toks[k + 1].kind == TK_TEXT ? &c->toks[k + 1] : NULL;
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
			struct expr **x = tpl_alloc(c, (cap = cap ? cap * 2 : 4) * sizeof(*x));
			struct node **b = tpl_alloc(c, cap * sizeof(*b));

			if (n->nconds) {
				memcpy(x, n->cond, n->nconds * sizeof(*x));
				memcpy(b, n->cond_body, n->nconds * sizeof(*b));
			}
			n->cond = x;
			n->cond_body = b;
		}
		n->cond[n->nconds] = cond;
		n->cond_body[n->nconds++] = parse_body(c, ends, &stop);
		if (tpl_xis(c, stop, "elif")) {
			cond = parse_whole(c, c->xpos, c->xe);
			continue;
		}
		if (tpl_xis(c, stop, "else")) {
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
	v1 = tpl_xnext(c);
	if (v1.kind != X_NAME)
		tpl_fail(c, v1.pos, "expected a loop variable");
	n->var1 = name_copy(c, v1);
	if (tpl_xaccept(c, ",")) {
		v2 = tpl_xnext(c);
		if (v2.kind != X_NAME)
			tpl_fail(c, v2.pos, "expected a second loop variable");
		n->var2 = name_copy(c, v2);
	}
	tpl_xexpect(c, "in");
	b = c->xpos;
	e = c->xe;
	while (e > b && tpl_is_space(c->src[e - 1]))
		e--;
	/* "m.items()": the one call the subset has */
	if (e - b > 8 && memcmp(c->src + e - 8, ".items()", 8) == 0) {
		n->items = 1;
		n->x = parse_whole(c, b, e - 8);
	} else {
		n->x = parse_whole(c, b, c->xe);
	}
	if (!n->var2 != !n->items)
		tpl_fail(c, t->pos, "two loop variables go with 'in MAP.items()', and it with them");
	n->body = parse_body(c, ends, &stop);
	end_of_tag(c);
	return n;
}

static struct node *parse_set(struct ctx *c, const struct tok *t)
{
	struct node *n = new_node(c, N_SET, t->pos);
	struct xtok name;

	c->xpos = block_word(c, t).e;
	name = tpl_xnext(c);
	if (name.kind != X_NAME)
		tpl_fail(c, name.pos, "expected a variable name after 'set'");
	n->var1 = name_copy(c, name);
	if (!tpl_xis(c, tpl_xpeek(c), "="))
		tpl_fail(c, tpl_xpeek(c).pos, "expected '=' (block assignments are not supported)");
	tpl_xnext(c);
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
				tpl_fail(c, t->pos,
					 "a '{{ }}' between quotes would be quoted twice: it is already one shell word, remove the quotes");
			n = new_node(c, N_OUT, t->pos);
			n->x = parse_whole(c, t->b, t->e);
			break;
		case TK_BLOCK: {
			struct xtok w = block_word(c, t);

			for (size_t e = 0; ends && ends[e]; e++)
				if (tpl_xis(c, w, ends[e])) {
					*stop = w;
					c->depth--;
					return head.next;
				}
			if (tpl_xis(c, w, "if"))
				n = parse_if(c, t);
			else if (tpl_xis(c, w, "for"))
				n = parse_for(c, t);
			else if (tpl_xis(c, w, "set"))
				n = parse_set(c, t);
			else if (tpl_xis(c, w, "endif") || tpl_xis(c, w, "endfor") ||
				 tpl_xis(c, w, "else") || tpl_xis(c, w, "elif"))
				tpl_fail(c, t->pos, "'%.*s' without a matching opening tag",
					 (int)(w.e - w.b), c->src + w.b);
			else
				tpl_fail(c, t->pos,
					 "the tag '%.*s' is not supported (if, elif, else, for, set are)",
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
		tpl_fail(c, open_pos, "this block is never closed (no '{%% %s %%}')", *last);
	}
	c->depth--;
	return head.next;
}

struct node *tpl_parse(struct ctx *c)
{
	struct xtok stop;

	return parse_body(c, NULL, &stop);
}
