/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template-private.h: what the stages of the template engine share, private
 * to lib/render/ (the tools see template.h only): the limits, the tree the
 * parser builds, the context every stage works on, and each stage's entry
 * points.  template.c runs the stages: the lexer (template-lex.c) cuts the
 * source into text and tags and tags into tokens, the parser
 * (template-parse.c) builds the tree, resolving every name it can, and the
 * evaluator (template-eval.c, with the filters in template-filter.c) renders
 * it.  Any stage fails through tpl_fail(), which never returns. */
#ifndef MAD_TEMPLATE_PRIVATE_H
#define MAD_TEMPLATE_PRIVATE_H

#include "template.h"

#include <setjmp.h>
#include <stddef.h>
#include <string.h>

/* The bounds of a render, each reached with a message of its own: nesting
 * of blocks and parentheses, of an expression's tree, the output, and all
 * loop iterations together. */
#define DEPTH_MAX 200
#define EXPR_DEPTH_MAX 1000
#define OUTPUT_MAX ((size_t)64 << 20)
#define ITERATIONS_MAX 10000000L

/* ------------------------------------------------------------ the tree */

/* What the parser resolves names and operators to, so that evaluation
 * never compares a name again. */
enum op {
	OP_NONE, /* ~, and, or: their kind says it all */
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_FLOORDIV,
	OP_MOD,
	OP_EQ,
	OP_NE,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_IN,
	OP_NOT_IN,
};

enum test { TEST_DEFINED, TEST_NONE };

enum filter_id {
	F_DEFAULT,
	F_D,
	F_INT,
	F_STRING,
	F_LOWER,
	F_UPPER,
	F_TRIM,
	F_LENGTH,
	F_COUNT,
	F_JOIN,
	F_REPLACE,
	F_FIRST,
	F_LAST,
	F_BASENAME,
	F_DIRNAME,
	F_RAW,
	F_SBATCH,
	F_ENVNAME,
	F_UNKNOWN, /* and the number of filters */
};

#define FILTER_ARGS_MAX 2

enum ekind {
	E_CONST,
	E_NAME,
	E_ATTR,
	E_INDEX,
	E_LIST,
	E_NOT,
	E_NEG,
	E_POS,
	E_ARITH,
	E_CONCAT,
	E_AND,
	E_OR,
	E_COMPARE,
	E_TEST,
	E_FILTER,
};

struct expr {
	enum ekind kind;
	size_t pos;
	struct value v;   /* E_CONST */
	const char *name; /* E_NAME, E_ATTR, E_FILTER, E_TEST, as written */
	size_t nlen;
	enum op op;            /* E_ARITH, E_COMPARE */
	enum test test;        /* E_TEST */
	enum filter_id filter; /* E_FILTER */
	int method;            /* E_ATTR: the name of a method of Python's dict */
	struct expr *a, *b;    /* operands; E_COMPARE: a op b, chained through next */
	struct expr **args;    /* E_LIST items, E_FILTER arguments */
	size_t nargs;
	int negate;         /* E_TEST "is not" */
	int depth;          /* of the tree below: evaluation recurses that deep */
	struct expr *chain; /* E_COMPARE: the next comparison (b op chain->b) */
};

enum nkind { N_TEXT, N_OUT, N_IF, N_FOR, N_SET };

struct node {
	enum nkind kind;
	size_t pos;
	size_t b, e;             /* N_TEXT */
	struct expr *x;          /* N_OUT, N_SET value, N_FOR iterable */
	struct node **cond_body; /* N_IF: a body per condition, then the else body */
	struct expr **cond;
	size_t nconds;
	struct node *body;       /* N_FOR */
	const char *var1, *var2; /* N_FOR targets, N_SET name */
	int items;               /* N_FOR over .items() */
	struct node *next;
};

/* ------------------------------------------------------------ context */

enum tkind { TK_TEXT, TK_OUT, TK_BLOCK, TK_COMMENT };

struct tok {
	enum tkind kind;
	size_t b, e; /* text, or the inside of the tag */
	size_t pos;  /* where the tag starts */
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

/* ------------------------------------------------------------ tokens */

enum xkind { X_END, X_NAME, X_INT, X_STR, X_OP };

struct xtok {
	enum xkind kind;
	size_t b, e; /* in src */
	size_t pos;
};

/* ------------------------------------------------------------ entry points */

/* template.c: the message and place of the error at POS, then a longjmp to
 * mad_render(); and arena memory, or that error. */
__attribute__((format(printf, 3, 4), noreturn)) void tpl_fail(struct ctx *c, size_t pos,
							      const char *fmt, ...);
void *tpl_alloc(struct ctx *c, size_t size);

/* Python's and Jinja2's ASCII white space; inline, as the lexer asks it of
 * nearly every byte of the template. */
static inline int tpl_is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* template-lex.c: the source cut into c->toks, Jinja2's whitespace rules
 * applied; the expression tokenizer over src[c->xpos, c->xe). */
void tpl_cut(struct ctx *c);
void tpl_trim(struct ctx *c);
struct xtok tpl_xpeek(struct ctx *c);
struct xtok tpl_xnext(struct ctx *c);
/* Whether T is the operator or name S: inline, as the parser asks it of
 * nearly every token, several times. */
static inline int tpl_xis(const struct ctx *c, struct xtok t, const char *s)
{
	size_t n = strlen(s);

	return (t.kind == X_OP || t.kind == X_NAME) && t.e - t.b == n &&
	       memcmp(c->src + t.b, s, n) == 0;
}
/* Takes the token S if it is next. */
int tpl_xaccept(struct ctx *c, const char *s);
/* Takes the token S, or fails naming what is there instead. */
void tpl_xexpect(struct ctx *c, const char *s);

/* template-parse.c: the tree of all of c->toks. */
struct node *tpl_parse(struct ctx *c);

/* template-eval.c: the value of X; N and the nodes after it rendered into
 * c->out; failing unless V is defined; V as text, or failing. */
struct value tpl_eval(struct ctx *c, const struct expr *x);
void tpl_run(struct ctx *c, const struct node *n);
void tpl_defined(struct ctx *c, const struct value *v, size_t pos);
const char *tpl_str_of(struct ctx *c, const struct value *v, size_t *len, size_t pos);

/* template-filter.c: the filter called NAME (F_UNKNOWN: none); the value of
 * the filter expression X; whether X's value may stand on an #SBATCH line
 * as it is. */
enum filter_id tpl_filter_named(const char *name, size_t len);
struct value tpl_apply_filter(struct ctx *c, const struct expr *x);
int tpl_sbatch_ok(const struct expr *x);

#endif
