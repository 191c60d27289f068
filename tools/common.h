/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common.h: what every tool in tools/ does the same way: its name in
 * messages, usage errors, --help and --version, exit codes, fatal errors.
 * For tools/ only: it prints and exits, which lib/ never does. */
#ifndef MAD_TOOLS_COMMON_H
#define MAD_TOOLS_COMMON_H

/* The exit codes every tool shares (sysexits.h's where it has one); a
 * tool's own (mad-wait's verdicts) are in its man page. */
enum {
	MAD_EXIT_OK = 0,
	MAD_EXIT_FAIL = 1,   /* bad input or a job that cannot run: the message says why */
	MAD_EXIT_USAGE = 64, /* EX_USAGE: a bad option or argument */
	MAD_EXIT_IO = 74,    /* EX_IOERR: a read or write error */
};

/* The name every message starts with ("mad-env"), set once by
 * mad_prog_init(), first thing in main(). */
extern const char *mad_prog;

/* Written on stdout by usage_error() and die(): mad-env's "exit 1\n", so
 * that eval "$(mad-env)" stops the job script.  NULL (the default): none. */
extern const char *mad_fail_stdout;

/* mad_prog becomes NAME, or ARGV0's last component when NAME is NULL. */
void mad_prog_init(const char *argv0, const char *name);

#if defined(__GNUC__)
#define MAD_TOOL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MAD_TOOL_PRINTF(a, b)
#endif
/* The attribute (gcc and clang), not _Noreturn: cppcheck 2.10 reads only
 * the attribute from a header, in every #if branch it tries, and would
 * take die() for a function that returns. */
#define MAD_TOOL_NORETURN __attribute__((noreturn))

/* "PROG: MESSAGE" on stderr. */
MAD_TOOL_PRINTF(1, 2) void tool_error(const char *fmt, ...);

/* "PROG: MESSAGE" and "Try 'PROG --help'." on stderr, mad_fail_stdout on
 * stdout; returns MAD_EXIT_USAGE (64), for main() to exit with:
 *	return usage_error("'%s' is not a job id", arg); */
MAD_TOOL_PRINTF(1, 2) int usage_error(const char *fmt, ...);

/* getopt_long()'s ':' (a value is missing) or '?' (unknown option), with
 * opterr = 0 and ':' first in the short options: usage_error() naming it. */
int usage_bad_option(int ch, char *const argv[]);

/* "PROG: MESSAGE" on stderr, mad_fail_stdout on stdout; exits 1. */
MAD_TOOL_PRINTF(1, 2) MAD_TOOL_NORETURN void die(const char *fmt, ...);

/* Flushes stdout: 0, or MAD_EXIT_IO with "PROG: write error: ..." said. */
int finish_output(void);

/* "mad-env (mad-spank) 0.1.0, built for SLURM 22.05.8" (PROG, package,
 * version, the SLURM release of config.h) on stdout; exits 0. */
MAD_TOOL_NORETURN void print_version(void);

/* TEXT on stdout; exits 0. */
MAD_TOOL_NORETURN void print_help(const char *text);

#endif
