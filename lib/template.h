/* template.h: renders a job-script template, a documented subset of Jinja2
 * (SPEC §10, doc/mad-render.1), safely for the shell: every {{ }} is one
 * shell word unless an explicit filter says otherwise (raw, sbatch,
 * envname).  Anything outside the subset is an error at file:line:column,
 * never a silent difference from Jinja2. */
#ifndef MAD_TEMPLATE_H
#define MAD_TEMPLATE_H

#include "value.h"

#include <stddef.h>

struct strbuf;

struct mad_render_error {
	int line, col;          /* 1-based; 0 when not about a place */
	char msg[1024];
	char text[512];         /* the template line, for a caret under COL */
};

/* Renders SRC (LEN bytes) with DATA (a map) into OUT.  0, or -1 with ERR. */
int mad_render(const char *src, size_t len, const struct value *data,
	       struct strbuf *out, struct mad_render_error *err);

#endif
