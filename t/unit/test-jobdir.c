/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/jobdir (the job folder of one attempt, design.md §15)
 * and lib/child (the writers' shared wait), in scratch folders: a folder is
 * used only if it is a real directory of the job's user, writable by no
 * one else, with this attempt's identity; anything else is passed over and
 * named, and the attempt takes a name no one can plant; nodes that start
 * together meet in one folder; the run folder's whole path is checked; the
 * founder moves an earlier job's folder aside; a write replaces what an
 * earlier attempt left. */
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
#include <sys/wait.h>
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

/* Whether PATH is this attempt's folder (D's). */
static enum mad_jobdir_why check(const struct mad_jobdir *d, const char *path)
{
	struct stat st;
	const char *slash = strrchr(path, '/');
	char dir[MAD_JOBDIR_PATH];
	enum mad_jobdir_why why;
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	why = mad_jobdir_check_at(d, fd, slash + 1, &st, NULL);
	close(fd);
	return why;
}

/* A fallback name of D's: <base>~ and 16 hex digits. */
static int is_fallback(const struct mad_jobdir *d, const char *path)
{
	size_t n = strlen(d->base);

	return strncmp(path, d->base, n) == 0 && path[n] == '~' && strlen(path + n + 1) == 16 &&
	       strspn(path + n + 1, "0123456789abcdef") == 16;
}

TEST(names_and_identity)
{
	struct mad_jobdir d;

	CHECK(mad_jobdir_init(&d, "/shared/mad", "5042.1", "alpha", 5042, 1, 1000, err,
			      sizeof(err)) == 0);
	CHECK_STR(d.base, "/shared/mad/5042.1");
	CHECK_STR(d.base_name, "5042.1");
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
	int fd = -1;

	CHECK(init(&d, run, "alpha", 7, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL, notes, sizeof(notes),
			      err, sizeof(err)) == 1);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), &fd, notes, sizeof(notes),
			      err, sizeof(err)) == 0);
	CHECK_STR(path, d.base);
	CHECK_STR(notes, "");
	/* the descriptor is the folder */
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & 022));
	close(fd);
	snprintf(file, sizeof(file), "%s/attempt", path);
	slurp(file, text, sizeof(text));
	CHECK(strncmp(text, d.attempt, d.identity_len) == 0);
	/* a second node of the attempt, and a reader, find the same */
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, notes, sizeof(notes),
			      err, sizeof(err)) == 0);
	CHECK_STR(path, d.base);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL, NULL, 0, NULL, 0) == 0);
	CHECK_STR(path, d.base);
	cleanup(run);
}

TEST(a_planted_link_a_writable_folder_and_a_foreign_one_are_passed_over)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], other[MAD_JOBDIR_PATH + 64];
	struct mad_jobdir d;

	CHECK(init(&d, run, "alpha", 8, getuid()) == 0);
	/* <base>: a link into a folder of someone else's choosing */
	snprintf(other, sizeof(other), "%s/elsewhere", run);
	CHECK(mkdir(other, 0755) == 0);
	CHECK(symlink(other, d.base) == 0);
	/* fallback names planted: a folder anyone can write, a file, a
	 * folder without attempt file, another cluster's */
	snprintf(other, sizeof(other), "%s~0000000000000001", d.base);
	CHECK(mkdir(other, 0755) == 0 && chmod(other, 0777) == 0);
	snprintf(other, sizeof(other), "%s~0000000000000002", d.base);
	put(other, "not a folder");
	snprintf(other, sizeof(other), "%s~0000000000000003", d.base);
	CHECK(mkdir(other, 0755) == 0);
	snprintf(other, sizeof(other), "%s~0000000000000004", d.base);
	CHECK(mkdir(other, 0755) == 0);
	strcat(other, "/attempt");
	put(other, "cluster=beta\njob=8\nrestart=0\nuid=0\ncreated=1\nhost=x\n");
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, notes, sizeof(notes),
			      err, sizeof(err)) == 0);
	CHECK(is_fallback(&d, path));
	CHECK(strstr(notes, "a symbolic link") != NULL);
	CHECK(strstr(notes, "writable by group or others (mode 0777)") != NULL);
	CHECK(strstr(notes, "not a directory") != NULL);
	CHECK(strstr(notes, "no attempt file") != NULL);
	CHECK(strstr(notes, "another attempt's folder") != NULL);
	CHECK(strstr(notes, "ignored '") != NULL);
	/* nothing was written through the link */
	snprintf(other, sizeof(other), "%s/elsewhere/attempt", run);
	CHECK(access(other, F_OK) != 0);
	/* every node and reader finds the same folder */
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, other, sizeof(other), NULL, NULL, 0, NULL, 0) == 0);
	CHECK_STR(other, path);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, other, sizeof(other), NULL, NULL, 0, NULL, 0) == 0);
	CHECK_STR(other, path);
	cleanup(run);
}

TEST(any_number_of_planted_names_never_blocks_a_job)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], name[MAD_JOBDIR_PATH + 64];
	struct mad_jobdir d;

	/* the next 100 ids, <base> and 20 fallback-like names each */
	for (long id = 100; id < 200; id++) {
		snprintf(name, sizeof(name), "%s/%ld", run, id);
		put(name, "");
		for (int k = 0; k < 20; k++) {
			snprintf(name, sizeof(name), "%s/%ld~%016x", run, id, k);
			put(name, "");
		}
	}
	for (long id = 100; id < 200; id += 33) {
		CHECK(init(&d, run, "", id, getuid()) == 0);
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, notes,
				      sizeof(notes), err, sizeof(err)) == 0);
		CHECK(is_fallback(&d, path));
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, name, sizeof(name), NULL, NULL, 0, NULL,
				      0) == 0);
		CHECK_STR(name, path);
	}
	cleanup(run);
}

TEST(another_users_folder_is_not_the_jobs)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], what[256];
	struct mad_jobdir d, stranger;
	struct stat st;

	/* made by us: to a job whose user is another uid, a stranger's */
	CHECK(init(&d, run, "alpha", 13, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == 0);
	CHECK(init(&stranger, run, "alpha", 13, getuid() + 1) == 0);
	CHECK(check(&stranger, path) == MAD_JOBDIR_OWNER);
	CHECK(lstat(path, &st) == 0);
	mad_jobdir_describe(&stranger, MAD_JOBDIR_OWNER, &st, what, sizeof(what));
	CHECK(strstr(what, "not the job's user") != NULL);
	if (getuid() == 0) {
		/* only root can make a folder the run folder's path trusts for uid+1 */
		CHECK(mad_jobdir_open(&stranger, MAD_JOBDIR_FIND, path, sizeof(path), NULL, notes,
				      sizeof(notes), err, sizeof(err)) == 1);
		CHECK(strstr(notes, "ignored '") != NULL && strstr(notes, "owned by uid") != NULL);
	}
	cleanup(run);
}

/* Forks N writers of one attempt that open its folder at once (the first
 * founds it, the others find it) while CHURN, if set, plants and removes
 * an entry at <base> as another user; 1 when all met in one folder. */
static int start_together(const char *run, long job, int n, int churn)
{
	int pipes[2], fds[64], ok = 1;
	char first[MAD_JOBDIR_PATH] = "", got[MAD_JOBDIR_PATH];
	pid_t kids[64], churner = -1;
	struct mad_jobdir d;

	if (init(&d, run, "alpha", job, getuid()))
		return 0;
	if (churn && (churner = fork()) == 0) {
		if (setgid(4343) || setuid(4343))
			_exit(1);
		for (;;) {
			if (mkdir(d.base, 0755) == 0)
				rmdir(d.base);
		}
	}
	for (int i = 0; i < n; i++) {
		if (pipe(pipes))
			return 0;
		kids[i] = fork();
		if (kids[i] == 0) {
			char path[MAD_JOBDIR_PATH] = "";
			int rc;

			close(pipes[0]);
			if (i == 0) {
				rc = mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL,
						     NULL, 0, NULL, 0);
			} else {
				/* as a non-founder does (contract.c): find, waiting */
				for (int t = 0; t < 500; t++) {
					rc = mad_jobdir_open(&d, MAD_JOBDIR_FIND, path,
							     sizeof(path), NULL, NULL, 0, NULL, 0);
					if (rc != 1)
						break;
					usleep(2000);
				}
			}
			if (rc)
				path[0] = '\0';
			if (write(pipes[1], path, sizeof(path)) != (ssize_t)sizeof(path))
				_exit(1);
			_exit(0);
		}
		close(pipes[1]);
		fds[i] = pipes[0];
	}
	for (int i = 0; i < n; i++) {
		if (read(fds[i], got, sizeof(got)) != (ssize_t)sizeof(got) || !*got)
			ok = 0;
		else if (!*first)
			memcpy(first, got, sizeof(got));
		else if (strcmp(first, got))
			ok = 0;
		close(fds[i]);
		waitpid(kids[i], NULL, 0);
	}
	if (churner > 0) {
		kill(churner, SIGKILL);
		waitpid(churner, NULL, 0);
	}
	return ok;
}

TEST(nodes_that_start_together_meet_in_one_folder)
{
	char *run = scratch();
	int splits = 0;

	if (getuid() == 0)
		CHECK(chmod(run, 01777) == 0); /* another user may plant names */
	for (int t = 0; t < 40; t++)
		splits += !start_together(run, 1000 + t, t % 2 ? 16 : 4, getuid() == 0);
	CHECK(splits == 0);
	cleanup(run);
}

TEST(the_run_folders_whole_path_is_checked)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], dir[256], link[300];
	struct mad_jobdir d;
	int fd;

	/* a folder on the way that others may write, without the sticky bit */
	snprintf(dir, sizeof(dir), "%s/project", run);
	CHECK(mkdir(dir, 0755) == 0 && chmod(dir, 0777) == 0);
	snprintf(path, sizeof(path), "%s/project/runs", run);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(mad_rundir_open(path, getuid(), err, sizeof(err)) == -1);
	CHECK(strstr(err, "/project' is writable by group or others without the sticky bit") != NULL);
	/* the sticky bit makes it safe: others add names, never rename ours */
	CHECK(chmod(dir, 01777) == 0);
	fd = mad_rundir_open(path, getuid(), err, sizeof(err));
	CHECK(fd >= 0);
	close(fd);
	/* a link in a folder only the user and root write is followed */
	snprintf(link, sizeof(link), "%s/runs-link", run);
	CHECK(symlink(path, link) == 0);
	fd = mad_rundir_open(link, getuid(), err, sizeof(err));
	CHECK(fd >= 0);
	close(fd);
	/* ... not one in a folder others may write: it can be flipped */
	CHECK(chmod(dir, 0777) == 0);
	snprintf(link, sizeof(link), "%s/project/flip", run);
	CHECK(symlink(run, link) == 0);
	CHECK(mad_rundir_open(link, getuid(), err, sizeof(err)) == -1);
	CHECK(strstr(err, "without the sticky bit") != NULL);
	/* nor is anything below a folder another user owns */
	if (getuid() == 0) {
		CHECK(chmod(dir, 0755) == 0 && chown(dir, 4242, 4242) == 0);
		CHECK(mad_rundir_open(path, 0, err, sizeof(err)) == -1);
		CHECK(strstr(err, "owned by uid 4242") != NULL);
		CHECK(chown(dir, 0, 0) == 0);
	}
	CHECK(mad_rundir_open("/nonexistent-mad/run", getuid(), err, sizeof(err)) == -1);
	CHECK(strstr(err, "'/nonexistent-mad' does not exist") != NULL);
	CHECK(init(&d, path, "", 3, getuid()) == 0);
	CHECK(chmod(dir, 0777) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == -1);
	cleanup(run);
}

TEST(a_shared_run_folder_must_be_roots_or_the_users)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH];
	struct mad_jobdir d;

	CHECK(chmod(run, 01777) == 0);
	if (getuid() == 0) {
		/* the owner of a 1777 folder may rename anything in it */
		CHECK(init(&d, run, "", 15, 1000) == 0);
		CHECK(chown(run, 4242, 4242) == 0);
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
				      sizeof(err)) == -1);
		CHECK(strstr(err, "owned by uid 4242") != NULL && strstr(err, "must be root's") != NULL);
		CHECK(chown(run, 0, 0) == 0);
		CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FIND, path, sizeof(path), NULL, NULL, 0, err,
				      sizeof(err)) == 1);
	}
	cleanup(run);
}

TEST(a_reader_that_cannot_know_the_cluster_takes_any)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], moved[MAD_JOBDIR_PATH + 16];
	struct mad_jobdir d, any;

	CHECK(init(&d, run, "alpha", 9, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == 0);
	CHECK(init(&any, run, NULL, 9, getuid()) == 0);
	CHECK(check(&any, path) == MAD_JOBDIR_OURS);
	CHECK(init(&any, run, NULL, 90, getuid()) == 0);
	snprintf(moved, sizeof(moved), "%s/90", run);
	CHECK(rename(d.base, moved) == 0);
	CHECK(check(&any, moved) == MAD_JOBDIR_OTHER_ATTEMPT);
	cleanup(run);
}

TEST(the_founder_moves_an_earlier_jobs_folders_aside)
{
	char *run = scratch(), path[MAD_JOBDIR_PATH], file[MAD_JOBDIR_PATH + 16], text[64],
	     fallback[MAD_JOBDIR_PATH + 64];
	struct mad_jobdir d;

	CHECK(init(&d, run, "alpha", 10, getuid()) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == 0);
	snprintf(file, sizeof(file), "%s/done_rank0", path);
	put(file, "0\n");
	/* an earlier job's folder under a fallback name too */
	snprintf(fallback, sizeof(fallback), "%s~00000000000000aa", d.base);
	CHECK(rename(d.base, fallback) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == 0);
	CHECK_STR(path, fallback);
	CHECK(mkdir(d.base, 0755) == 0); /* <base> taken, by anything */
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_FOUND, path, sizeof(path), NULL, notes, sizeof(notes),
			      err, sizeof(err)) == 0);
	CHECK(is_fallback(&d, path) && strcmp(path, fallback) != 0);
	CHECK(access(fallback, F_OK) != 0); /* moved aside */
	CHECK(strstr(notes, "an earlier job's with the same id") != NULL);
	CHECK(strstr(notes, ".old.") != NULL);
	/* later writers of the attempt join the founder's folder */
	snprintf(file, sizeof(file), "%s/done_rank0", path);
	put(file, "1\n");
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, fallback, sizeof(fallback), NULL, NULL, 0, err,
			      sizeof(err)) == 0);
	CHECK_STR(fallback, path);
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
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == -1);
	CHECK(strstr(err, "without the sticky bit (mode 0777)") != NULL);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, NULL, 0) == -1);
	CHECK(chmod(run, 01777) == 0);
	CHECK(mad_jobdir_open(&d, MAD_JOBDIR_JOIN, path, sizeof(path), NULL, NULL, 0, err,
			      sizeof(err)) == 0);
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
	struct mad_child_budget budget = { 1000000 };
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
	/* four hung writers cost the budget once, not four times: 1 s, and up
	 * to 0.1 s a writer to reap it after SIGKILL, and the forks.  A budget
	 * per writer would take 4 s or more; the bound leaves a sanitized build
	 * on a loaded machine 1.6 s for five forks and their reaps. */
	CHECK(mad_monotonic() - t0 < 3 * 1.0);
}

int main(void)
{
	RUN(names_and_identity);
	RUN(join_makes_a_whole_private_folder_then_finds_it);
	RUN(a_planted_link_a_writable_folder_and_a_foreign_one_are_passed_over);
	RUN(any_number_of_planted_names_never_blocks_a_job);
	RUN(another_users_folder_is_not_the_jobs);
	RUN(nodes_that_start_together_meet_in_one_folder);
	RUN(the_run_folders_whole_path_is_checked);
	RUN(a_shared_run_folder_must_be_roots_or_the_users);
	RUN(a_reader_that_cannot_know_the_cluster_takes_any);
	RUN(the_founder_moves_an_earlier_jobs_folders_aside);
	RUN(a_run_folder_others_may_write_needs_the_sticky_bit);
	RUN(a_write_replaces_an_earlier_attempts_file);
	RUN(writers_share_one_bounded_wait);
	return unit_done();
}
