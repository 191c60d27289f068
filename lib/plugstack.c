/* plugstack.c: see plugstack.h. */
#include "plugstack.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INCLUDE_DEPTH 8
#define FILE_MAX (1 << 20)

static int read_whole(const char *path, char **text, size_t *len, char *err,
		      size_t size)
{
	FILE *f = fopen(path, "re");
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, size, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	rc = sb_read(&sb, f, FILE_MAX);
	fclose(f);
	if (rc || !sb_cstr(&sb)) {
		snprintf(err, size, "cannot read '%s': %s", path,
			 rc == -2 ? "larger than 1 MiB" : strerror(errno));
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

	snprintf(ps->tried + have, sizeof(ps->tried) - have, "%s'%s'",
		 have ? ", " : "", path);
}

static int parse_file(const char *path, int depth, struct mad_plugstack *ps,
		      char *err, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	note_tried(ps, path);
	rc = read_whole(path, &text, &len, err, size);
	if (rc <= 0)
		return rc;
	rc = mad_plugstack_parse(text, len, path, depth, ps, err, size);
	free(text);
	return rc;
}

/* SLURM reads an include pattern relative to the including file's folder. */
static int include(const char *pattern, const char *file, int depth,
		   struct mad_plugstack *ps, char *err, size_t size)
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

int mad_plugstack_parse(const char *text, size_t len, const char *file,
			int depth, struct mad_plugstack *ps, char *err,
			size_t size)
{
	const char *p = text, *end = text + len;
	int lineno = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		char line[4096], *words[MAD_PLUGSTACK_ARGS + 2], *save = NULL, *w;
		size_t n = (size_t)((eol ? eol : end) - p);
		int nw = 0;

		lineno++;
		if (n >= sizeof(line)) {
			snprintf(err, size, "%s:%d: line longer than %zu bytes", file, lineno,
				 sizeof(line) - 1);
			return -1;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p = eol ? eol + 1 : end;
		if (memchr(line, '\0', n)) {
			snprintf(err, size, "%s:%d: NUL byte in the line", file, lineno);
			return -1;
		}
		if ((w = strchr(line, '#')))
			*w = '\0';
		for (w = strtok_r(line, " \t\r\f\v", &save); w;
		     w = strtok_r(NULL, " \t\r\f\v", &save)) {
			if (nw == MAD_PLUGSTACK_ARGS + 2) {
				snprintf(err, size, "%s:%d: more than %d arguments", file,
					 lineno, MAD_PLUGSTACK_ARGS);
				return -1;
			}
			words[nw++] = w;
		}
		if (nw == 0)
			continue;
		if (strcmp(words[0], "include") == 0) {
			int rc;

			if (nw != 2) {
				snprintf(err, size, "%s:%d: 'include' takes one pattern", file, lineno);
				return -1;
			}
			if (depth <= 0) {
				snprintf(err, size, "%s:%d: includes nested deeper than %d",
					 file, lineno, INCLUDE_DEPTH);
				return -1;
			}
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
		ps->argc = 0;
		for (int i = 2, off = 0; i < nw; i++) {
			size_t wl = strlen(words[i]) + 1;

			if (off + wl > sizeof(ps->buf)) {
				snprintf(err, size, "%s:%d: arguments too long", file, lineno);
				return -1;
			}
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
	rc = read_whole(conf, &text, &len, err, size);
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
		if (rc)
			return rc;
	}
	if (slurm_plugstack_path(slurm, sizeof(slurm), err, size) < 0)
		return -1;
	rc = parse_file(slurm, INCLUDE_DEPTH, ps, err, size);
	if (rc)
		return rc;
	return parse_file("/etc/spur/plugstack.conf", 0, ps, err, size);
}

const char *mad_plugstack_value(const struct mad_plugstack *ps, const char *key)
{
	size_t kl = strlen(key);

	for (int i = 0; i < ps->argc; i++)
		if (strncmp(ps->argv[i], key, kl) == 0 && ps->argv[i][kl] == '=')
			return ps->argv[i] + kl + 1;
	return NULL;
}

void mad_site_args(struct mad_plugstack *ps, const char *prog, int *ac,
		   char ***av)
{
	char err[1024];
	int rc = mad_plugstack_find(ps, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "%s: warning: %s; the site's defaults are not used\n", prog, err);
	*ac = rc == 1 ? ps->argc : 0;
	*av = rc == 1 ? ps->argv : NULL;
}
