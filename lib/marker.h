/* marker.h: completion markers (SPEC §8): MAD_JOB_DIR/done_rank<N>, first
 * line the decimal exit status, then key=value lines; and the count of
 * markers a job will leave, in MAD_JOB_DIR/expected. */
#ifndef MAD_MARKER_H
#define MAD_MARKER_H

#include <stddef.h>

/* Formats a marker into BUF; returns its length (0 if it does not fit). */
size_t mad_marker_format(char *buf, size_t size, int status, long rank,
			 const char *host, long job_id, const char *error);
/* done_rank<RANK> into NAME. */
void mad_marker_name(char *name, size_t size, long rank);
/* step<STEP>_rank<RANK> into NAME: the marker of one task of an srun step
 * in nodes fan-out, written by the plugin's task_exit (SPEC §8).  Safe in
 * a forked child, as mad_marker_name(). */
void mad_step_marker_name(char *name, size_t size, long step, long rank);
/* Writes the marker (once; an existing one is kept).  Safe in a forked
 * child: system calls only.  0 or -errno. */
int mad_marker_write(const char *job_dir, long rank, const char *content,
		     size_t len);
/* Records how many markers to expect. */
int mad_expected_write(const char *job_dir, long count, char *err, size_t size);
/* Reads a marker's text: 1 complete (*STATUS, *TIME or -1, HOST, NOTE from
 * error=), 0 empty, -1 not a marker (NOTE says why). */
int mad_marker_parse(const char *text, size_t len, long *status, long *time,
		     char *host, size_t hsize, char *note, size_t nsize);

#endif
