/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for mad-render's parsers: the template language, and
 * the YAML and JSON data loaders.  The first byte picks: a template
 * rendered with fixed data, a YAML file, a JSON file, or both (template,
 * then data after a "\n%%%\n" line).  Beyond "no crash, no leak", it checks
 * the promises: a failed render names a line and column inside the input
 * and a message; a rendered output never holds a NUL. */
#include "render/dataload.h"
#include "render/template.h"
#include "render/value.h"
#include "strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

static const char fixed_yaml[] =
	"name: \"a b\"\nnodes: 4\nlist: [x, \"y z\", \"$(id)\"]\nmap: {A: 1, B: two}\nempty: \"\"\n";

static void render(struct arena *a, struct value *d, const char *t, size_t len)
{
	struct strbuf out = STRBUF_INIT;
	struct mad_render_error err;
	size_t lines = 1;

	for (size_t i = 0; i < len; i++)
		lines += t[i] == '\n' || t[i] == '\r'; /* \r alone is a newline too */
	if (mad_render(t, len, d, &out, &err) == 0) {
		check(!out.len || memchr(out.buf, '\0', out.len) == NULL);
	} else {
		check(err.msg[0] != '\0');
		check(err.line == 0 || (err.line >= 1 && (size_t)err.line <= lines && err.col >= 1));
	}
	sb_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	const char *in = (const char *)bytes + 1, *sep;
	size_t len = size ? size - 1 : 0;
	struct arena *a;
	struct value d;
	char err[512];

	if (size == 0 || size > 65536)
		return 0;
	a = arena_new();
	if (!a)
		return 0;
	d = v_dict(a);
	check(d.t == V_DICT);
	switch (bytes[0] % 4) {
	case 0:
		check(mad_data_load(a, &d, "fixed.yaml", fixed_yaml, sizeof(fixed_yaml) - 1, err,
				    sizeof(err)) == 0);
		render(a, &d, in, len);
		break;
	case 1:
		if (mad_data_load(a, &d, "f.yaml", in, len, err, sizeof(err)))
			check(strncmp(err, "f.yaml:", 7) == 0);
		break;
	case 2:
		if (mad_data_load(a, &d, "f.json", in, len, err, sizeof(err)))
			check(strncmp(err, "f.json", 6) == 0);
		break;
	default:
		sep = memmem(in, len, "\n%%%\n", 5);
		if (sep && mad_data_load(a, &d, "f.yaml", sep + 5, len - (size_t)(sep + 5 - in),
					 err, sizeof(err)) == 0)
			render(a, &d, in, (size_t)(sep - in));
		break;
	}
	arena_free(a);
	return 0;
}
