/* marker.c: see marker.h. */
#include "marker.h"
#include "rendezvous.h"
#include "strbuf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

size_t mad_marker_format(char *buf, size_t size, int status, long rank,
			 const char *host, long job_id, const char *error)
{
	int n = snprintf(buf, size, "%d\nrank=%ld\nhost=%s\njob=%ld\ntime=%ld\n%s%s%s",
			 status, rank, host, job_id, (long)time(NULL),
			 error ? "error=" : "", error ? error : "", error ? "\n" : "");

	return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}

void mad_marker_name(char *name, size_t size, long rank)
{
	/* system calls only (the caller may be a forked child) */
	size_t n = 9;

	if (size < 32)
		return;
	memcpy(name, "done_rank", n);
	n += fmt_u64(name + n, (uint64_t)rank, 0);
	name[n] = '\0';
}

int mad_marker_write(const char *job_dir, long rank, const char *content,
		     size_t len)
{
	char name[32];

	mad_marker_name(name, sizeof(name), rank);
	return mad_write_file(job_dir, name, content, len, 0);
}

int mad_expected_write(const char *job_dir, long count, char *err, size_t size)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", count), rc;

	rc = mad_write_file(job_dir, "expected", buf, (size_t)n, 0);
	if (rc) {
		snprintf(err, size, "cannot write '%s/expected': %s", job_dir, strerror(-rc));
		return -1;
	}
	return 0;
}
