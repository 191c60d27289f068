/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prune.h: removing old job folders from a run folder (mad-wait --prune,
 * design.md §15).  A run folder grows by a folder per job; only folders
 * that are job folders are removed: named as the writers name them
 * (<id>[.<restart>][~<16 hex>], an earlier job's <name>.old.<time>.<16 hex>
 * or a maker's leftover <name>.new.<16 hex>), real directories (never a
 * link), the caller's (root: anyone's), holding regular files only, with
 * an attempt file (but a leftover), nothing in them written for AGE.
 * Whether the job is gone is the caller's to ask (squeue).  Everything is
 * done through the run folder's descriptor, so a link never leads out of
 * it. */
#ifndef MAD_PRUNE_H
#define MAD_PRUNE_H

#include <stddef.h>
#include <sys/types.h>

struct mad_prune_folder {
	char name[128];
	long job;    /* the job (array job) id its name starts with */
	long newest; /* the newest write time of the folder or a file in it */
};

/* The job folders of the run folder RUNFD that CALLER may remove and in
 * which nothing was written since NOT_AFTER, into *OUT (malloc'd, *N of
 * them).  0, or -1 with ERR. */
int mad_prune_list(int runfd, uid_t caller, long not_after, struct mad_prune_folder **out,
		   size_t *n, char *err, size_t size);

/* Removes the job folder NAME of RUNFD and its files, without following a
 * link; DIR names the run folder in messages.  0, or -1 with ERR. */
int mad_prune_remove(int runfd, const char *dir, const char *name, char *err, size_t size);

/* Whether NAME is named as the writers name a job folder: its job id, or
 * -1.  *LEFTOVER: a maker's temporary folder, which may lack an attempt
 * file. */
long mad_prune_job_name(const char *name, int *leftover);

#endif
