/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/site/plugstack: mad.so's line in a plugstack.conf,
 * its includes followed relative to the including file. */
#include "site/plugstack.h"
#include "unit.h"

#include <stdlib.h>
#include <sys/stat.h>

static char run_dir[] = "/tmp/mad-test-plugstack.XXXXXX";

/* NAME in the scratch folder: a file holding TEXT, or a folder (NULL). */
static void put(const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	if (!text) {
		mkdir(path, 0755);
		return;
	}
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(plugstack_lines)
{
	static struct mad_plugstack ps;
	char err[512], inc[4096];
	const char *text =
		"# site\n"
		"optional /usr/lib/x/pyxis.so\n"
		"required  /usr/lib/slurm/mad.so   run-dir=/shared/runs timeout=60 # note\n";

	CHECK(mad_plugstack_parse(text, strlen(text), "p.conf", 1, &ps, err, sizeof(err)) == 1);
	CHECK(ps.line == 3 && ps.argc == 2);
	CHECK_STR(mad_plugstack_value(&ps, "run-dir"), "/shared/runs");
	CHECK(mad_plugstack_value(&ps, "run") == NULL);
	CHECK(mad_plugstack_parse("optional madx.so run-dir=/x\n", 28, "p", 1, &ps, err,
				  sizeof(err)) == 0);
	/* include, relative to the including file */
	put("conf.d", NULL);
	put("conf.d/mad.conf", "optional mad.so run-dir=/from/include\n");
	snprintf(inc, sizeof(inc), "%s/plugstack.conf", run_dir);
	memset(&ps, 0, sizeof(ps));
	CHECK(mad_plugstack_parse("include conf.d/*.conf\n", 22, inc, 2, &ps, err, sizeof(err)) == 1);
	CHECK_STR(mad_plugstack_value(&ps, "run-dir"), "/from/include");
	CHECK(mad_plugstack_parse("include conf.d/*.conf\n", 22, inc, 0, &ps, err, sizeof(err)) == -1);
	CHECK(strstr(err, "nested") != NULL);
	CHECK(mad_plugstack_parse("include\n", 8, "p", 1, &ps, err, sizeof(err)) == -1);
	CHECK_STR(err, "p:1: 'include' takes one pattern");
}

int main(void)
{
	unit_mkdtemp(run_dir);
	RUN(plugstack_lines);
	return unit_done_in(run_dir);
}
