/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-render [-c FILE]... [-D KEY=VALUE]... [-o OUT] TEMPLATE: renders a
 * job-script template (a Jinja2 subset, doc/mad-render.1) with every value
 * one shell word.  The output is written whole or not at all. */
#include "config.h"

#include "common.h"
#include "error.h"
#include "render/dataload.h"
#include "render/template.h"
#include "render/value.h"
#include "jobdir.h"
#include "strbuf.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INPUT_MAX (16u << 20)

static const char usage[] =
	"Usage: mad-render [-c FILE.yaml|FILE.json]... [-D KEY=VALUE]... [-o OUT] TEMPLATE\n"
	"Render a job-script template (a Jinja2 subset); every {{ }} is one shell word.\n"
	"\n"
	"  -c, --config FILE    data: YAML (every value a string) or JSON (.json); later\n"
	"                       files replace earlier top-level keys\n"
	"  -D, --define K=V     one more value (a string); K may be dotted (a.b=v)\n"
	"  -o, --output FILE    write FILE atomically instead of stdout\n"
	"  -h, --help, -V, --version\n";

/* Reads PATH ("-": stdin) whole into *BUF (NUL-terminated, malloc'd). */
static int slurp(const char *path, char **buf, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!f) {
		tool_error("cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	rc = sb_read(&sb, f, INPUT_MAX);
	if (f != stdin)
		fclose(f);
	if (rc || !sb_cstr(&sb)) {
		if (rc == -2)
			tool_error("'%s' is larger than %u MiB", path, INPUT_MAX >> 20);
		else
			tool_error("cannot read '%s': %s", path, strerror(errno));
		sb_free(&sb);
		return -1;
	}
	*buf = (char *)sb_cstr(&sb);
	*len = sb.len;
	return 0;
}

/* Writes PATH whole or not at all: the same atomic write as the job
 * folder's files (a temporary file beside it, fsync, rename). */
static int write_atomic(const char *path, const char *data, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], err[4400];
	int rc;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	rc = mad_write_file(dir, slash ? slash + 1 : path, data, len, 0, err, sizeof(err));
	if (rc)
		tool_error("%s", err);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "define", required_argument, NULL, 'D' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct arena *a = arena_new();
	struct value data;
	struct strbuf out = STRBUF_INIT;
	struct mad_render_error rerr;
	const char *output = NULL, *tpath;
	char err[MAD_ERR_MAX], *text = NULL;
	char **defs = calloc((size_t)argc, sizeof(char *));
	size_t len, ndefs = 0;
	int opt, rc = 1;

	mad_prog_init(argv[0], "mad-render");
	if (!a || !defs || (data = v_dict(a)).t == V_UNDEF)
		die("out of memory");
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:D:o:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (slurp(optarg, &text, &len))
				goto done;
			if (mad_data_load(a, &data, optarg, text, len, err, sizeof(err))) {
				tool_error("%s", err);
				goto done;
			}
			free(text);
			text = NULL;
			break;
		case 'D':
			defs[ndefs++] = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			print_help(usage);
		case 'V':
			print_version();
		default:
			rc = usage_bad_option(opt, argv);
			goto done;
		}
	}
	if (optind != argc - 1) {
		const char *why = optind >= argc ? "no template given" : "more than one template given";

		rc = usage_error("%s", why);
		goto done;
	}
	for (size_t i = 0; i < ndefs; i++)
		if (mad_data_define(a, &data, defs[i], err, sizeof(err))) {
			tool_error("%s", err);
			rc = MAD_EXIT_USAGE;
			goto done;
		}
	tpath = argv[optind];
	if (slurp(tpath, &text, &len))
		goto done;
	if (mad_render(text, len, &data, &out, &rerr)) {
		if (rerr.line) {
			tool_error("%s:%d:%d: %s\n  %s\n  %*s^", tpath, rerr.line, rerr.col,
				   rerr.msg, rerr.text, rerr.col - 1, "");
		} else {
			tool_error("%s: %s", tpath, rerr.msg);
		}
		goto done;
	}
	if (!sb_cstr(&out)) {
		tool_error("out of memory");
		goto done;
	}
	if (output) {
		rc = write_atomic(output, out.buf, out.len) ? 1 : 0;
	} else {
		fwrite(out.buf, 1, out.len, stdout);
		rc = finish_output() ? MAD_EXIT_FAIL : MAD_EXIT_OK;
	}
done:
	free(text);
	free(defs);
	sb_free(&out);
	arena_free(a);
	return rc;
}
