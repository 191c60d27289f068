/* SPDX-License-Identifier: GPL-2.0-or-later */
/* unit.h: a small TAP test runner for the C unit tests.
 * TEST(name) { CHECK(...); }  then in main: RUN(name); return unit_done(); */
#ifndef MAD_UNIT_H
#define MAD_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_count, unit_failed_tests, unit_current_failed;

#define TEST(name) static void name(void)

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			unit_current_failed = 1;                                          \
			printf("# %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                         \
	} while (0)

#define CHECK_STR(got, want)                                                         \
	do {                                                                         \
		const char *g_ = (got), *w_ = (want);                                \
		if (!g_ || strcmp(g_, w_) != 0) {                                    \
			unit_current_failed = 1;                                     \
			printf("# %s:%d: got '%s', want '%s'\n", __FILE__, __LINE__, \
			       g_ ? g_ : "(null)", w_);                              \
		}                                                                    \
	} while (0)

#define RUN(name)                                                                               \
	do {                                                                                    \
		unit_current_failed = 0;                                                        \
		name();                                                                         \
		unit_count++;                                                                   \
		unit_failed_tests += unit_current_failed;                                       \
		printf("%sok %d - %s\n", unit_current_failed ? "not " : "", unit_count, #name); \
		fflush(stdout);                                                                 \
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", unit_count, unit_count - unit_failed_tests,
	       unit_failed_tests);
	return unit_failed_tests ? 1 : 0;
}

/* For a test that writes files: DIR (a mkdtemp template) made, or exit 1. */
static inline void unit_mkdtemp(char *dir)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

/* unit_done(), with DIR and all in it removed (a failure to remove fails). */
static inline int unit_done_in(const char *dir)
{
	char cmd[4200];
	int rc = unit_done();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}

#endif
