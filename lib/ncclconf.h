/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ncclconf.h: whether NCCL would take a variable from one of its own
 * configuration files, so that mad sets no NCCL_SOCKET_IFNAME over a value
 * NCCL reads there (design.md §5).
 *
 * NCCL's rules (NVIDIA/nccl src/misc/param.cc, initEnvFunc and setEnvFile):
 *  - the files: NCCL_CONF_FILE when set and not empty, else ~/.nccl.conf;
 *    then /etc/nccl.conf.  ~ is the password database's home of the
 *    process's user; mad reads HOME from the job's environment, which is
 *    that directory unless a site sets HOME elsewhere;
 *  - each line (getline): a line whose first byte is '#' is skipped; one
 *    trailing '\n' is dropped (a '\r' stays part of the value); the name is
 *    what comes before the first '=', the value all after it (no blank is
 *    trimmed); a line without '=' is skipped; name and value are cut to
 *    1023 bytes;
 *  - every pair is set without overwriting (setenv(name, value, 0)): the
 *    environment wins, then the first file and the first line that name it.
 * And NCCL uses NCCL_SOCKET_IFNAME only when it is longer than one byte
 * (src/misc/socket.cc ncclFindInterfaces: strlen(env) > 1): a shorter value
 * is no choice, and mad may make one.
 *
 * Every read is bounded: a file counts only if it is a regular file, opened
 * without blocking (a FIFO or a device is never read), and only its first
 * MAD_NCCLCONF_MAX bytes are read, through the descriptor that was checked. */
#ifndef MAD_NCCLCONF_H
#define MAD_NCCLCONF_H

#include <stddef.h>

#define MAD_NCCLCONF_MAX (64 * 1024)

/* The value NCCL would take for NAME from the LEN bytes of one file's TEXT
 * (no NUL needed), copied into VALUE (SIZE bytes, cut as NCCL cuts it):
 * 1 named, 0 not.  Total: any bytes in. */
int mad_ncclconf_parse(const char *text, size_t len, const char *name, char *value, size_t size);

/* Where the files are and who may decide, for mad_ncclconf_lookup. */
struct mad_ncclconf_files {
	const char *conf_file; /* NCCL_CONF_FILE of the job, NULL or "" unset */
	const char *home;      /* HOME of the job, NULL unknown */
	const char *etc;       /* NULL: "/etc/nccl.conf" (tests give another) */
	long uid;              /* the job's user; -1 the caller's */
	int etc_only;          /* read no file but ETC (inside spur's node
				* daemon, which must not read a user's home) */
};

/* The first file of NCCL's order that names NAME decides: 1 with its value
 * in VALUE and its path in PATH, 0 when none does.  A file that is missing,
 * unreadable, not regular or (as root, for a job's uid) not trusted is
 * passed over, as NCCL passes over one it cannot open.  Trusted, read as
 * root for uid U: owned by U, or owned by root and readable by all; a file
 * another user owns decides nothing for this job. */
int mad_ncclconf_lookup(const struct mad_ncclconf_files *files, const char *name, char *value,
			size_t vsize, char *path, size_t psize);

#endif
