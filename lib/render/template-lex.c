/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template-lex.c: the template's lexer: the source cut into text and tags,
 * Jinja2's whitespace rules applied to the text around the tags, and the
 * tokens of the expressions inside them. */
#include "template-private.h"

#include <ctype.h>
#include <string.h>

/* ------------------------------------------------------------ text and tags */

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
	tpl_fail(c, pos, "'%s' is never closed", close == '}' ? "{{" : "{%");
}

static void push_tok(struct ctx *c, struct tok t, size_t *cap)
{
	if (c->ntoks == *cap) {
		struct tok *n = tpl_alloc(c, (*cap ? *cap * 2 : 64) * sizeof(*n));

		if (c->ntoks)
			memcpy(n, c->toks, c->ntoks * sizeof(*n));
		c->toks = n;
		*cap = *cap ? *cap * 2 : 64;
	}
	c->toks[c->ntoks++] = t;
}

void tpl_cut(struct ctx *c)
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
				tpl_fail(c, i, "'{#' is never closed");
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
void tpl_trim(struct ctx *c)
{
	for (size_t k = 0; k < c->ntoks; k++) {
		struct tok *t = &c->toks[k];
		struct tok *prev = k > 0 && c->toks[k - 1].kind == TK_TEXT ? &c->toks[k - 1] : NULL;
		struct tok *next =
			k + 1 < c->ntoks && c->toks[k + 1].kind == TK_TEXT ? &c->toks[k + 1] : NULL;
		int block = t->kind == TK_BLOCK || t->kind == TK_COMMENT;

		if (t->kind == TK_TEXT)
			continue;
		if (prev && t->strip_left) {
			while (prev->e > prev->b && tpl_is_space(c->src[prev->e - 1]))
				prev->e--;
		} else if (block && !t->keep_left) {
			/* only spaces and tabs between the line's start and the tag */
			size_t s = t->pos;

			while (s > 0 && c->src[s - 1] != '\n' && tpl_is_space(c->src[s - 1]))
				s--;
			if (s == 0 || c->src[s - 1] == '\n') {
				if (prev && prev->e > s && prev->b <= s)
					prev->e = s;
			}
		}
		if (next && t->strip_right) {
			while (next->b < next->e && tpl_is_space(c->src[next->b]))
				next->b++;
		} else if (next && block && !t->keep_right && next->b < next->e &&
			   c->src[next->b] == '\n') {
			next->b++;
		}
	}
}

/* ------------------------------------------------------------ expression tokens */

struct xtok tpl_xpeek(struct ctx *c)
{
	struct xtok t = { X_END, 0, 0, 0 };
	size_t i = c->xpos;
	static const char *const ops[] = {
		"==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%",
		"~",  "|",  ".",  ",",  "(",  ")",  "[", "]", "=", "{", "}", ":",
	};

	while (i < c->xe && tpl_is_space(c->src[i]))
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
		if (i < c->xe && c->src[i] == '.' && i + 1 < c->xe &&
		    isdigit((unsigned char)c->src[i + 1]))
			tpl_fail(c, t.pos, "floating point numbers are not supported");
		t.kind = X_INT;
	} else if (c->src[i] == '\'' || c->src[i] == '"') {
		char q = c->src[i++];

		while (i < c->xe && c->src[i] != q)
			i += c->src[i] == '\\' ? 2 : 1;
		if (i >= c->xe)
			tpl_fail(c, t.pos, "unterminated string");
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
		tpl_fail(c, t.pos, "unexpected character '%c'", c->src[i]);
	}
	t.e = i;
	return t;
}

struct xtok tpl_xnext(struct ctx *c)
{
	struct xtok t = tpl_xpeek(c);

	c->xpos = t.e;
	return t;
}

int tpl_xaccept(struct ctx *c, const char *s)
{
	struct xtok t = tpl_xpeek(c);

	if (!tpl_xis(c, t, s))
		return 0;
	c->xpos = t.e;
	return 1;
}

void tpl_xexpect(struct ctx *c, const char *s)
{
	struct xtok t = tpl_xpeek(c);

	if (!tpl_xaccept(c, s)) {
		if (t.kind == X_END)
			tpl_fail(c, t.pos, "expected '%s', found the end of the tag", s);
		tpl_fail(c, t.pos, "expected '%s', found '%.*s'", s, (int)(t.e - t.b), c->src + t.b);
	}
}
