/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template-eval.c: the template's evaluator: expressions to values, with
 * Python's and Jinja2's semantics inside the subset, and statements into the
 * output, each value one shell word unless a filter made it raw. */
#include "template-private.h"
#include "shquote.h"
#include "strbuf.h"

#include <string.h>

/* ------------------------------------------------------------ expressions */

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

void tpl_defined(struct ctx *c, const struct value *v, size_t pos)
{
	if (v->t == V_UNDEF)
		tpl_fail(c, pos, "'%s' is undefined", v->u.undef_name ? v->u.undef_name : "value");
}

const char *tpl_str_of(struct ctx *c, const struct value *v, size_t *len, size_t pos)
{
	const char *s;

	tpl_defined(c, v, pos);
	if (v_to_str(c->arena, v, &s, len))
		tpl_fail(c, pos, "a %s cannot be turned into text here", vtype_name(v->t));
	return s;
}

static long long want_int(struct ctx *c, const struct value *v, size_t pos, const char *what)
{
	tpl_defined(c, v, pos);
	if (v->t == V_INT)
		return v->u.i;
	tpl_fail(c, pos, "%s needs integers, not a %s (convert with '| int')", what, vtype_name(v->t));
}

static struct value arith(struct ctx *c, const struct expr *x)
{
	struct value a = tpl_eval(c, x->a), b = tpl_eval(c, x->b);
	long long l, r, v;

	tpl_defined(c, &a, x->a->pos);
	tpl_defined(c, &b, x->b->pos);
	if (x->op == OP_ADD && a.t == V_STR && b.t == V_STR) {
		char *s = tpl_alloc(c, a.u.str.len + b.u.str.len + 1);

		memcpy(s, a.u.str.s, a.u.str.len);
		memcpy(s + a.u.str.len, b.u.str.s, b.u.str.len + 1);
		return v_str_ref(s, a.u.str.len + b.u.str.len);
	}
	l = want_int(c, &a, x->a->pos, "arithmetic");
	r = want_int(c, &b, x->b->pos, "arithmetic");
	if ((x->op == OP_FLOORDIV || x->op == OP_MOD) && r == 0)
		tpl_fail(c, x->pos, "division by zero");
	switch (x->op) {
	case OP_ADD:
		if (__builtin_add_overflow(l, r, &v))
			tpl_fail(c, x->pos, "integer overflow");
		break;
	case OP_SUB:
		if (__builtin_sub_overflow(l, r, &v))
			tpl_fail(c, x->pos, "integer overflow");
		break;
	case OP_MUL:
		if (__builtin_mul_overflow(l, r, &v))
			tpl_fail(c, x->pos, "integer overflow");
		break;
	case OP_FLOORDIV: /* floors, as in Python */
		if (l == -__LONG_LONG_MAX__ - 1 && r == -1)
			tpl_fail(c, x->pos, "integer overflow");
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
	tpl_defined(c, in, pos);
	tpl_defined(c, item, pos);
	switch (in->t) {
	case V_LIST:
		for (size_t i = 0; i < in->u.list->n; i++)
			if (v_equal(item, &in->u.list->item[i]))
				return 1;
		return 0;
	case V_DICT:
		return item->t == V_STR &&
		       vdict_get(in->u.dict, item->u.str.s, item->u.str.len) != NULL;
	case V_STR:
		if (item->t != V_STR)
			tpl_fail(c, pos, "'in' a string needs a string on the left, not a %s",
				 vtype_name(item->t));
		if (item->u.str.len == 0)
			return 1;
		for (size_t i = 0; i + item->u.str.len <= in->u.str.len; i++)
			if (memcmp(in->u.str.s + i, item->u.str.s, item->u.str.len) == 0)
				return 1;
		return 0;
	default:
		tpl_fail(c, pos, "'in' needs a list, a map or a string, not a %s", vtype_name(in->t));
	}
}

static int compare(struct ctx *c, const struct expr *x, const struct value *a, const struct value *b)
{
	int cmp;

	if (x->op == OP_IN)
		return contains(c, a, b, x->pos);
	if (x->op == OP_NOT_IN)
		return !contains(c, a, b, x->pos);
	tpl_defined(c, a, x->a->pos);
	tpl_defined(c, b, x->b->pos);
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
		tpl_fail(c, x->pos,
			 "cannot compare a %s with a %s (only integer with integer, string with string; convert with '| int')",
			 vtype_name(a->t), vtype_name(b->t));
	}
	switch (x->op) {
	case OP_EQ:
		return cmp == 0;
	case OP_NE:
		return cmp != 0;
	case OP_LT:
		return cmp < 0;
	case OP_LE:
		return cmp <= 0;
	case OP_GT:
		return cmp > 0;
	default:
		return cmp >= 0; /* OP_GE */
	}
}

struct value tpl_eval(struct ctx *c, const struct expr *x)
{
	struct value a, b;

	switch (x->kind) {
	case E_CONST:
		return x->v;
	case E_NAME:
		return lookup(c, x->name, x->nlen);
	case E_ATTR:
	case E_INDEX:
		a = tpl_eval(c, x->a);
		tpl_defined(c, &a, x->a->pos);
		if (x->kind == E_ATTR) {
			struct value *v;

			/* Jinja2 gives a map's method here, not its key: refuse the
			 * difference rather than print something else */
			if (a.t == V_DICT && x->method)
				tpl_fail(c, x->pos,
					 "'.%.*s' of a map is a method in Jinja2: write ['%.*s'] for the key",
					 (int)x->nlen, x->name, (int)x->nlen, x->name);
			if (a.t == V_DICT && (v = vdict_get(a.u.dict, x->name, x->nlen)))
				return *v;
			return v_undef(arena_strndup(c->arena, x->name, x->nlen));
		}
		b = tpl_eval(c, x->b);
		tpl_defined(c, &b, x->b->pos);
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
		tpl_fail(c, x->pos, "cannot index a %s with a %s", vtype_name(a.t), vtype_name(b.t));
	case E_LIST: {
		struct value l = v_list(c->arena);

		if (l.t == V_UNDEF)
			tpl_fail(c, x->pos, "out of memory");
		for (size_t i = 0; i < x->nargs; i++) {
			a = tpl_eval(c, x->args[i]);
			tpl_defined(c, &a, x->args[i]->pos);
			if (vlist_push(c->arena, l.u.list, a))
				tpl_fail(c, x->pos, "out of memory");
		}
		return l;
	}
	case E_NOT:
		a = tpl_eval(c, x->a);
		tpl_defined(c, &a, x->a->pos);
		return v_bool(!v_truthy(&a));
	case E_NEG:
	case E_POS: {
		long long i;

		a = tpl_eval(c, x->a);
		i = want_int(c, &a, x->a->pos, x->kind == E_NEG ? "'-'" : "'+'");
		if (x->kind == E_NEG && i == -__LONG_LONG_MAX__ - 1)
			tpl_fail(c, x->pos, "integer overflow");
		return v_int(x->kind == E_NEG ? -i : i);
	}
	case E_ARITH:
		return arith(c, x);
	case E_CONCAT: {
		const char *l, *r;
		size_t ll, rl;
		char *s;

		a = tpl_eval(c, x->a);
		b = tpl_eval(c, x->b);
		l = tpl_str_of(c, &a, &ll, x->a->pos);
		r = tpl_str_of(c, &b, &rl, x->b->pos);
		s = tpl_alloc(c, ll + rl + 1);
		memcpy(s, l, ll);
		memcpy(s + ll, r, rl);
		return v_str_ref(s, ll + rl);
	}
	case E_AND:
	case E_OR:
		a = tpl_eval(c, x->a);
		tpl_defined(c, &a, x->a->pos);
		if (v_truthy(&a) == (x->kind == E_OR))
			return a;
		b = tpl_eval(c, x->b);
		tpl_defined(c, &b, x->b->pos);
		return b;
	case E_COMPARE: {
		const struct expr *y = x;

		a = tpl_eval(c, x->a);
		for (; y; y = y->chain) {
			b = tpl_eval(c, y->b);
			if (!compare(c, y, &a, &b))
				return v_bool(0);
			a = b;
		}
		return v_bool(1);
	}
	case E_TEST:
		a = tpl_eval(c, x->a);
		if (x->test == TEST_DEFINED)
			return v_bool((a.t != V_UNDEF) != x->negate);
		tpl_defined(c, &a, x->a->pos);
		return v_bool((a.t == V_NONE) != x->negate);
	case E_FILTER:
		return tpl_apply_filter(c, x);
	}
	tpl_fail(c, x->pos, "internal error: unknown expression");
}

/* ------------------------------------------------------------ rendering */

static void emit(struct ctx *c, const char *s, size_t len, size_t pos)
{
	if (c->out->len + len > OUTPUT_MAX)
		tpl_fail(c, pos, "the output is larger than %zu MiB", OUTPUT_MAX >> 20);
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
		c->scope = tpl_alloc(c, sizeof(*c->scope));
	if (vdict_set(c->arena, &c->scope->vars, name, strlen(name), v))
		tpl_fail(c, pos, "out of memory");
}

static void run_for(struct ctx *c, const struct node *n)
{
	struct value it = tpl_eval(c, n->x), loop;
	struct scope *outer = c->scope;
	size_t count;

	tpl_defined(c, &it, n->x->pos);
	if (n->items && it.t != V_DICT)
		tpl_fail(c, n->x->pos, "'.items()' needs a map, not a %s", vtype_name(it.t));
	if (it.t == V_LIST)
		count = it.u.list->n;
	else if (it.t == V_DICT)
		count = it.u.dict->n;
	else
		tpl_fail(c, n->x->pos, "cannot loop over a %s", vtype_name(it.t));
	for (size_t i = 0; i < count; i++) {
		struct scope *s = tpl_alloc(c, sizeof(*s));

		if (++c->iterations > ITERATIONS_MAX)
			tpl_fail(c, n->pos, "more than %ld loop iterations", ITERATIONS_MAX);
		s->up = outer;
		c->scope = s;
		loop = v_dict(c->arena);
		if (loop.t == V_UNDEF ||
		    vdict_set(c->arena, loop.u.dict, "index", 5, v_int((long long)i + 1)) ||
		    vdict_set(c->arena, loop.u.dict, "index0", 6, v_int((long long)i)) ||
		    vdict_set(c->arena, loop.u.dict, "first", 5, v_bool(i == 0)) ||
		    vdict_set(c->arena, loop.u.dict, "last", 4, v_bool(i + 1 == count)) ||
		    vdict_set(c->arena, loop.u.dict, "length", 6, v_int((long long)count)))
			tpl_fail(c, n->pos, "out of memory");
		set_var(c, "loop", loop, n->pos);
		if (it.t == V_LIST) {
			set_var(c, n->var1, it.u.list->item[i], n->pos);
		} else {
			struct value key = v_str_ref(it.u.dict->key[i], it.u.dict->klen[i]);

			set_var(c, n->var1, key, n->pos);
			if (n->items)
				set_var(c, n->var2, it.u.dict->val[i], n->pos);
		}
		tpl_run(c, n->body);
		c->scope = outer;
	}
}

void tpl_run(struct ctx *c, const struct node *n)
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

			if (on_sbatch_line(c) && !tpl_sbatch_ok(n->x))
				tpl_fail(c, n->pos,
					 "a value on an #SBATCH line needs '| sbatch' (sbatch reads these lines, not the shell)");
			v = tpl_eval(c, n->x);
			if (v.t == V_LIST || v.t == V_DICT)
				tpl_fail(c, n->pos, "cannot print a %s", vtype_name(v.t));
			s = tpl_str_of(c, &v, &len, n->x->pos);
			if (v.raw) {
				emit(c, s, len, n->pos);
			} else {
				size_t before = c->out->len;

				if (shell_quote(c->out, s, len))
					tpl_fail(c, n->pos, "a NUL byte cannot be in a shell word");
				if (c->out->len > OUTPUT_MAX || c->out->len < before)
					tpl_fail(c, n->pos, "the output is too large");
			}
			break;
		}
		case N_IF: {
			size_t k;

			for (k = 0; k < n->nconds; k++) {
				struct value v = tpl_eval(c, n->cond[k]);

				tpl_defined(c, &v, n->cond[k]->pos);
				if (v_truthy(&v))
					break;
			}
			tpl_run(c, n->cond_body[k]); /* k == nconds: the else body, or NULL */
			break;
		}
		case N_FOR:
			run_for(c, n);
			break;
		case N_SET: {
			struct value v = tpl_eval(c, n->x);

			tpl_defined(c, &v, n->x->pos);
			set_var(c, n->var1, v, n->pos);
			break;
		}
		}
		if (c->out->failed)
			tpl_fail(c, n->pos, "out of memory");
	}
}
