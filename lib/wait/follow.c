/* SPDX-License-Identifier: GPL-2.0-or-later */
/* follow.c: see follow.h. */
#include "follow.h"
#include "error.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mad_follow_name(const char *pattern, long job, long rank, char *out, size_t size, char *err,
		    size_t esize)
{
	char shown[MAD_PRINTABLE_SIZE], letter[8];
	size_t off = 0;

	for (const char *p = pattern; *p; p++) {
		int w;

		if (*p != '%') {
			w = snprintf(out + off, size - off, "%c", *p);
		} else {
			switch (*++p) {
			case '%':
				w = snprintf(out + off, size - off, "%%");
				break;
			case 'A':
			case 'j':
				w = snprintf(out + off, size - off, "%ld", job);
				break;
			case 'a':
			case 'r':
				w = snprintf(out + off, size - off, "%ld", rank);
				break;
			default:
				mad_printable(shown, sizeof(shown), pattern, strlen(pattern));
				mad_printable(letter, sizeof(letter), p, *p ? 1 : 0);
				return mad_error(err, esize,
						 "--follow: '%%%s' in '%s' is not one of %%A %%j %%a %%r %%%%",
						 letter, shown);
			}
		}
		if (w < 0 || (size_t)w >= size - off) {
			mad_printable(shown, sizeof(shown), pattern, strlen(pattern));
			return mad_error(err, esize, "--follow: '%s' gives a name too long", shown);
		}
		off += (size_t)w;
	}
	if (!off)
		return mad_error(err, esize, "--follow: empty pattern");
	return 0;
}

int mad_follow_per_rank(const char *pattern)
{
	for (const char *p = pattern; *p; p++)
		if (*p == '%' && (p[1] == 'a' || p[1] == 'r'))
			return 1;
		else if (*p == '%' && p[1])
			p++;
	return 0;
}

int mad_follow_init(struct mad_follow_file *f, const char *path, long rank)
{
	memset(f, 0, sizeof(*f));
	f->rank = rank;
	f->fd = -1;
	f->path = strdup(path);
	return f->path ? 0 : -1;
}

static void emit(const struct mad_follow_file *f, long job, struct strbuf *out, const char *line,
		 size_t len)
{
	sb_adds(out, f->rank >= 0 ? "[rank " : "[job ");
	sb_addu64(out, (uint64_t)(f->rank >= 0 ? f->rank : job), 0);
	sb_adds(out, "] ");
	sb_add(out, line, len);
	sb_addc(out, '\n');
}

static const char *file_type(mode_t mode)
{
	return S_ISCHR(mode)  ? "a character device" :
	       S_ISBLK(mode)  ? "a block device" :
	       S_ISFIFO(mode) ? "a FIFO" :
	       S_ISDIR(mode)  ? "a folder" :
	       S_ISSOCK(mode) ? "a socket" :
				"not a regular file";
}

static void close_fd(struct mad_follow_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* Refuses F for good: -1 with ERR. */
static ssize_t refuse(struct mad_follow_file *f, const char *why, char *err, size_t esize)
{
	char shown[MAD_PRINTABLE_SIZE];

	close_fd(f);
	f->refused = 1;
	mad_printable(shown, sizeof(shown), f->path, strlen(f->path));
	return mad_error(err, esize, "--follow: '%s' is %s: not read", shown, why);
}

/* Opens F if it is there and a regular file (a link to one counts): 1,
 * 0 not there yet, -1 refused (ERR).  Never opens anything else: opening
 * a device or a FIFO may act on it. */
static int open_file(struct mad_follow_file *f, char *err, size_t esize)
{
	struct stat st;

	if (stat(f->path, &st))
		return 0; /* not there yet (or not reachable yet) */
	if (!S_ISREG(st.st_mode))
		return (int)refuse(f, file_type(st.st_mode), err, esize);
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f->fd < 0)
		return 0;
	/* replaced between stat and open */
	if (fstat(f->fd, &st))
		return (int)refuse(f, "unreadable", err, esize);
	if (!S_ISREG(st.st_mode))
		return (int)refuse(f, file_type(st.st_mode), err, esize);
	return 1;
}

ssize_t mad_follow_poll(struct mad_follow_file *f, long job, struct strbuf *out, int flush,
			size_t max, char *err, size_t esize)
{
	char buf[8192];
	size_t total = 0;
	struct stat st;
	ssize_t r = 0;

	if (f->refused)
		return 0;
	if (f->fd < 0) {
		int rc = open_file(f, err, esize);

		if (rc <= 0)
			return rc;
	}
	if (fstat(f->fd, &st) == 0 && st.st_size < f->off)
		f->off = 0; /* truncated: written again from the start */
	while (total < max) {
		size_t want = max - total < sizeof(buf) ? max - total : sizeof(buf);

		r = pread(f->fd, buf, want, f->off);
		if (r <= 0)
			break;
		if (!f->partial && !(f->partial = malloc(MAD_FOLLOW_LINE_MAX))) {
			out->failed = 1; /* as an append that failed */
			break;
		}
		f->off += r;
		total += (size_t)r;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] == '\n' || f->plen == MAD_FOLLOW_LINE_MAX) {
				emit(f, job, out, f->partial, f->plen);
				f->plen = 0;
				if (buf[i] == '\n')
					continue;
			}
			f->partial[f->plen++] = buf[i];
		}
	}
	if (r < 0 && errno != EAGAIN && errno != EINTR) {
		char why[160];

		snprintf(why, sizeof(why), "unreadable (%s)", strerror(errno));
		return refuse(f, why, err, esize);
	}
	if (flush && f->plen) {
		emit(f, job, out, f->partial, f->plen);
		f->plen = 0;
	}
	return (ssize_t)total;
}

void mad_follow_close(struct mad_follow_file *f)
{
	close_fd(f);
	free(f->path);
	free(f->partial);
	f->path = NULL;
	f->partial = NULL;
	f->plen = 0;
}
