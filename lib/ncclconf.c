/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ncclconf.c: see ncclconf.h. */
#include "ncclconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NCCL_LINE_MAX 4095  /* param.cc: fgets(line, 4096) */
#define NCCL_FIELD_MAX 1023 /* param.cc: envVar[1024], envValue[1024] */
#define NCCL_PATH_MAX 1024  /* param.cc: confFilePath[1024] */

int mad_ncclconf_parse(const char *text, size_t len, const char *name, char *value, size_t size)
{
	size_t name_len = strlen(name), at = 0;

	if (name_len == 0)
		return 0; /* setenv refuses an empty name */
	while (at < len) {
		const char *line = text + at, *nl, *eq;
		size_t n = len - at < NCCL_LINE_MAX ? len - at : NCCL_LINE_MAX, key, vlen;

		/* fgets: to the first '\n' or 4095 bytes, whichever comes first */
		nl = memchr(line, '\n', n);
		if (nl)
			n = (size_t)(nl - line) + 1;
		at += n;
		/* then a C string (a NUL ends it) without one '\n', then one '\r' */
		n = strnlen(line, n);
		if (n && line[n - 1] == '\n')
			n--;
		if (n && line[n - 1] == '\r')
			n--;
		if (n == 0 || line[0] == '#')
			continue;
		eq = memchr(line, '=', n);
		if (!eq)
			continue;
		key = (size_t)(eq - line);
		if (key > NCCL_FIELD_MAX)
			key = NCCL_FIELD_MAX;
		if (key != name_len || memcmp(line, name, key))
			continue;
		vlen = n - (size_t)(eq - line) - 1;
		if (vlen > NCCL_FIELD_MAX)
			vlen = NCCL_FIELD_MAX;
		if (size) {
			if (vlen >= size)
				vlen = size - 1;
			memcpy(value, eq + 1, vlen);
			value[vlen] = '\0';
		}
		return 1;
	}
	return 0;
}

/* Whether the file open on FD may decide for UID (ncclconf.h). */
static int trusted(int fd, long uid)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (geteuid() != 0 || uid < 0)
		return 1; /* read as the user: what NCCL would read */
	if (st.st_uid == (uid_t)uid)
		return (st.st_mode & S_IRUSR) != 0; /* as the user's NCCL could open it */
	return st.st_uid == 0 && (st.st_mode & S_IROTH);
}

/* 1 when PATH names NAME (VALUE set), 0 when not or not readable. */
static int read_file(const char *path, long uid, const char *name, char *value, size_t size)
{
	char buf[MAD_NCCLCONF_MAX];
	size_t got = 0;
	int fd, found = 0;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	/* regular: a read may wait for the file system now (a FUSE file
	 * could answer EAGAIN and be read short), never for a writer */
	if (trusted(fd, uid) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0) {
		while (got < sizeof(buf)) {
			ssize_t n = read(fd, buf + got, sizeof(buf) - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		found = mad_ncclconf_parse(buf, got, name, value, size);
	}
	close(fd);
	return found;
}

int mad_ncclconf_lookup(const struct mad_ncclconf_files *f, const char *name, char *value,
			size_t vsize, char *path, size_t psize)
{
	const char *etc = f->etc ? f->etc : "/etc/nccl.conf";
	char user[NCCL_PATH_MAX]; /* cut as NCCL cuts it: the file it opens */

	user[0] = '\0';
	if (!f->etc_only) {
		if (f->conf_file && *f->conf_file)
			snprintf(user, sizeof(user), "%s", f->conf_file);
		else if (f->home)
			snprintf(user, sizeof(user), "%s/.nccl.conf", f->home);
	}
	if (*user && read_file(user, f->uid, name, value, vsize)) {
		snprintf(path, psize, "%s", user);
		return 1;
	}
	if (read_file(etc, f->uid, name, value, vsize)) {
		snprintf(path, psize, "%s", etc);
		return 1;
	}
	return 0;
}
