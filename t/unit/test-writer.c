/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/writer: the marker writer's request, checked and
 * carried out in a process of its own, and the program mad-writer
 * (MAD_WRITER, else plugin/mad-writer of this build) given it on its
 * standard input.  As root (CI) the writer drops to nobody and the files
 * are checked as that user's; as another user it cannot drop, and says so. */
#include "error.h"
#include "jobdir.h"
#include "unit.h"
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[] = "/tmp/test-writer.XXXXXX";
static uid_t user; /* whose folder: nobody as root, else ourselves */
static gid_t group;

static const char *writer_path(void)
{
	const char *p = getenv("MAD_WRITER");

	return p && *p ? p : "plugin/mad-writer";
}

/* A request's parts for job JOB in the run folder tmp/run: two markers. */
static void request_parts(struct mad_writer_job *j, struct mad_writer_marker m[2], long job)
{
	char run[128], base[32], err[MAD_ERR_MAX];

	memset(j, 0, sizeof(*j));
	memset(m, 0, 2 * sizeof(*m));
	snprintf(run, sizeof(run), "%s/run", tmp);
	snprintf(base, sizeof(base), "%ld", job);
	CHECK(mad_jobdir_init(&j->dir, run, base, "c1", job, 0, user, err, sizeof(err)) == 0);
	j->uid = user;
	j->gid = group;
	j->flags = MAD_WRITE_NOSYNC;
	j->job_id = j->stepd = -1;
	snprintf(m[0].name, sizeof(m[0].name), "step0_rank0");
	m[0].len = (uint32_t)snprintf(m[0].content, sizeof(m[0].content), "0\nrank=0\n");
	snprintf(m[1].name, sizeof(m[1].name), "step0_rank1");
	m[1].len = (uint32_t)snprintf(m[1].content, sizeof(m[1].content), "3\nrank=1\n");
}

/* The request, encoded in memory malloc aligned; *LEN its size. */
static void *request(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n,
		     size_t *len)
{
	void *buf;

	*len = mad_writer_request_size(j, n);
	buf = malloc(*len ? *len : 1);
	if (!buf)
		exit(1);
	mad_writer_encode(j, m, n, buf);
	return buf;
}

/* What the last run_program() printed on its standard error. */
static char program_stderr[512];

/* mad-writer run with LEN bytes of REQ on its standard input: its exit
 * status, or -1; what it printed on its standard error in program_stderr.
 * AS, unless -1, is the uid it runs as. */
static int run_program(const void *req, size_t len, uid_t as)
{
	char path[64], errpath[64];
	int fd, efd, status;
	ssize_t n;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/request", tmp);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmp);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	efd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0666);
	if (fd < 0 || efd < 0 || write(fd, req, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd, 0);
		dup2(efd, 2);
		if (as != (uid_t)-1 &&
		    (setgroups(0, NULL) || setresgid(group, group, group) || setresuid(as, as, as)))
			_exit(99);
		execl(writer_path(), "mad-writer", (char *)NULL);
		_exit(98);
	}
	close(fd);
	unlink(path);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	n = pread(efd, program_stderr, sizeof(program_stderr) - 1, 0);
	program_stderr[n > 0 ? n : 0] = '\0';
	close(efd);
	unlink(errpath);
	return WEXITSTATUS(status);
}

/* The marker NAME of job JOB's folder: its content into BUF, 0 when it is
 * a file of the folder's user; -1 when there is none. */
static int read_marker(long job, const char *name, char *buf, size_t size)
{
	char path[256];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/run/%ld/%s", tmp, job, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	if (fstat(fd, &st) || st.st_uid != user || n < 0) {
		close(fd);
		return -1;
	}
	buf[n] = '\0';
	close(fd);
	return 0;
}

static int exists(long job)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/run/%ld", tmp, job);
	return access(path, F_OK) == 0;
}

TEST(writer_request_round_trip)
{
	struct mad_writer_marker m[2];
	const struct mad_writer_marker *got;
	struct mad_writer_job j, back;
	gid_t gids[3] = { 5, 6, 7 };
	char why[256];
	size_t len;
	void *req;
	int n = 0;

	request_parts(&j, m, 7001);
	j.gids = gids;
	j.ngids = 3;
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == 0);
	CHECK(n == 2 && back.uid == user && back.gid == group && back.ngids == 3);
	CHECK(back.gids && back.gids[0] == 5 && back.gids[2] == 7);
	CHECK(back.flags == MAD_WRITE_NOSYNC && back.job_id == -1 && back.stepd == -1);
	CHECK_STR(back.dir.base_name, "7001");
	CHECK_STR(got[1].name, "step0_rank1");
	CHECK(got[1].len == 9 && memcmp(got[1].content, "3\nrank=1\n", 9) == 0);
	free(req);
	/* sizes a request cannot have */
	CHECK(mad_writer_request_size(&j, 0) == 0);
	CHECK(mad_writer_request_size(&j, MAD_WRITER_MARKERS_MAX + 1) == 0);
	j.ngids = MAD_WRITER_GIDS_MAX + 1;
	CHECK(mad_writer_request_size(&j, 1) == 0);
}

/* Each way a request can be wrong is refused, with a reason. */
TEST(writer_request_refused)
{
	struct mad_writer_marker m[2];
	const struct mad_writer_marker *got;
	struct mad_writer_job j, back;
	char why[256], *req;
	size_t len, cut;
	int n;

	request_parts(&j, m, 7002);
	req = request(&j, m, 2, &len);
	for (cut = 0; cut < len; cut += 97) /* cut short anywhere */
		CHECK(mad_writer_check(req, cut, &back, &got, &n, why, sizeof(why)) == -1);
	CHECK(mad_writer_check(req, len - 1, &back, &got, &n, why, sizeof(why)) == -1);
	CHECK(strstr(why, "size") != NULL);
	req[0] ^= 1; /* not a request */
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	CHECK(strstr(why, "not a marker writer's request") != NULL);
	req[0] ^= 1;
	req[8] ^= 1; /* another build's version */
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -2);
	CHECK(strstr(why, "another build") != NULL);
	req[8] ^= 1;
	CHECK(mad_writer_check(req, len, &back, &got, &n, NULL, 0) == 0);
	free(req);

	/* markers whose name is not a plain name, or whose length does not fit */
	static const char *const names[] = { "", ".", "..", "a/b", "../x", "/etc/x" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		request_parts(&j, m, 7002);
		snprintf(m[1].name, sizeof(m[1].name), "%s", names[i]);
		req = request(&j, m, 2, &len);
		CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
		CHECK(strstr(why, "marker") != NULL);
		free(req);
	}
	request_parts(&j, m, 7002);
	memset(m[0].name, 'x', sizeof(m[0].name)); /* no NUL */
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	free(req);
	request_parts(&j, m, 7002);
	m[0].len = MAD_WRITER_CONTENT_MAX + 1;
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	free(req);
	/* a user who is not the folder's, a flag that is not one, a folder
	 * name with a slash, a run folder that is not absolute */
	request_parts(&j, m, 7002);
	j.uid = user + 1;
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	CHECK(strstr(why, "user") != NULL);
	free(req);
	request_parts(&j, m, 7002);
	j.flags = 64;
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	free(req);
	request_parts(&j, m, 7002);
	snprintf(j.dir.base_name, sizeof(j.dir.base_name), "../7002");
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	CHECK(strstr(why, "folder") != NULL);
	free(req);
	request_parts(&j, m, 7002);
	snprintf(j.dir.run_dir, sizeof(j.dir.run_dir), "run");
	req = request(&j, m, 2, &len);
	CHECK(mad_writer_check(req, len, &back, &got, &n, why, sizeof(why)) == -1);
	free(req);
	CHECK(!exists(7002));
}

/* The program, given a request: the markers written as the folder's user
 * (root: after dropping to nobody), or, not root, the drop refused. */
TEST(writer_program_writes_as_the_user)
{
	struct mad_writer_marker m[2];
	struct mad_writer_job j;
	char buf[256];
	size_t len;
	void *req;
	int rc;

	request_parts(&j, m, 7003);
	req = request(&j, m, 2, &len);
	rc = run_program(req, len, (uid_t)-1);
	if (getuid() != 0) {
		printf("# not root: the writer cannot drop to a user (exit %d)\n", rc);
		CHECK(rc == MAD_WRITER_NO_DROP);
		CHECK(!exists(7003));
		free(req);
		return;
	}
	CHECK(rc == MAD_WRITER_OK);
	CHECK_STR(program_stderr, "");
	CHECK(read_marker(7003, "step0_rank0", buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "0\nrank=0\n");
	CHECK(read_marker(7003, "step0_rank1", buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "3\nrank=1\n");
	/* again: the same attempt's folder, the markers replaced */
	m[1].len = (uint32_t)snprintf(m[1].content, sizeof(m[1].content), "0\nrank=1\n");
	free(req);
	req = request(&j, m, 2, &len);
	CHECK(run_program(req, len, (uid_t)-1) == MAD_WRITER_OK);
	CHECK(read_marker(7003, "step0_rank1", buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "0\nrank=1\n");
	/* run by a user who is not root, asking to write as root: refused,
	 * nothing written */
	free(req);
	request_parts(&j, m, 7005);
	j.uid = j.dir.uid = 0; /* nobody asking to write as root */
	req = request(&j, m, 2, &len);
	CHECK(run_program(req, len, user) == MAD_WRITER_NO_DROP);
	CHECK(!exists(7005));
	free(req);
}

/* A request the program cannot take: exit 81 or 80, nothing written. */
TEST(writer_program_refuses_a_bad_request)
{
	struct mad_writer_marker m[2];
	struct mad_writer_job j;
	size_t len;
	char *req;

	request_parts(&j, m, 7006);
	req = request(&j, m, 2, &len);
	CHECK(run_program(req, len - 10, (uid_t)-1) == MAD_WRITER_BAD_REQUEST);
	CHECK_STR(program_stderr,
		  "mad-writer: standard input: the request's size is not its own (cut short?)\n");
	CHECK(run_program(req, 0, (uid_t)-1) == MAD_WRITER_BAD_REQUEST);
	CHECK_STR(program_stderr, "mad-writer: standard input: not a marker writer's request\n");
	req[9] ^= 1; /* another version's */
	CHECK(run_program(req, len, (uid_t)-1) == MAD_WRITER_OTHER_BUILD);
	CHECK_STR(program_stderr,
		  "mad-writer: standard input: a request of another build of mad-spank\n");
	CHECK(!exists(7006));
	free(req);
}

/* The request carried out in a fork, as mad.so's fallback does. */
TEST(writer_run_in_a_fork)
{
	struct mad_writer_marker m[2];
	struct mad_writer_job j;
	char buf[256];
	size_t len;
	void *req;
	int status;
	pid_t pid;

	request_parts(&j, m, 7007);
	req = request(&j, m, 2, &len);
	pid = fork();
	if (pid == 0)
		_exit(mad_writer_serve(req, len, NULL, 0));
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	if (getuid() != 0) {
		CHECK(WEXITSTATUS(status) == MAD_WRITER_NO_DROP);
	} else {
		CHECK(WEXITSTATUS(status) == MAD_WRITER_OK);
		CHECK(read_marker(7007, "step0_rank1", buf, sizeof(buf)) == 0);
		CHECK_STR(buf, "3\nrank=1\n");
	}
	free(req);
}

/* Whether a path is reached through local file systems alone, by a mount
 * table as the kernel writes it (proc(5), /proc/pid/mountinfo): every
 * mount whose point holds it, the ones crossed above its own and one
 * hidden under another at one point alike; octal escapes. */
TEST(writer_mount_local)
{
	static const char table[] = "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
				    "40 26 0:50 / /usr rw,relatime shared:3 - nfs srv:/usr rw,vers=3\n"
				    "41 40 0:51 / /usr/local rw - tmpfs tmpfs rw\n"
				    "42 26 0:52 / /opt\\040x rw - xfs /dev/vdb rw\n"
				    "43 26 0:53 / /srv rw - nfs4 srv:/srv rw\n"
				    "44 43 0:54 / /srv rw - ext4 /dev/vdc rw\n"
				    "garbage line\n"
				    "45 26 0:55 / /mnt rw - \n";
	const size_t len = sizeof(table) - 1;
	char type[64] = "";

	CHECK(mad_writer_mount_local(table, len, "/usr/libexec/mad-spank/mad-writer", type,
				     sizeof(type)) == 0);
	CHECK_STR(type, "nfs");
	/* local itself, but its lookup crosses /usr's NFS */
	strcpy(type, "");
	CHECK(mad_writer_mount_local(table, len, "/usr/local/libexec/mad-writer", type,
				     sizeof(type)) == 0);
	CHECK_STR(type, "nfs");
	CHECK(mad_writer_mount_local(table, len, "/usrx/mad-writer", type, sizeof(type)) == 1);
	CHECK(mad_writer_mount_local(table, len, "/opt x/mad-writer", type, sizeof(type)) == 1);
	/* ext4 mounted over NFS at one point: refused, the table says no more */
	strcpy(type, "");
	CHECK(mad_writer_mount_local(table, len, "/srv/mad-writer", type, sizeof(type)) == 0);
	CHECK_STR(type, "nfs4");
	/* a line whose type does not read is no local one */
	CHECK(mad_writer_mount_local(table, len, "/mnt/x", type, sizeof(type)) == 0);
	CHECK_STR(type, "unreadable");
	CHECK(mad_writer_mount_local("", 0, "/x", type, sizeof(type)) == -1);
	CHECK(mad_writer_mount_local("garbage\n", 8, "/x", type, sizeof(type)) == -1);
}

/* The libc mapping's path in /proc/self/maps into LIB, "" when none. */
static void libc_mapped(char *lib, size_t size)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096 + 128];

	*lib = '\0';
	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "/libc.so") && strchr(line, '/')) {
			snprintf(lib, size, "%s", strchr(line, '/'));
			lib[strcspn(lib, "\n")] = '\0';
			break;
		}
	if (maps)
		fclose(maps);
}

/* The dynamic loader and the C library, by the paths an exec looks up and
 * by the kernel's paths of their mappings: a link such as usrmerge's
 * /lib64 is no way around a mount, on either side of it. */
TEST(writer_libs_local)
{
	static const char local[] = "26 1 254:0 / / rw - ext4 /dev/vda rw\n";
	char table[4096 + 256], why[512] = "", lib[4096];

	CHECK(mad_writer_libs_local(local, sizeof(local) - 1, why, sizeof(why)) == 1);
	libc_mapped(lib, sizeof(lib));
	CHECK(lib[0] == '/');
	/* the C library's own file with an NFS file mounted over it (a bind
	 * mount's point may be a file): the loader passes, the library does not */
	snprintf(table, sizeof(table), "%s40 26 0:50 / %s rw - nfs srv:/libc rw\n", local, lib);
	CHECK(mad_writer_libs_local(table, strlen(table), why, sizeof(why)) == 0);
	CHECK(strstr(why, lib) != NULL && strstr(why, "(nfs)") != NULL);
	/* the folder that holds both, over NFS */
	*strrchr(lib, '/') = '\0';
	snprintf(table, sizeof(table), "%s40 26 0:50 / %s rw - nfs srv:/lib rw\n", local, lib);
	CHECK(mad_writer_libs_local(table, strlen(table), why, sizeof(why)) == 0);
	CHECK(strstr(why, lib) != NULL && strstr(why, "(nfs)") != NULL);
	/* /lib64 on NFS: the loader's PT_INTERP (x86-64's /lib64/ld-linux-x86-64.so.2)
	 * is looked up through it, wherever its link leads */
	snprintf(table, sizeof(table), "%s40 26 0:50 / /lib64 rw - nfs srv:/lib rw\n", local);
#if defined(__x86_64__)
	CHECK(mad_writer_libs_local(table, strlen(table), why, sizeof(why)) == 0);
	CHECK(strstr(why, "'/lib64/") != NULL);
#endif
}

/* Started only from a local disk, and only as root's own file in root's
 * own folders: whoever could replace it would run as root. */
TEST(writer_spawnable)
{
	char why[512], path[96], cmd[256];

	CHECK(mad_writer_spawnable("/nonexistent/mad-writer", why, sizeof(why)) == 0);
	CHECK(strstr(why, "'/nonexistent': No such file") != NULL);
	CHECK(mad_writer_spawnable("relative/mad-writer", why, sizeof(why)) == 0);
	snprintf(path, sizeof(path), "%s/bin", tmp);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/bin/mad-writer", tmp);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", writer_path(), path);
	CHECK(system(cmd) == 0 && chmod(path, 0755) == 0);
	if (getuid() != 0) { /* the copy and its folders are ours, not root's */
		CHECK(mad_writer_spawnable(path, why, sizeof(why)) == 0);
		CHECK(strstr(why, "is not root's own folder") != NULL);
		return;
	}
	CHECK(mad_writer_spawnable(path, why, sizeof(why)) == 1);
	CHECK(chmod(path, 0775) == 0); /* its group may replace it */
	CHECK(mad_writer_spawnable(path, why, sizeof(why)) == 0);
	CHECK(strstr(why, "mode 0775") != NULL);
	CHECK(chmod(path, 0644) == 0); /* not executable */
	CHECK(mad_writer_spawnable(path, why, sizeof(why)) == 0);
	CHECK(chmod(path, 0755) == 0);
	snprintf(cmd, sizeof(cmd), "%s/bin", tmp); /* a folder on the way others may write */
	CHECK(chmod(cmd, 0777) == 0);
	CHECK(mad_writer_spawnable(path, why, sizeof(why)) == 0);
	CHECK(strstr(why, "folder") != NULL);
	CHECK(chmod(cmd, 0755) == 0);
	snprintf(cmd, sizeof(cmd), "%s/link", tmp); /* a link on the way */
	snprintf(path, sizeof(path), "%s/bin", tmp);
	CHECK(symlink(path, cmd) == 0);
	snprintf(path, sizeof(path), "%s/link/mad-writer", tmp);
	CHECK(mad_writer_spawnable(path, why, sizeof(why)) == 0);
	CHECK(strstr(why, "a symbolic link") != NULL);
}

int main(void)
{
	struct passwd *pw = getpwnam("nobody");
	char run[64];

	unit_mkdtemp(tmp);
	user = getuid();
	group = getgid();
	if (user == 0 && pw) {
		user = pw->pw_uid;
		group = pw->pw_gid;
	}
	snprintf(run, sizeof(run), "%s/run", tmp);
	if (chmod(tmp, 0755) || mkdir(run, 0755) || chown(run, user, group)) {
		perror(run);
		return 1;
	}
	RUN(writer_request_round_trip);
	RUN(writer_request_refused);
	RUN(writer_program_writes_as_the_user);
	RUN(writer_program_refuses_a_bad_request);
	RUN(writer_run_in_a_fork);
	RUN(writer_mount_local);
	RUN(writer_libs_local);
	RUN(writer_spawnable);
	return unit_done_in(tmp);
}
