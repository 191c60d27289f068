/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ncclconf.h: whether NCCL would take a variable from one of its own
 * configuration files, so that mad sets no NCCL_SOCKET_IFNAME over a value
 * NCCL reads there (design.md §5).
 *
 * NCCL's rules (NVIDIA/nccl src/misc/param.cc, initEnvFunc and setEnvFile,
 * as of v2.30.7-1, 73cf112, and master 5067397 of 2026-06-11):
 *  - the files: NCCL_CONF_FILE when set and not empty, else $HOME/.nccl.conf
 *    (userHomeDir: getenv("HOME"); none without HOME); then /etc/nccl.conf.
 *    A path is cut to 1023 bytes (confFilePath[1024]), and that is the file
 *    opened.  A file fopen cannot open is passed over;
 *  - each line as fgets(line, 4096) reads it: up to and with the first '\n',
 *    or 4095 bytes when none comes sooner (the rest of a longer line is read
 *    as lines of its own); as a C string (a NUL ends it); one trailing '\n'
 *    dropped, then one trailing '\r' (CRLF files); a line whose first byte
 *    is '#' is skipped; the name is what comes before the first '=', the
 *    value all after it (no blank is trimmed; an empty value is a value); a
 *    line without '=' is skipped; name and value are cut to 1023 bytes;
 *  - every pair is set without overwriting (src/os/linux.cc ncclOsSetEnv:
 *    setenv(name, value, 0)): the environment wins, then the first file and
 *    the first line that name it.  setenv refuses an empty name.
 * NCCL up to 2.29.7 (tag v2.29.7-1, b91894b) read each line whole (getline:
 * no 4095-byte pieces), kept a '\r' in the value, and took ~ from the
 * password database (getpwuid(getuid())->pw_dir).  Where no line is longer
 * than 4095 bytes both take the same variables from a file (a CRLF file's
 * values differ by the '\r'); a longer line's later pieces name variables
 * for 2.30 only, and mad counts them: it errs towards leaving a variable to
 * the file.  mad takes HOME from the job's environment, as NCCL 2.30 does.
 * And NCCL uses NCCL_SOCKET_IFNAME only when it is longer than one byte
 * (src/misc/socket.cc ncclFindInterfaces: strlen(env) > 1): a shorter value
 * is no choice, and mad may make one.
 *
 * Every read is bounded: a file counts only if it is a regular file, opened
 * without blocking (a FIFO or a device is never read), and only its first
 * MAD_NCCLCONF_MAX bytes are read, through the descriptor that was checked:
 * a longer file is its first 64 KiB, and a line cut there ends there.
 * A read may still wait for its file system (a hung NFS home), as NCCL's
 * own would: the plugin reads a user's files only in that user's task. */
#ifndef MAD_NCCLCONF_H
#define MAD_NCCLCONF_H

#include <stddef.h>

#define MAD_NCCLCONF_MAX (64 * 1024)

/* The value NCCL would take for NAME from the LEN bytes of one file's TEXT
 * (no NUL needed), cut as NCCL cuts it (1023 bytes), then to SIZE - 1, into
 * VALUE with a NUL (SIZE 0: VALUE untouched, may be NULL): 1 named, 0 not
 * (an empty NAME never is).  Total: any bytes in, nothing read past LEN. */
int mad_ncclconf_parse(const char *text, size_t len, const char *name, char *value, size_t size);

/* Where the files are and who may decide, for mad_ncclconf_lookup. */
struct mad_ncclconf_files {
	const char *conf_file; /* NCCL_CONF_FILE of the job, NULL or "" unset */
	const char *home;      /* HOME of the job, NULL unset ("" is "/.nccl.conf") */
	const char *etc;       /* NULL: "/etc/nccl.conf" (tests give another) */
	long uid;              /* the job's user; -1 the caller's */
	int etc_only;          /* read no file but ETC (inside spur's node
				* daemon, which must not read a user's home) */
};

/* The first file of NCCL's order that names NAME decides: 1 with its value
 * in VALUE and its path in PATH, 0 when none does.  A file that is missing,
 * unreadable, not regular or (as root, for a job's uid) not trusted is
 * passed over, as NCCL passes over one it cannot open.  Trusted, read as
 * root for uid U: owned by U and readable by its owner, or owned by root and
 * readable by all; a file another user owns decides nothing for this job.
 * PATH is cut to PSIZE - 1 bytes. */
int mad_ncclconf_lookup(const struct mad_ncclconf_files *files, const char *name, char *value,
			size_t vsize, char *path, size_t psize);

#endif
