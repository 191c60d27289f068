/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common.c: see common.h. */
#include "config.h"

#include "common.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mad_prog = PACKAGE_NAME;
const char *mad_fail_stdout;

void mad_prog_init(const char *argv0, const char *name)
{
	const char *slash;

	if (name)
		mad_prog = name;
	else if (argv0 && *argv0)
		mad_prog = (slash = strrchr(argv0, '/')) ? slash + 1 : argv0;
}

MAD_TOOL_PRINTF(1, 0) static void say(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", mad_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void fail_stdout(void)
{
	if (mad_fail_stdout)
		fputs(mad_fail_stdout, stdout);
}

void tool_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", mad_prog);
	fail_stdout();
	return MAD_EXIT_USAGE;
}

int usage_bad_option(int ch, char *const argv[])
{
	/* getopt_long has stepped past the option it refuses */
	const char *arg = optind > 0 ? argv[optind - 1] : "";

	if (ch == ':')
		return usage_error("option '%s' needs a value", arg);
	return usage_error("unknown option '%s'", arg);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	fail_stdout();
	exit(MAD_EXIT_FAIL);
}

int finish_output(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		tool_error("write error: %s", strerror(errno));
		return MAD_EXIT_IO;
	}
	return MAD_EXIT_OK;
}

void print_version(void)
{
	printf("%s (%s) %s%s%s\n", mad_prog, PACKAGE_NAME, PACKAGE_VERSION, MAD_BUILT_FOR,
	       MAD_SLURM_VERSION);
	exit(finish_output());
}

void print_help(const char *text)
{
	fputs(text, stdout);
	exit(finish_output());
}
