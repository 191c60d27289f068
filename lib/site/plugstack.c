/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plugstack.c: see plugstack.h. */
#include "plugstack.h"
#include "error.h"
#include "strbuf.h"
#include "version.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INCLUDE_DEPTH 8
#define FILE_MAX (1 << 20)
#define PLUGIN_MAX (64 << 20)

/* At most MAX bytes of PATH into *TEXT: 1, 0 when there is no such file,
 * -1 with ERR. */
static int read_whole(const char *path, size_t max, char **text, size_t *len, char *err, size_t size)
{
	FILE *f = fopen(path, "re");
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		mad_error(err, size, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	rc = sb_read(&sb, f, max);
	fclose(f);
	if (rc || !sb_cstr(&sb)) {
		if (rc == -2)
			mad_error(err, size, "cannot read '%s': larger than %zu MiB", path, max >> 20);
		else
			mad_error(err, size, "cannot read '%s': %s", path, strerror(errno));
		sb_free(&sb);
		return -1;
	}
	*text = (char *)sb_cstr(&sb);
	*len = sb.len;
	return 1;
}

static void note_tried(struct mad_plugstack *ps, const char *path)
{
	size_t have = strlen(ps->tried);

	snprintf(ps->tried + have, sizeof(ps->tried) - have, "%s'%s'", have ? ", " : "", path);
}

static int parse_file(const char *path, int depth, struct mad_plugstack *ps, char *err, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	note_tried(ps, path);
	rc = read_whole(path, FILE_MAX, &text, &len, err, size);
	if (rc <= 0)
		return rc;
	rc = mad_plugstack_parse(text, len, path, depth, ps, err, size);
	free(text);
	return rc;
}

/* SLURM reads an include pattern relative to the including file's folder. */
static int include(const char *pattern, const char *file, int depth, struct mad_plugstack *ps,
		   char *err, size_t size)
{
	char full[4096];
	const char *slash = strrchr(file, '/');
	glob_t g;
	int rc = 0;

	if (*pattern == '/' || !slash)
		snprintf(full, sizeof(full), "%s", pattern);
	else
		snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - file), file, pattern);
	if (glob(full, 0, NULL, &g) != 0)
		return 0; /* nothing matches: SLURM accepts that too */
	for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
		rc = parse_file(g.gl_pathv[i], depth - 1, ps, err, size);
	globfree(&g);
	return rc;
}

static int is_mad(const char *path)
{
	const char *base = strrchr(path, '/');

	return strcmp(base ? base + 1 : path, "mad.so") == 0;
}

int mad_plugstack_parse(const char *text, size_t len, const char *file, int depth,
			struct mad_plugstack *ps, char *err, size_t size)
{
	const char *p = text, *end = text + len;
	int lineno = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		char line[4096], *words[MAD_PLUGSTACK_ARGS + 2], *save = NULL, *w;
		size_t n = (size_t)((eol ? eol : end) - p);
		int nw = 0, gap;

		lineno++;
		if (n >= sizeof(line))
			return mad_error(err, size, "%s:%d: line longer than %zu bytes", file,
					 lineno, sizeof(line) - 1);
		memcpy(line, p, n);
		line[n] = '\0';
		p = eol ? eol + 1 : end;
		if (memchr(line, '\0', n))
			return mad_error(err, size, "%s:%d: NUL byte in the line", file, lineno);
		if ((w = strchr(line, '#')))
			*w = '\0';
		/* spur trims the line, then splits it with splitn(3, whitespace)
		 * (crates/spur-spank/src/lib.rs, parse_plugstack): a second blank
		 * after the first word makes the path "", dlopen("") returns spurd
		 * itself, and the plugin is silently absent.  SLURM reads the line
		 * as we do below. */
		w = line + strspn(line, " \t\r\f\v");
		w += strcspn(w, " \t\r\f\v");
		gap = w[0] && isspace((unsigned char)w[1]);
		for (w = strtok_r(line, " \t\r\f\v", &save); w; w = strtok_r(NULL, " \t\r\f\v", &save)) {
			if (nw == MAD_PLUGSTACK_ARGS + 2)
				return mad_error(err, size, "%s:%d: more than %d arguments", file,
						 lineno, MAD_PLUGSTACK_ARGS);
			words[nw++] = w;
		}
		if (nw == 0)
			continue;
		if (strcmp(words[0], "include") == 0) {
			int rc;

			if (nw != 2)
				return mad_error(err, size, "%s:%d: 'include' takes one pattern",
						 file, lineno);
			if (depth <= 0)
				return mad_error(err, size, "%s:%d: includes nested deeper than %d",
						 file, lineno, INCLUDE_DEPTH);
			rc = include(words[1], file, depth, ps, err, size);
			if (rc)
				return rc;
			continue;
		}
		if (nw < 2 || (strcmp(words[0], "required") && strcmp(words[0], "optional")) ||
		    !is_mad(words[1]))
			continue; /* another plugin's line, or one SLURM will report */
		snprintf(ps->file, sizeof(ps->file), "%s", file);
		ps->line = lineno;
		snprintf(ps->so, sizeof(ps->so), "%s", words[1]);
		ps->spur_empty_path = gap;
		ps->argc = 0;
		for (int i = 2, off = 0; i < nw; i++) {
			size_t wl = strlen(words[i]) + 1;

			if (off + wl > sizeof(ps->buf))
				return mad_error(err, size, "%s:%d: arguments too long", file, lineno);
			memcpy(ps->buf + off, words[i], wl);
			ps->argv[ps->argc++] = ps->buf + off;
			off += (int)wl;
		}
		return 1;
	}
	return 0;
}

/* PlugStackConfig= in slurm.conf, else plugstack.conf beside it. */
static int slurm_plugstack_path(char *out, size_t outsize, char *err, size_t size)
{
	const char *conf = getenv("SLURM_CONF");
	const char *slash;
	char *text = NULL, *line, *save = NULL;
	size_t len;
	int rc;

	if (!conf || !*conf)
		conf = "/etc/slurm/slurm.conf";
	slash = strrchr(conf, '/');
	if (slash)
		snprintf(out, outsize, "%.*s/plugstack.conf", (int)(slash - conf), conf);
	else
		snprintf(out, outsize, "plugstack.conf");
	rc = read_whole(conf, FILE_MAX, &text, &len, err, size);
	if (rc <= 0)
		return rc;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v, *e;

		while (isspace((unsigned char)*line))
			line++;
		if (strncasecmp(line, "PlugStackConfig", 15) != 0)
			continue;
		v = line + 15;
		while (isspace((unsigned char)*v))
			v++;
		if (*v++ != '=')
			continue;
		while (isspace((unsigned char)*v))
			v++;
		for (e = v; *e && *e != '#' && !isspace((unsigned char)*e); e++)
			;
		*e = '\0';
		if (*v)
			snprintf(out, outsize, "%s", v);
	}
	free(text);
	return 1;
}

int mad_plugstack_find(struct mad_plugstack *ps, char *err, size_t size)
{
	const char *spur = getenv("SPUR_PLUGSTACK");
	char slurm[4096];
	int rc;

	memset(ps, 0, sizeof(*ps));
	if (spur && *spur) {
		rc = parse_file(spur, 0, ps, err, size); /* spur has no includes */
		ps->spur_file = rc == 1;
		if (rc)
			return rc;
	}
	if (slurm_plugstack_path(slurm, sizeof(slurm), err, size) < 0)
		return -1;
	rc = parse_file(slurm, INCLUDE_DEPTH, ps, err, size);
	if (rc)
		return rc;
	rc = parse_file("/etc/spur/plugstack.conf", 0, ps, err, size);
	ps->spur_file = rc == 1;
	return rc;
}

int mad_plugin_built_for(const char *so, char *version, size_t vsize, char *err, size_t size)
{
	static const char tag[] = MAD_BUILT_FOR;
	char *text = NULL;
	const char *at;
	size_t len = 0, n;
	int rc = read_whole(so, PLUGIN_MAX, &text, &len, err, size);

	if (rc <= 0)
		return rc == 0 ? -2 : -1;
	at = memmem(text, len, tag, sizeof(tag) - 1);
	rc = 0;
	if (at) {
		at += sizeof(tag) - 1;
		n = strspn(at, "0123456789.");
		if (n && n < vsize) {
			memcpy(version, at, n);
			version[n] = '\0';
			rc = 1;
		}
	}
	free(text);
	return rc;
}

/* "24.11.7" and "24.11.1" are one release for a plugin; "24.05.1" is not. */
static int same_major_minor(const char *a, const char *b)
{
	const char *da = strchr(a, '.'), *db = strchr(b, '.');
	size_t la, lb;

	if (!da || !db)
		return 0;
	la = (size_t)(da - a) + 1 + strcspn(da + 1, ".");
	lb = (size_t)(db - b) + 1 + strcspn(db + 1, ".");
	return la == lb && strncmp(a, b, la) == 0;
}

void mad_plugin_absent_reason(const struct mad_plugstack *ps, int found, const char *running,
			      char *why, size_t size)
{
	char built[64], err[MAD_ERR_MAX];
	int rc;

	if (found != 1) {
		snprintf(why, size, "no plugstack line loads mad.so here (looked in %s)",
			 *ps->tried ? ps->tried : "no file");
		return;
	}
	if (ps->spur_file && ps->spur_empty_path) {
		snprintf(why, size,
			 "%s:%d has two blanks before the path: spur splits the line at single "
			 "blanks, reads an empty path, and dlopen(\"\") is spurd itself, so mad.so "
			 "is silently absent; put one blank after 'required'/'optional' and "
			 "restart spurd",
			 ps->file, ps->line);
		return;
	}
	rc = mad_plugin_built_for(ps->so, built, sizeof(built), err, sizeof(err));
	if (rc == -2) {
		snprintf(why, size,
			 "mad.so is not installed on this node: %s:%d names '%s', "
			 "which does not exist here",
			 ps->file, ps->line, ps->so);
	} else if (rc < 0) {
		snprintf(why, size, "%s (named in %s:%d)", err, ps->file, ps->line);
	} else if (rc == 0) {
		snprintf(why, size,
			 "'%s' (%s:%d) does not say which SLURM release it was "
			 "built for (a build older than that record?)",
			 ps->so, ps->file, ps->line);
	} else if (!running) {
		snprintf(why, size,
			 "'%s' (%s:%d) is there, built for SLURM %s; see the "
			 "node daemon's log for why it did not load",
			 ps->so, ps->file, ps->line, built);
	} else if (!*running) {
		snprintf(why, size,
			 "'%s' (%s:%d) was built for SLURM %s and the release "
			 "running here is unknown: SLURM loads a plugin only into the "
			 "major.minor it was built for",
			 ps->so, ps->file, ps->line, built);
	} else if (!same_major_minor(built, running)) {
		snprintf(why, size,
			 "'%s' (%s:%d) was built for SLURM %s, and this job runs "
			 "under SLURM %s: SLURM loads a plugin only into the major.minor it "
			 "was built for, and skips a mismatched optional one with one info "
			 "line in the slurmd log (\"Incompatible Slurm plugin\"); rebuild "
			 "mad.so against %s (configure --with-slurm=PREFIX)",
			 ps->so, ps->file, ps->line, built, running, running);
	} else {
		snprintf(why, size,
			 "'%s' (%s:%d) is there and built for SLURM %s, the "
			 "release running here; see this node's slurmd log for why it did "
			 "not load",
			 ps->so, ps->file, ps->line, built);
	}
}

const char *mad_plugstack_value(const struct mad_plugstack *ps, const char *key)
{
	size_t kl = strlen(key);

	for (int i = 0; i < ps->argc; i++)
		if (strncmp(ps->argv[i], key, kl) == 0 && ps->argv[i][kl] == '=')
			return ps->argv[i] + kl + 1;
	return NULL;
}

int mad_site_args(struct mad_plugstack *ps, int *ac, char ***av, char *err, size_t size)
{
	char why[MAD_ERR_MAX];
	int rc = mad_plugstack_find(ps, why, sizeof(why));

	*ac = rc == 1 ? ps->argc : 0;
	*av = rc == 1 ? ps->argv : NULL;
	if (rc < 0)
		return mad_error(err, size, "%s; the site's defaults are not used", why);
	return 0;
}
