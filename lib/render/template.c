/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template.c: see template.h.  Three stages: the source is cut into text
 * and tags (with Jinja2's trim_blocks, lstrip_blocks and '-' whitespace
 * control), the tags are parsed into a tree, and the tree is evaluated;
 * each stage has its file, behind template-private.h.  Errors unwind with
 * longjmp to mad_render(): everything lives in one arena freed there, so
 * nothing leaks on the way out. */
#include "template-private.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void tpl_fail(struct ctx *c, size_t pos, const char *fmt, ...)
{
	va_list ap;

	where(c, pos, c->err);
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	longjmp(c->fail, 1);
}

void *tpl_alloc(struct ctx *c, size_t size)
{
	void *p = arena_alloc(c->arena, size);

	if (!p)
		tpl_fail(c, 0, "out of memory");
	return p;
}

/* Everything that may fail, behind one setjmp (no local of the caller
 * lives across it). */
static int render_guarded(struct ctx *c)
{
	struct node *tree;
	const char *nul;

	if (setjmp(c->fail))
		return -1;
	/* Jinja2 reads \r\n and \r as \n */
	if (memchr(c->src, '\r', c->len)) {
		char *n = tpl_alloc(c, c->len + 1);
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
		tpl_fail(c, (size_t)(nul - c->src), "a NUL byte in the template");
	tpl_cut(c);
	tpl_trim(c);
	tree = tpl_parse(c);
	c->scope = NULL;
	tpl_run(c, tree);
	return 0;
}

int mad_render(const char *src, size_t len, const struct value *data, struct strbuf *out,
	       struct mad_render_error *err)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int rc;

	memset(err, 0, sizeof(*err));
	if (!c || !(c->arena = arena_new())) {
		free(c);
		return mad_error(err->msg, sizeof(err->msg), "out of memory");
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
