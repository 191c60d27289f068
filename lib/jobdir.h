/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jobdir.h: the job folder of one attempt, and writing files into it
 * (design.md §15).
 *
 * A job folder decides verdicts, addresses and barriers, so it is found by
 * what it is, not where: a real directory (never a symbolic link) owned by
 * the job's user, writable by no one else, holding an 'attempt' file
 * (written with the folder, which appears whole by rename) whose identity
 * (cluster, job id, restart count) is this attempt's.  Its name is <base>
 * (<job> or <job>.<restart>) when that is free, else <base>~<16 random hex
 * digits>: another user can plant any number of entries, and none of them
 * is ever taken, waited for or named twice; readers look at <base>, then
 * at every <base>~* of the user, and take the first of this identity in
 * name order.  Only the attempt's founder makes a folder (the caller says
 * which: design.md §15), so nodes that start together never split one
 * attempt between two folders; the others find it.
 *
 * The run folder is checked whole before anything in it is trusted, as
 * OpenSSH's StrictModes checks a path: every folder from / down is root's
 * or the job user's and writable by no one else unless it has the sticky
 * bit, and a symbolic link on the way is followed only if it is root's or
 * the user's (its folder passed the same check).  It is then opened once,
 * and the job folder is opened and made relative to that descriptor.
 * Every file of the job folder is then read and written relative to the
 * job folder's own descriptor (mad_write_file_at, mad_file_check, openat,
 * fdopendir on mad_dir_reopen), never by its path again: the path may name
 * another folder by then (the run folder renamed away and a look-alike put
 * in its place), and only names the folder in messages.
 *
 * An earlier job with the same id on the same cluster (a controller whose
 * state was reset, MaxJobId wrapped) has the same identity.  The batch step
 * on SLURM runs before anything else of its attempt, so it founds the
 * folder (MAD_JOBDIR_FOUND): the folders of its own identity it finds are
 * that earlier job's, and they are moved aside to
 * <name>.old.<time>.<16 random hex digits>.  mad-wait checks each file's
 * time against the job's submit time besides.
 *
 * With ERR and NOTES NULL, the functions marked so make system calls only:
 * a child forked from slurmstepd (multi-threaded) may call them. */
#ifndef MAD_JOBDIR_H
#define MAD_JOBDIR_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define MAD_JOBDIR_PATH 4200 /* a run folder (MAD_VALUE_MAX) and a job's name */
#define MAD_JOBDIR_ATTEMPT "attempt"
#define MAD_JOBDIR_RANDOM 16 /* hex digits of a name no one can plant first */

/* One attempt's folder names and identity, formatted beforehand. */
struct mad_jobdir {
	char base[MAD_JOBDIR_PATH]; /* RUN_DIR/<job>[.<restart>], for messages */
	char base_name[64];         /* <job>[.<restart>] */
	char run_dir[MAD_JOBDIR_PATH];
	char attempt[768]; /* the attempt file this attempt writes */
	size_t attempt_len;
	size_t cluster_len;  /* the first line, "cluster=NAME\n" */
	size_t identity_len; /* the first three lines: cluster, job, restart */
	int any_cluster;     /* mad-wait: the cluster is not known */
	uid_t uid;           /* the job's user */
	long not_before;     /* mad-wait: a folder made before this (the job's
				  submit time, less a slack) is an earlier job's;
				  -1: no bound (the writers, which cannot know) */
};

/* Fills D for the attempt whose folder would be RUN_DIR/BASE_NAME: the job's
 * CLUSTER (SLURM_CLUSTER_NAME; NULL: any, for a reader that cannot know
 * it), JOB (the collection id), RESTART (0 for the first attempt), UID.
 * 0, or -1 with ERR. */
int mad_jobdir_init(struct mad_jobdir *d, const char *run_dir, const char *base_name,
		    const char *cluster, long job, long restart, uid_t uid, char *err, size_t size);

/* Opens the run folder PATH (O_DIRECTORY) once its whole path passed the
 * check above for the job's user UID: the descriptor, or -1 with ERR naming
 * the folder on the way that failed and why.  System calls only when ERR is
 * NULL. */
int mad_rundir_open(const char *path, uid_t uid, char *err, size_t size);

/* Why a folder is not this attempt's. */
enum mad_jobdir_why {
	MAD_JOBDIR_OURS,
	MAD_JOBDIR_ABSENT,
	MAD_JOBDIR_LINK,          /* a symbolic link */
	MAD_JOBDIR_NOT_DIR,       /* another kind of file */
	MAD_JOBDIR_OWNER,         /* owned by another user */
	MAD_JOBDIR_MODE,          /* writable by group or others */
	MAD_JOBDIR_NO_ATTEMPT,    /* no readable attempt file of the user's */
	MAD_JOBDIR_OTHER_ATTEMPT, /* another cluster's or job's */
	MAD_JOBDIR_EARLIER,       /* made before d->not_before: an earlier job's */
	MAD_JOBDIR_ERROR,         /* cannot be looked at */
};

/* Whether NAME in the run folder RUNFD is this attempt's folder; *ST is
 * what was looked at.  With FD not NULL and the answer MAD_JOBDIR_OURS,
 * *FD is the folder, opened (the caller closes it).  System calls only. */
enum mad_jobdir_why mad_jobdir_check_at(const struct mad_jobdir *d, int runfd, const char *name,
					struct stat *st, int *fd);

/* What it is, for a message: "owned by uid 1001, not the job's user
 * (uid 1000)". */
void mad_jobdir_describe(const struct mad_jobdir *d, enum mad_jobdir_why why, const struct stat *st,
			 char *out, size_t size);

enum mad_jobdir_mode {
	MAD_JOBDIR_FIND,  /* only an existing folder of this attempt */
	MAD_JOBDIR_JOIN,  /* that, else make one: the attempt's founder */
	MAD_JOBDIR_FOUND, /* a fresh one: an earlier job's are moved aside */
};

/* Opens the attempt's folder: <base> if it is this attempt's, else the
 * first of the user's <base>~* that is (FIND, JOIN); else makes one, under
 * <base> when free, else under a fallback name (JOIN, FOUND).  The path
 * into OUT (OSIZE >= MAD_JOBDIR_PATH); with FD not NULL, the opened folder
 * into *FD (relative to the checked run folder).  Returns 0; 1 for FIND
 * when there is none (yet); -1 with ERR when the run folder is unusable or
 * the folder cannot be made.  NOTES gets what was passed over ("ignored
 * '/shared/mad/5042': owned by uid 1001, not the job's user (uid 1000)"),
 * "" when nothing.  System calls only when ERR and NOTES are NULL (then
 * FOUND is not allowed). */
int mad_jobdir_open(const struct mad_jobdir *d, enum mad_jobdir_mode mode, char *out, size_t osize,
		    int *fd, char *notes, size_t nsize, char *err, size_t size);
/* The same in the run folder RUNFD that mad_rundir_open() opened for
 * d->uid: for a reader that looks many times (mad-wait). */
int mad_jobdir_open_at(const struct mad_jobdir *d, int runfd, enum mad_jobdir_mode mode, char *out,
		       size_t osize, int *fd, char *notes, size_t nsize, char *err, size_t size);

/* FLAGS of mad_write_file(). */
enum {
	MAD_WRITE_NOSYNC = 2, /* no fsync: a file whose loss in a crash costs nothing */
};

/* Writes NAME in DIR with CONTENT atomically: a temporary file opened with
 * O_EXCL|O_NOFOLLOW, fsync (unless MAD_WRITE_NOSYNC), then rename() over
 * NAME.  Each file of a job folder has one writer per attempt, so what is
 * there already is an earlier attempt's (or the same writer's): the write
 * replaces it, and a write that cannot happen is an error, never a
 * success.  Returns 0, or -1 with ERR.  System calls only when ERR is
 * NULL. */
int mad_write_file(const char *dir, const char *name, const char *content, size_t len, int flags,
		   char *err, size_t size);
/* The same in the opened folder DIRFD; DIR names it in messages.  The
 * only way a job folder's files are written (above): mad_write_file, which
 * opens DIR by its path, is for a folder no check stands for (mad-render's
 * output). */
int mad_write_file_at(int dirfd, const char *dir, const char *name, const char *content, size_t len,
		      int flags, char *err, size_t size);

/* The folder DIRFD opened anew ("." relative to it, O_CLOEXEC): the same
 * folder, whatever its path names now, with a listing of its own from the
 * start; on NFS the open revalidates it (nfs(5), close-to-open), so a
 * listing sees what a peer wrote.  The descriptor, or -1 (errno).  System
 * calls only. */
int mad_dir_reopen(int dirfd);

/* Whether NAME in the folder DIRFD is a regular file of UID: 0; 1 when it
 * is not, WHY saying so ("a symbolic link", "owned by uid 1001, not the
 * job's user (uid 1000)"); -1 (errno, WHY) when it cannot be looked at.
 * *ST gets its lstat. */
int mad_file_check(int dirfd, const char *name, uid_t uid, struct stat *st, char *why, size_t wsize);

#endif
