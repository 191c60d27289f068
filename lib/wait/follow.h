/* SPDX-License-Identifier: GPL-2.0-or-later */
/* follow.h: streams the output files of a job's ranks as they grow, each
 * line prefixed by its rank (mad-wait --follow).  Names come from a
 * pattern in sbatch's style: %A and %j the job id, %a and %r the rank,
 * %% a percent sign; a pattern without %a/%r names one file for the job. */
#ifndef MAD_FOLLOW_H
#define MAD_FOLLOW_H

#include <stddef.h>
#include <sys/types.h>

struct strbuf;

struct mad_follow_file {
	char path[4096];
	long rank; /* -1: the job's one file */
	int fd;
	off_t off;
	char partial[4096]; /* a line not yet ended */
	size_t plen;
};

/* Expands PATTERN for JOB and RANK into OUT; 0, or -1 (ERR) on a pattern
 * too long or with an unknown %-letter. */
int mad_follow_name(const char *pattern, long job, long rank, char *out, size_t size, char *err,
		    size_t esize);
/* Whether PATTERN names one file per rank. */
int mad_follow_per_rank(const char *pattern);

void mad_follow_init(struct mad_follow_file *f, const char *path, long rank);
/* Appends to OUT what was added to the file since the last call, whole
 * lines only unless FLUSH, each prefixed "[rank N] " (or "[job J] "); the
 * tool prints OUT.  Returns the number of bytes read from the file. */
size_t mad_follow_poll(struct mad_follow_file *f, long job, struct strbuf *out, int flush);
void mad_follow_close(struct mad_follow_file *f);

#endif
