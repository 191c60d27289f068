/* SPDX-License-Identifier: GPL-2.0-or-later */
/* follow.c: see follow.h. */
#include "follow.h"
#include "error.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

void mad_follow_init(struct mad_follow_file *f, const char *path, long rank)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->rank = rank;
	f->fd = -1;
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

size_t mad_follow_poll(struct mad_follow_file *f, long job, struct strbuf *out, int flush)
{
	char buf[8192];
	size_t total = 0;
	ssize_t r;

	if (f->fd < 0) {
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (f->fd < 0)
			return 0; /* not there yet */
	}
	while ((r = pread(f->fd, buf, sizeof(buf), f->off)) > 0) {
		f->off += r;
		total += (size_t)r;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] == '\n' || f->plen == sizeof(f->partial)) {
				emit(f, job, out, f->partial, f->plen);
				f->plen = 0;
				if (buf[i] == '\n')
					continue;
			}
			f->partial[f->plen++] = buf[i];
		}
	}
	if (flush && f->plen) {
		emit(f, job, out, f->partial, f->plen);
		f->plen = 0;
	}
	return total;
}

void mad_follow_close(struct mad_follow_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
