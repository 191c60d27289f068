/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ready.h: readiness markers (doc/design.md §13).  A job that serves
 * (vLLM, SGLang, a Ray head) is ready long before it is done: once its
 * health check answers, a rank runs `mad-mark --ready ENDPOINT`, which
 * leaves MAD_JOB_DIR/ready_rank<N>: first line the endpoint, then
 * rank=, host=, job= and time= lines, written once and atomically as a
 * completion marker is.  Rank 0's makes the job ready for
 * `mad-wait --ready`.  Rules as in lib/wait/wait.h. */
#ifndef MAD_READY_H
#define MAD_READY_H

#include <stddef.h>

/* The longest endpoint a ready marker carries. */
#define MAD_ENDPOINT_MAX 1024

/* 0 when ENDPOINT can be recorded: 1 to MAD_ENDPOINT_MAX-1 printable
 * ASCII bytes (no space, no control byte: one word a client can take
 * as is); else -1 with ERR naming it. */
int mad_ready_check(const char *endpoint, char *err, size_t size);

/* ready_rank<RANK> into NAME (room for 32 bytes). */
void mad_ready_name(char *name, size_t size, long rank);

/* Formats the marker into BUF; its length, 0 when it does not fit. */
size_t mad_ready_format(char *buf, size_t size, const char *endpoint, long rank, const char *host,
			long job_id, long time);

/* Formats and writes rank RANK's ready marker in the job folder DIRFD
 * (as opened and checked, jobdir.h; JOB_DIR, its path, for messages) with
 * this node's host name and the time now, once and atomically
 * (mad_write_file_at), as whoever calls: the job's user.  0, or -1 with
 * ERR. */
int mad_ready_leave(int dirfd, const char *job_dir, long rank, long job_id, const char *endpoint,
		    char *err, size_t size);

/* Reads a ready marker's TEXT: 1 complete (ENDPOINT, HOST, *TIME or -1),
 * 0 empty (mid-write by a writer that is not atomic), -1 not a ready
 * marker (ERR says why). */
int mad_ready_parse(const char *text, size_t len, char *endpoint, size_t esize, char *host,
		    size_t hsize, long *time, char *err, size_t size);

#endif
