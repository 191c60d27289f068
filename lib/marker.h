/* SPDX-License-Identifier: GPL-2.0-or-later */
/* marker.h: completion markers (design.md §10): MAD_JOB_DIR/done_rank<N>, first
 * line the decimal exit status, then key=value lines; and the count of
 * markers a job will leave, in MAD_JOB_DIR/expected.  Every file is read
 * and written relative to DIRFD, the job folder as it was opened and
 * checked (jobdir.h), never by its path again; JOB_DIR, its path, only
 * names it in messages. */
#ifndef MAD_MARKER_H
#define MAD_MARKER_H

#include <stddef.h>

/* Formats the marker of RANK into BUF: STATUS, this node's host name, JOB_ID,
 * the time now, ERROR (may be NULL) and STEPD, the slurmstepd whose task
 * could not start (-1: none).  Returns its length (0 if it does not fit).
 * Not for a forked child: the child writes what the parent formatted, with
 * mad_marker_write(). */
size_t mad_marker_format(char *buf, size_t size, int status, long rank, long job_id,
			 const char *error, long stepd);
/* PREFIX<RANK> into NAME ("done_rank12"; PREFIX at most 11 bytes, NAME at
 * least 32).  Safe in a forked child: no call but strlen and memcpy. */
void mad_rank_file_name(char *name, size_t size, const char *prefix, long rank);
/* done_rank<RANK> into NAME. */
void mad_marker_name(char *name, size_t size, long rank);
/* step<STEP>_rank<RANK> into NAME: the marker of one task of an srun step
 * in nodes fan-out, written by the plugin's task_exit (design.md §10).  Safe in
 * a forked child, as mad_marker_name(). */
void mad_step_marker_name(char *name, size_t size, long step, long rank);
/* Writes the marker in DIRFD (replacing an earlier attempt's): 0, or -1
 * with ERR.  With ERR NULL, safe in a forked child: system calls only. */
int mad_marker_write(int dirfd, const char *job_dir, long rank, const char *content, size_t len,
		     char *err, size_t size);
/* Whether marker NAME in the job folder DIRFD records why a task of job JOB_ID could not
 * start (an error= line, written by the plugin's task_init in the task of
 * the slurmstepd STEPD): that step's task_exit then keeps it instead of
 * writing the bare status over it.  An earlier job's with the same id
 * (another slurmstepd) is replaced.  Safe in a forked child: system calls
 * and byte compares only. */
int mad_marker_failure_recorded(int dirfd, const char *name, long job_id, long stepd);
/* Formats and writes the marker of RANK in DIRFD (mad_marker_format,
 * mad_marker_write), as whoever calls: the job's user.  0, or -1 with ERR. */
int mad_marker_leave(int dirfd, const char *job_dir, long rank, long job_id, int status,
		     const char *error, long stepd, char *err, size_t size);
/* script_rank<RANK> into NAME. */
void mad_script_name(char *name, size_t size, long rank);
/* script_rank<RANK> says the job script started on node RANK (its host,
 * the time, the run's key): mad-env writes it as the script starts
 * (run.h).  spur runs a script that launches steps on its first node only,
 * the others hold (design.md §10): mad-wait then expects no marker of a
 * node that never wrote it. */
/* Writes the job folder's 'expected' file: COUNT, how many markers mad-wait
 * waits for, and the time.  As the job's user, in the attempt's opened
 * folder DIRFD (jobdir.h).  0, or -1 with ERR. */
int mad_expected_write(int dirfd, const char *job_dir, long count, char *err, size_t size);
/* Reads a marker's text: 1 complete (*STATUS, *TIME or -1, HOST, NOTE from
 * error=), 0 empty, -1 not a marker (NOTE says why). */
int mad_marker_parse(const char *text, size_t len, long *status, long *time, char *host,
		     size_t hsize, char *note, size_t nsize);

#endif
