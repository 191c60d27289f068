/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/jobdir (the job folder of one attempt, design.md §15)
 * and lib/child (the writers' shared wait), in scratch folders: a folder is
 * used only if it is a real directory of the job's user, writable by no
 * one else, with this attempt's identity; anything else is passed over and
 * named, and the attempt takes the next name; the founder moves an earlier
 * job's folder aside; a write replaces what an earlier attempt left. */
#include "child.h"
#include "clock.h"
#include "jobdir.h"
#include "unit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[2048], notes[4096];

static char *scratch(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/mad-jobdir-XXXXXX");
	return mkdtemp(dir);
}

static void cleanup(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

static int init(struct mad_jobdir *d, const char *run, const char *cluster, long job, uid_t uid)
{
	char name[32];

	snprintf(name, sizeof(name), "%ld", job);
	return mad_jobdir_init(d, run, name, cluster, job, 0, uid, err, sizeof(err));
}

TEST(names_and_identity)
{
	struct mad_jobdir d;
	char path[MAD_JOBDIR_PATH];

	CHECK(mad_jobdir_init(&d, "/shared/mad", "5042.1", "alpha", 5042, 1, 1000, err,
			      sizeof(err)) == 0);
	mad_jobdir_name(&d, 0, path);
	CHECK_STR(path, "/shared/mad/5042.1");
	mad_jobdir_name(&d, 3, path);
	CHECK_STR(path, "/shared/mad/5042.1~3");
	{
		const char *want = "cluster=alpha\njob=5042\nrestart=1\nuid=1000\ncreated=";

		CHECK(strncmp(d.attempt, want, strlen(want)) == 0);
	}
	CHECK(d.identity_len == strlen("cluster=alpha\njob=5042\nrestart=1\n"));
	/* the cluster name goes into a line of a file */
	CHECK(mad_jobdir_init(&d, "/shared/mad", "1", "a\nb", 1, 0, 1000, err, sizeof(err)) == -1);
	CHECK(strstr(err, "SLURM_CLUSTER_NAME") != NULL);
}

TEST(join_makes_a_whole_private_folder_then_finds_it)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], file[MAD_JOBDIR_PATH + 16], text[1024];
	struct mad_jobdir d;
	struct stat st;

	CHECK(init(&d, run, "alpha", 7, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), notes, sizeof(notes), err,
			      sizeof(err)) == 1);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), notes, sizeof(notes), err,
			      sizeof(err)) == 0);
	CHECK_STR(path, d.base);
	CHECK_STR(notes, "");
	CHECK(lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & 022));
	snprintf(file, sizeof(file), "%s/attempt", path);
	slurp(file, text, sizeof(text));
	CHECK(strncmp(text, d.attempt, d.identity_len) == 0);
	/* a second node of the attempt, and a reader, find the same */
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), notes, sizeof(notes), err,
			      sizeof(err)) == 0);
	CHECK_STR(path, d.base);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL, 0, NULL, 0) == 0);
	CHECK_STR(path, d.base);
	cleanup(run);
}

TEST(a_planted_link_a_writable_folder_and_a_foreign_one_are_passed_over)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], other[MAD_JOBDIR_PATH + 16];
	struct mad_jobdir d;

	CHECK(init(&d, run, "alpha", 8, getuid()) == 0);
	/* name 0: a link into a folder of someone else's choosing */
	snprintf(other, sizeof(other), "%s/elsewhere", run);
	CHECK(mkdir(other, 0755) == 0);
	CHECK(symlink(other, d.base) == 0);
	/* name 1: a folder anyone can write */
	mad_jobdir_name(&d, 1, path);
	CHECK(mkdir(path, 0755) == 0 && chmod(path, 0777) == 0);
	/* name 2: not a folder */
	mad_jobdir_name(&d, 2, path);
	put(path, "not a folder");
	/* name 3: no attempt file (an older release's, or anyone's) */
	mad_jobdir_name(&d, 3, path);
	CHECK(mkdir(path, 0755) == 0);
	/* name 4: another cluster's */
	mad_jobdir_name(&d, 4, path);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(other, sizeof(other), "%s/attempt", path);
	put(other, "cluster=beta\njob=8\nrestart=0\nuid=0\ncreated=1\nhost=x\n");
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), notes, sizeof(notes), err,
			      sizeof(err)) == 0);
	mad_jobdir_name(&d, 5, other);
	CHECK_STR(path, other);
	CHECK(strstr(notes, "a symbolic link") != NULL);
	CHECK(strstr(notes, "writable by group or others (mode 0777)") != NULL);
	CHECK(strstr(notes, "not a directory") != NULL);
	CHECK(strstr(notes, "no attempt file") != NULL);
	CHECK(strstr(notes, "another attempt's folder") != NULL);
	CHECK(strstr(notes, "ignored '") != NULL);
	/* nothing was written through the link */
	snprintf(other, sizeof(other), "%s/elsewhere/attempt", run);
	CHECK(access(other, F_OK) != 0);
	/* every node walks the same names to the same folder */
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, other, sizeof(other), NULL, 0, NULL, 0) == 0);
	CHECK_STR(other, path);
	cleanup(run);
}

TEST(another_users_folder_is_not_the_jobs)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], what[256];
	struct mad_jobdir d, stranger;
	struct stat st;

	/* made by us: to a job whose user is another uid, a stranger's */
	CHECK(init(&d, run, "alpha", 13, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err, sizeof(err)) == 0);
	CHECK(init(&stranger, run, "alpha", 13, getuid() + 1) == 0);
	CHECK(mad_jobdir_check(&stranger, path, &st) == MAD_JOBDIR_OWNER);
	mad_jobdir_describe(&stranger, MAD_JOBDIR_OWNER, &st, what, sizeof(what));
	CHECK(strstr(what, "not the job's user") != NULL);
	CHECK(mad_jobdir_open(&stranger, MAD_JOBDIR_FIND, path, sizeof(path), notes, sizeof(notes),
			      err, sizeof(err)) == 1);
	CHECK(strstr(notes, "ignored '") != NULL && strstr(notes, "owned by uid") != NULL);
	cleanup(run);
}

TEST(a_planted_entry_that_vanishes_does_not_split_the_attempt)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], first[MAD_JOBDIR_PATH];
	struct mad_jobdir d;

	CHECK(init(&d, run, "alpha", 14, getuid()) == 0);
	CHECK(symlink("/", d.base) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, first, sizeof(first), NULL, 0, err, sizeof(err)) ==
	      0);
	CHECK(strstr(first, "/14~1") != NULL);
	/* its owner removes it: the other nodes, later writers and readers
	 * still meet in the attempt's folder, not a new one at the first name */
	CHECK(unlink(d.base) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, NULL, 0) == 0);
	CHECK_STR(path, first);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL, 0, NULL, 0) == 0);
	CHECK_STR(path, first);
	CHECK(access(d.base, F_OK) != 0);
	cleanup(run);
}

TEST(a_shared_run_folder_must_be_roots_or_the_users)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH];
	struct mad_jobdir d;

	CHECK(chmod(run, 01777) == 0);
	/* the owner of a 1777 folder may rename anything in it */
	CHECK(init(&d, run, "", 15, getuid() + 1) == 0);
	if (getuid() != 0) {
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err,
				      sizeof(err)) == -1);
		CHECK(strstr(err, "must be root's") != NULL);
	} else {
		CHECK(chown(run, 4242, 4242) == 0);
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err,
				      sizeof(err)) == -1);
		CHECK(strstr(err, "owned by uid 4242") != NULL && strstr(err, "must be root's") != NULL);
		CHECK(chown(run, 0, 0) == 0);
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL, 0, err,
				      sizeof(err)) == 1);
	}
	cleanup(run);
}

TEST(a_reader_that_cannot_know_the_cluster_takes_any)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH];
	struct mad_jobdir d, any;

	CHECK(init(&d, run, "alpha", 9, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err, sizeof(err)) == 0);
	CHECK(init(&any, run, NULL, 9, getuid()) == 0);
	CHECK(mad_jobdir_check(&any, path, &(struct stat){ 0 }) == MAD_JOBDIR_OURS);
	CHECK(init(&any, run, NULL, 90, getuid()) == 0);
	mad_jobdir_name(&any, 0, path);
	CHECK(rename(d.base, path) == 0);
	CHECK(mad_jobdir_check(&any, path, &(struct stat){ 0 }) == MAD_JOBDIR_OTHER_ATTEMPT);
	cleanup(run);
}

TEST(the_founder_moves_an_earlier_jobs_folder_aside)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], file[MAD_JOBDIR_PATH + 16], text[64];
	struct mad_jobdir d;

	CHECK(init(&d, run, "alpha", 10, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err, sizeof(err)) == 0);
	snprintf(file, sizeof(file), "%s/done_rank0", path);
	put(file, "0\n");
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FOUND, path, sizeof(path), notes, sizeof(notes), err,
			      sizeof(err)) == 0);
	CHECK_STR(path, d.base);
	CHECK(access(file, F_OK) != 0); /* the earlier job's marker is not in the new folder */
	CHECK(strstr(notes, "an earlier job's with the same id") != NULL);
	CHECK(strstr(notes, ".old.") != NULL);
	/* later writers of the attempt join the founder's folder */
	put(file, "1\n");
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err, sizeof(err)) == 0);
	slurp(file, text, sizeof(text));
	CHECK_STR(text, "1\n");
	cleanup(run);
}

TEST(a_run_folder_others_may_write_needs_the_sticky_bit)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH];
	struct mad_jobdir d;

	CHECK(init(&d, run, "", 11, getuid()) == 0);
	CHECK(chmod(run, 0777) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err, sizeof(err)) ==
	      -1);
	CHECK(strstr(err, "without the sticky bit (mode 0777)") != NULL);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, NULL, 0) == -1);
	CHECK(chmod(run, 01777) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, 0, err, sizeof(err)) == 0);
	cleanup(run);
}

TEST(every_name_taken_is_an_error_naming_them)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH];
	struct mad_jobdir d;

	CHECK(init(&d, run, "", 12, getuid()) == 0);
	for (int k = 0; k < MAD_JOBDIR_NAMES; k++) {
		mad_jobdir_name(&d, k, path);
		CHECK(symlink("/", path) == 0);
	}
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), notes, sizeof(notes), err,
			      sizeof(err)) == -1);
	CHECK(strstr(err, "no usable job folder") != NULL);
	CHECK(strstr(err, "~7") != NULL && strstr(err, "a symbolic link") != NULL);
	cleanup(run);
}

TEST(a_write_replaces_an_earlier_attempts_file)
{
	char *run = scratch(), file[128], text[64];
	struct stat st;
	int dirfd;

	snprintf(file, sizeof(file), "%s/done_rank0", run);
	put(file, "0\nstale\n");
	CHECK(mad_write_file(run, "done_rank0", "1\n", 2, 0, err, sizeof(err)) == 0);
	slurp(file, text, sizeof(text));
	CHECK_STR(text, "1\n");
	dirfd = open(run, O_RDONLY | O_DIRECTORY);
	CHECK(mad_file_check(dirfd, "done_rank0", getuid(), &st, err, sizeof(err)) == 0);
	CHECK(mad_file_check(dirfd, "done_rank0", getuid() + 1, &st, err, sizeof(err)) == 1);
	CHECK(strstr(err, "not the job's user") != NULL);
	snprintf(file, sizeof(file), "%s/done_rank1", run);
	CHECK(symlink("done_rank0", file) == 0);
	CHECK(mad_file_check(dirfd, "done_rank1", getuid(), &st, err, sizeof(err)) == 1);
	CHECK_STR(err, "a symbolic link");
	CHECK(mad_file_check(dirfd, "done_rank9", getuid(), &st, err, sizeof(err)) == -1);
	/* a write over a planted link replaces the link, never writes through it */
	CHECK(mad_write_file(run, "done_rank1", "2\n", 2, 0, err, sizeof(err)) == 0);
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));
	snprintf(file, sizeof(file), "%s/done_rank0", run);
	slurp(file, text, sizeof(text));
	CHECK_STR(text, "1\n");
	close(dirfd);
	cleanup(run);
}

TEST(writers_share_one_bounded_wait)
{
	struct mad_child_budget budget = { 300000 };
	double t0 = mad_monotonic();
	int status = 0;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(3);
	CHECK(mad_child_reap(pid, &budget, &status) == 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	CHECK(budget.left_us > 0);
	/* a hung writer spends the rest, then is killed */
	for (int i = 0; i < 4; i++) {
		pid = fork();
		if (pid == 0) {
			pause();
			_exit(0);
		}
		CHECK(mad_child_reap(pid, &budget, &status) == 1);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		CHECK(budget.left_us == 0);
	}
	/* four hung writers cost the budget once, not four times */
	CHECK(mad_monotonic() - t0 < 0.3 + 0.25);
}

int main(void)
{
	RUN(names_and_identity);
	RUN(join_makes_a_whole_private_folder_then_finds_it);
	RUN(a_planted_link_a_writable_folder_and_a_foreign_one_are_passed_over);
	RUN(another_users_folder_is_not_the_jobs);
	RUN(a_planted_entry_that_vanishes_does_not_split_the_attempt);
	RUN(a_shared_run_folder_must_be_roots_or_the_users);
	RUN(a_reader_that_cannot_know_the_cluster_takes_any);
	RUN(the_founder_moves_an_earlier_jobs_folder_aside);
	RUN(a_run_folder_others_may_write_needs_the_sticky_bit);
	RUN(every_name_taken_is_an_error_naming_them);
	RUN(a_write_replaces_an_earlier_attempts_file);
	RUN(writers_share_one_bounded_wait);
	return unit_done();
}
