/* follow.c: see follow.h. */
#include "follow.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int mad_follow_name(const char *pattern, long job, long rank, char *out,
		    size_t size, char *err, size_t esize)
{
	size_t off = 0;

	for (const char *p = pattern; *p; p++) {
		int w;

		if (*p != '%') {
			w = snprintf(out + off, size - off, "%c", *p);
		} else {
			switch (*++p) {
			case '%': w = snprintf(out + off, size - off, "%%"); break;
			case 'A': case 'j': w = snprintf(out + off, size - off, "%ld", job); break;
			case 'a': case 'r': w = snprintf(out + off, size - off, "%ld", rank); break;
			default:
				snprintf(err, esize, "--follow: '%%%.1s' in '%s' is not one of %%A %%j %%a %%r %%%%",
					 *p ? p : "", pattern);
				return -1;
			}
		}
		if (w < 0 || (size_t)w >= size - off) {
			snprintf(err, esize, "--follow: '%s' gives a name too long", pattern);
			return -1;
		}
		off += (size_t)w;
	}
	if (!off) {
		snprintf(err, esize, "--follow: empty pattern");
		return -1;
	}
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

static void emit(const struct mad_follow_file *f, long job, FILE *out,
		 const char *line, size_t len)
{
	if (f->rank >= 0)
		fprintf(out, "[rank %ld] %.*s\n", f->rank, (int)len, line);
	else
		fprintf(out, "[job %ld] %.*s\n", job, (int)len, line);
}

size_t mad_follow_poll(struct mad_follow_file *f, long job, FILE *out, int flush)
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
	if (total)
		fflush(out);
	return total;
}

void mad_follow_close(struct mad_follow_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
