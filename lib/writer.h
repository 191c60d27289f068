/* SPDX-License-Identifier: GPL-2.0-or-later */
/* writer.h: the completion markers' writer (design.md §10).  mad.so formats
 * a step's markers in slurmstepd (root) and hands them, with the attempt's
 * job folder and the job's user, to a writer that drops to that user before
 * it touches the folder: the program mad-writer (plugin/writer.c), started
 * by posix_spawn with the request on its standard input, or a fork of
 * slurmstepd where the program cannot serve.  Both check the request with
 * mad_writer_check() and carry it out with mad_writer_run(): one code, two
 * ways in (mad_writer_serve()).  Rules:
 *  - a request is bytes one build writes and reads: its header names the
 *    build's version and the layout's size, so a mad-writer installed over
 *    a running slurmstepd's older mad.so refuses it (MAD_WRITER_OTHER_BUILD)
 *    and that mad.so writes by a fork instead;
 *  - checking and running make system calls only and allocate nothing
 *    (safe in a fork of a multi-threaded slurmstepd); the request is read
 *    in place, so it must be 8-byte aligned (malloc's memory is);
 *  - nothing is touched as root: every id is dropped first, and the
 *    folder is the attempt's own (jobdir.h), opened once. */
#ifndef MAD_WRITER_H
#define MAD_WRITER_H

#include "jobdir.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MAD_WRITER_MARKERS_MAX 4096 /* markers one request carries */
#define MAD_WRITER_GIDS_MAX 65536   /* NGROUPS_MAX on Linux */
#define MAD_WRITER_NAME_MAX 64
#define MAD_WRITER_CONTENT_MAX 1024
/* The most a request can be: its head (the folder, the ids: less than the
 * folder and 256 bytes), the groups, the markers. */
#define MAD_WRITER_REQUEST_MAX                                                   \
	(sizeof(struct mad_jobdir) + 256 + MAD_WRITER_GIDS_MAX * sizeof(gid_t) + \
	 MAD_WRITER_MARKERS_MAX * sizeof(struct mad_writer_marker))

/* One marker, formatted: a file NAME in the job folder and its CONTENT. */
struct mad_writer_marker {
	char name[MAD_WRITER_NAME_MAX];
	uint32_t len;
	char content[MAD_WRITER_CONTENT_MAX];
};

/* Who writes where, and how. */
struct mad_writer_job {
	struct mad_jobdir dir; /* the attempt's folder; dir.uid is the writer's */
	uid_t uid;
	gid_t gid;
	const gid_t *gids; /* the job's supplementary groups (NGIDS of them), */
	int ngids;         /* through which a run folder may be writable */
	int flags;         /* MAD_WRITE_* (jobdir.h) */
	long job_id;       /* >= 0: a marker recording why a task of this job */
	long stepd;        /* and of the slurmstepd STEPD could not start stays */
};

/* The writer's exit status: what went wrong, for mad.so's message
 * (mad_writer_strerror()).  Away from 126..255, which a shell, the dynamic
 * loader (127: a library missing) and a death by signal give: a status
 * that is none of these says the program did not run this build's code,
 * and mad.so has its fork write the request instead. */
enum {
	MAD_WRITER_OK = 0,
	MAD_WRITER_OTHER_BUILD = 80, /* a request of another build (version, layout) */
	MAD_WRITER_BAD_REQUEST,      /* a malformed request */
	MAD_WRITER_NO_DROP,          /* dropping privileges failed */
	MAD_WRITER_NO_DIR,           /* no job folder of this attempt can be opened */
	MAD_WRITER_NO_WRITE,         /* a marker cannot be written (the others were) */
};

/* What the writer's exit status CODE says, for a message; NULL when CODE
 * is none of the statuses above. */
const char *mad_writer_strerror(int code);

/* The bytes of a request for J and N markers (N <= MAD_WRITER_MARKERS_MAX,
 * J->ngids <= MAD_WRITER_GIDS_MAX), or 0 when it cannot be one. */
size_t mad_writer_request_size(const struct mad_writer_job *j, int n);

/* Encodes J and the N markers M into BUF, of mad_writer_request_size()
 * bytes. */
void mad_writer_encode(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n,
		       void *buf);

/* Checks the request BUF of LEN bytes and reads it in place: 0 with *J
 * (its gids pointing into BUF), *M and *N; -2 with WHY (NULL: none) when it
 * is another build's (MAD_WRITER_OTHER_BUILD), -1 when it is malformed.
 * Rejects another build's request, a size that is not the request's own, a
 * folder or name that is not a plain one, a user who is not the folder's. */
int mad_writer_check(const void *buf, size_t len, struct mad_writer_job *j,
		     const struct mad_writer_marker **m, int *n, char *why, size_t wsize);

/* Carries out a checked request as the job's user: drops every id (keeping
 * the job's groups), opens the attempt's folder (MAD_JOBDIR_JOIN) and
 * writes each marker in it.  Returns the exit status above, with WHY (NULL:
 * none, and system calls only) for a failure.  For a process of its own
 * (the program, or a fork): its ids stay dropped. */
int mad_writer_run(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n,
		   char *why, size_t wsize);

/* The writer's whole work, the program's and the fork's: checks the
 * request BUF of LEN bytes and carries it out.  Returns the exit status
 * above, with WHY (NULL: none) for a failure. */
int mad_writer_serve(const void *buf, size_t len, char *why, size_t wsize);

/* Whether the program at PATH can be started without a wait no budget
 * bounds, and trusted as root: a posix_spawn parent resumes only once its
 * child has exec'd, and an exec from a network file system whose server
 * hangs would hold it.  1 when every mount PATH's lookup may cross is of
 * a local file system by /proc/self/mountinfo, asked before PATH is looked
 * up (for a dynamic build, those of the dynamic loader and the C library
 * too: mad_writer_libs_local()), and PATH and every folder above it are
 * root's and writable by no one else; else 0 with WHY.  PATH is taken as
 * it is written: a symbolic link on the way is refused. */
int mad_writer_spawnable(const char *path, char *why, size_t wsize);

/* Whether every mount of the mount table MOUNTINFO (/proc/self/mountinfo's
 * format, LEN bytes) whose mount point holds PATH is of a local file
 * system: those a lookup of PATH crosses, and any one hidden under them
 * (refused all the same: the table does not say which one is on top).
 * 1; 0 with the type of the first one that is not into TYPE ("unreadable"
 * for a type that does not read); -1 when no line holds PATH. */
int mad_writer_mount_local(const char *mountinfo, size_t len, const char *path, char *type,
			   size_t tsize);

/* Whether the dynamic loader this process started with and its C library
 * are on local file systems by MOUNTINFO, each by the path an exec looks
 * up (the main program's PT_INTERP, the name the loader found the library
 * under) and by the path the kernel gives its mapping in /proc/self/maps
 * (where a link such as usrmerge's /lib64 leads, found with no lookup):
 * a dynamic mad-writer execs the same two.  1 (also for a static process,
 * which has no loader), else 0 with WHY. */
int mad_writer_libs_local(const char *mountinfo, size_t len, char *why, size_t wsize);

#endif
