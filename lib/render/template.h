/* SPDX-License-Identifier: GPL-2.0-or-later */
/* template.h: renders a job-script template, a documented subset of Jinja2
 * (design.md §12, doc/mad-render.1), safely for the shell: every {{ }} is one
 * shell word unless an explicit filter says otherwise (raw, sbatch,
 * envname).  Anything outside the subset is an error at file:line:column,
 * never a silent difference from Jinja2.
 *
 * lib/render/ (template, value, dataload) is mad-render's library.  Its
 * rules:
 * - Who links it: the tools only (mad-render, and the fuzz target of its
 *   parsers), through libmad.la; never mad.so, which runs inside SLURM's
 *   and spur's root daemons (libmad-plugin.la leaves this folder out).  It
 *   uses the core's strbuf and shquote, and the core never uses it.
 * - Errors: mad_render() returns 0, or -1 with *ERR filled (the line and
 *   column, the message, the template's line for a caret); inside, an error
 *   unwinds with longjmp to mad_render(), which frees the one arena that
 *   every allocation of the render lives in.
 * - Never: prints, exits or aborts; reads a file or the environment (the
 *   tool reads them and hands over bytes and a map); keeps state in a
 *   global; grows without a bound (output size, loop iterations and nesting
 *   are capped, each with its own message). */
#ifndef MAD_TEMPLATE_H
#define MAD_TEMPLATE_H

#include "error.h"
#include "value.h"

#include <stddef.h>

struct strbuf;

struct mad_render_error {
	int line, col; /* 1-based; 0 when not about a place */
	char msg[MAD_ERR_MAX];
	char text[512]; /* the template line, for a caret under COL */
};

/* Renders SRC (LEN bytes) with DATA (a map) into OUT.  0, or -1 with ERR. */
int mad_render(const char *src, size_t len, const struct value *data, struct strbuf *out,
	       struct mad_render_error *err);

#endif
