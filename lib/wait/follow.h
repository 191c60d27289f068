/* SPDX-License-Identifier: GPL-2.0-or-later */
/* follow.h: streams the output files of a job's ranks as they grow, each
 * line prefixed by its rank (mad-wait --follow).  Names come from a
 * pattern in sbatch's style: %A and %j the job id, %a and %r the rank,
 * %% a percent sign; a pattern without %a/%r names one file for the job.
 *
 * Bounded whatever the file is (design.md §10): only a regular file is
 * read (a name that is, or links to, a device, a FIFO, a folder or a
 * socket is refused once and never opened again), a call reads at most
 * what it is told to, and a file costs at most MAD_FOLLOW_LINE_MAX bytes
 * of memory (a longer line is cut there), allocated once it has data. */
#ifndef MAD_FOLLOW_H
#define MAD_FOLLOW_H

#include <stddef.h>
#include <sys/types.h>

struct strbuf;

#define MAD_FOLLOW_LINE_MAX 4096     /* a line not yet ended is cut at this */
#define MAD_FOLLOW_CHUNK 65536       /* what the tool asks of one call */
#define MAD_FOLLOW_POLL_MAX 1048576L /* what the tool reads of a file per poll */

struct mad_follow_file {
	char *path;
	long rank; /* -1: the job's one file */
	int fd;
	int refused; /* not a regular file: never read */
	off_t off;
	char *partial; /* a line not yet ended (MAD_FOLLOW_LINE_MAX), or NULL */
	size_t plen;
};

/* Expands PATTERN for JOB and RANK into OUT; 0, or -1 (ERR) on a pattern
 * too long or with an unknown %-letter. */
int mad_follow_name(const char *pattern, long job, long rank, char *out, size_t size, char *err,
		    size_t esize);
/* Whether PATTERN names one file per rank. */
int mad_follow_per_rank(const char *pattern);

/* 0, or -1 when out of memory. */
int mad_follow_init(struct mad_follow_file *f, const char *path, long rank);
/* Appends to OUT what was added to the file since the last call, at most
 * MAX bytes of it, whole lines only unless FLUSH, each prefixed "[rank N] "
 * (or "[job J] "); the tool prints OUT.  A file that shrank (truncated,
 * written again) is read again from its start.  Returns the number of
 * bytes read (0: nothing new, or no such file yet), or -1 with ERR once,
 * when the name is not a regular file, or on a read error (the file is
 * read no more). */
ssize_t mad_follow_poll(struct mad_follow_file *f, long job, struct strbuf *out, int flush,
			size_t max, char *err, size_t esize);
/* Closes the file and frees what INIT and POLL took. */
void mad_follow_close(struct mad_follow_file *f);

#endif
