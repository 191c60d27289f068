/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ncclconf.c: see ncclconf.h. */
#include "ncclconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NCCL_FIELD_MAX 1023 /* param.cc: envVar[1024], envValue[1024] */

int mad_ncclconf_parse(const char *text, size_t len, const char *name, char *value, size_t size)
{
	size_t name_len = strlen(name), at = 0;

	while (at < len) {
		const char *line = text + at, *nl = memchr(line, '\n', len - at);
		size_t n = nl ? (size_t)(nl - line) : len - at, key, vlen;
		const char *eq;

		at += n + (nl != NULL);
		/* setEnvFile works on a C string: a NUL ends the line there */
		n = strnlen(line, n);
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
		return 1;
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
	if (trusted(fd, uid)) {
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
	char user[4096];

	user[0] = '\0';
	if (!f->etc_only) {
		if (f->conf_file && *f->conf_file)
			snprintf(user, sizeof(user), "%s", f->conf_file);
		else if (f->home && *f->home)
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
