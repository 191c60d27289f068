/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the marker writer's request (mad_writer_check in
 * lib/writer), which mad-writer reads on its standard input as root before
 * it drops to the request's user.  The input is taken as it is, and again
 * with this build's header (magic and version) over its first bytes, so a
 * corpus made by another version still reaches past the version check.
 * Beyond "no crash": a request taken has 1 to MAD_WRITER_MARKERS_MAX
 * markers, each a plain name and a length that fits, gids within the
 * input, and encoding what was read gives a request of the same size that
 * reads back the same.  The input is also read as a mount table
 * (mad_writer_mount_local, /proc/self/mountinfo's format), which mad.so
 * reads to tell whether mad-writer is on a local disk. */
#include "config.h"

#include "fuzz.h"
#include "writer.h"

static void same_request(const struct mad_writer_job *j, const struct mad_writer_marker *m, int n,
			 size_t len)
{
	const struct mad_writer_marker *m2;
	struct mad_writer_job j2;
	size_t len2 = mad_writer_request_size(j, n);
	void *again;
	int n2;

	check(len2 == len);
	again = malloc(len2);
	check(again != NULL);
	mad_writer_encode(j, m, n, again);
	check(mad_writer_check(again, len2, &j2, &m2, &n2, NULL, 0) == 0);
	check(n2 == n && j2.uid == j->uid && j2.gid == j->gid && j2.ngids == j->ngids &&
	      j2.flags == j->flags && j2.job_id == j->job_id && j2.stepd == j->stepd);
	check(memcmp(m2, m, (size_t)n * sizeof(*m)) == 0);
	check(strcmp(j2.dir.run_dir, j->dir.run_dir) == 0 &&
	      strcmp(j2.dir.base_name, j->dir.base_name) == 0);
	free(again);
}

static void one(const uint8_t *data, size_t size)
{
	const struct mad_writer_marker *m;
	struct mad_writer_job j;
	char why[256];
	void *buf = malloc(size ? size : 1); /* aligned, as mad-writer's is */
	int n, i;

	check(buf != NULL);
	memcpy(buf, data, size);
	if (mad_writer_check(buf, size, &j, &m, &n, why, sizeof(why)) != 0) {
		check(why[0] != '\0');
		free(buf);
		return;
	}
	check(n >= 1 && n <= MAD_WRITER_MARKERS_MAX);
	check(j.ngids >= 0 && j.ngids <= MAD_WRITER_GIDS_MAX);
	check(j.dir.uid == j.uid && j.dir.run_dir[0] == '/');
	check(!strchr(j.dir.base_name, '/'));
	for (i = 0; i < n; i++) {
		check(memchr(m[i].name, '\0', sizeof(m[i].name)) && m[i].name[0]);
		check(!strchr(m[i].name, '/') && strcmp(m[i].name, "..") && strcmp(m[i].name, "."));
		check(m[i].len <= sizeof(m[i].content));
	}
	same_request(&j, m, n, size);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *patched;
	char type[64];

	/* the same bytes as a mount table: a type refused fits and ends */
	type[0] = '\0';
	if (mad_writer_mount_local((const char *)data, size, "/usr/libexec/mad-spank/mad-writer",
				   type, sizeof(type)) == 0)
		check(memchr(type, '\0', sizeof(type)) != NULL && type[0] != '\0');
	one(data, size);
	if (size < 32)
		return 0;
	patched = malloc(size);
	check(patched != NULL);
	memcpy(patched, data, size);
	memcpy(patched, "madwrite", 8);
	memset(patched + 8, 0, 24);
	memcpy(patched + 8, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	one(patched, size);
	free(patched);
	return 0;
}
