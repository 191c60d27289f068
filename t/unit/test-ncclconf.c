/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-ncclconf: NCCL's configuration files as NCCL reads them
 * (lib/ncclconf.h), and every read bounded and trusted. */
#include "ncclconf.h"
#include "unit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test-ncclconf.XXXXXX";
static char path[512], value[1100], from[512];

static const char *write_file(const char *name, const char *text, size_t len)
{
	static char p[4][512];
	static int k;
	char *out = p[k++ % 4];
	int fd;

	snprintf(out, 512, "%s/%s", dir, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		abort();
	close(fd);
	return out;
}

static int parse(const char *text, const char *name)
{
	return mad_ncclconf_parse(text, strlen(text), name, value, sizeof(value));
}

/* setEnvFile's line rules (NVIDIA/nccl src/misc/param.cc). */
TEST(lines_as_nccl_reads_them)
{
	CHECK(parse("NCCL_SOCKET_IFNAME=ib0\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "ib0");
	/* a comment, a line without '=', a longer and a shorter name */
	CHECK(parse("#NCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_IFNAME\nNCCL_SOCKET_IFNAMES=x\n"
		    "NCCL_SOCKET=y\n",
		    "NCCL_SOCKET_IFNAME") == 0);
	/* no blank trimmed: " NAME" is another name, and the value keeps its own */
	CHECK(parse(" NCCL_SOCKET_IFNAME=a\nNCCL_SOCKET_IFNAME= b \n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, " b ");
	/* the value is all after the first '=' */
	CHECK(parse("NCCL_SOCKET_IFNAME==ens1f0\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "=ens1f0");
	/* the first line that names it wins (setenv without overwriting) */
	CHECK(parse("NCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_IFNAME=eth1\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "eth0");
	/* an empty value names it: NCCL sets it, empty */
	CHECK(parse("NCCL_SOCKET_IFNAME=\nNCCL_SOCKET_IFNAME=eth1\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "");
	/* one '\n' is dropped, then one '\r': a CRLF file's value is without it */
	CHECK(parse("NCCL_SOCKET_IFNAME=eth0\r\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "eth0");
	CHECK(parse("NCCL_SOCKET_IFNAME=eth0\r\r\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "eth0\r");
	CHECK(parse("NCCL_SOCKET_IFNAME=eth0\r", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "eth0");
	CHECK(parse("NCCL_SOCKET_IFNAME=\r\n", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "");
	CHECK(parse("\r\n#\r\nNCCL_SOCKET_IFNAME\r\n", "NCCL_SOCKET_IFNAME") == 0);
	/* the last line needs no newline */
	CHECK(parse("NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME=^docker,lo", "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "^docker,lo");
	/* a NUL ends the line as NCCL's C string does */
	CHECK(mad_ncclconf_parse("NCCL_SOCKET\0IFNAME=x\nNCCL_SOCKET_IFNAME=a\0b\n", 44,
				 "NCCL_SOCKET_IFNAME", value, sizeof(value)) == 1);
	CHECK_STR(value, "a");
	/* the '\r' before such a NUL ends the C string: dropped */
	CHECK(mad_ncclconf_parse("N=a\r\0b\n", 7, "N", value, sizeof(value)) == 1);
	CHECK_STR(value, "a");
	/* setenv refuses an empty name: "=x" sets nothing */
	CHECK(parse("=x\n", "") == 0);
	/* a small buffer gets the value's start; none counts all the same */
	CHECK(mad_ncclconf_parse("N=abcdef\n", 9, "N", value, 4) == 1);
	CHECK_STR(value, "abc");
	CHECK(mad_ncclconf_parse("N=abcdef\n", 9, "N", NULL, 0) == 1);
	CHECK(parse("", "N") == 0);
}

/* Values and names are cut to 1023 bytes, as NCCL's buffers cut them. */
TEST(names_and_values_cut_at_1023_bytes)
{
	static char text[3000], name[1100];

	memset(text, 'v', sizeof(text));
	memcpy(text, "N=", 2);
	text[2500] = '\0';
	CHECK(parse(text, "N") == 1);
	CHECK(strlen(value) == 1023);
	memset(name, 'n', 1023);
	name[1023] = '\0';
	memset(text, 'n', 1500);
	text[1500] = '=';
	strcpy(text + 1501, "x");
	CHECK(parse(text, name) == 1); /* the 1500-byte key cut to 1023 */
	CHECK_STR(value, "x");
}

/* fgets(line, 4096): a line longer than 4095 bytes is read in pieces, and
 * each piece is a line of its own. */
TEST(a_line_of_more_than_4095_bytes_is_read_as_several)
{
	static char text[5000], name[1024];

	/* the second piece starts with the name: NCCL 2.30 sets it */
	memset(text, 'x', sizeof(text));
	memcpy(text, "X=", 2);
	strcpy(text + 4095, "NCCL_SOCKET_IFNAME=eth9\n");
	CHECK(parse(text, "NCCL_SOCKET_IFNAME") == 1);
	CHECK_STR(value, "eth9");
	/* one byte further, the piece starts with "N" cut off */
	memset(text, 'x', sizeof(text));
	memcpy(text, "X=", 2);
	strcpy(text + 4096, "NCCL_SOCKET_IFNAME=eth9\n");
	CHECK(parse(text, "NCCL_SOCKET_IFNAME") == 0);
	/* a comment of exactly 4095 bytes leaves its '\n' as an empty piece */
	memset(text, '#', 4095);
	strcpy(text + 4095, "\nN=a\n");
	CHECK(parse(text, "N") == 1);
	CHECK_STR(value, "a");
	/* a '\r' is dropped at a piece's end too: a 1023-byte name (a
	 * 3500-byte key cut to it), then 593 bytes of value and a '\r' */
	memset(name, 'n', 1023);
	name[1023] = '\0';
	memset(text, 'n', 3500);
	text[3500] = '=';
	memset(text + 3501, 'v', 593);
	strcpy(text + 4094, "\rtail\n");
	CHECK(parse(text, name) == 1);
	CHECK(strlen(value) == 593 && value[592] == 'v');
}

/* NCCL_CONF_FILE replaces ~/.nccl.conf; /etc/nccl.conf comes after
 * either; the first file that names it decides. */
TEST(the_first_file_of_nccls_order_that_names_it_decides)
{
	const char *etc = write_file("etc.conf", "NCCL_SOCKET_IFNAME=etc0\n", 24);
	const char *conf = write_file("conf", "NCCL_SOCKET_IFNAME=conf0\n", 25);
	char home[512];
	struct mad_ncclconf_files f = { NULL, home, etc, -1, 0 };

	snprintf(home, sizeof(home), "%s", dir);
	write_file(".nccl.conf", "NCCL_SOCKET_IFNAME=home0\n", 25);
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	CHECK_STR(value, "home0");
	snprintf(path, sizeof(path), "%s/.nccl.conf", dir);
	CHECK_STR(from, path);
	f.conf_file = conf;
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	CHECK_STR(value, "conf0");
	/* an empty NCCL_CONF_FILE is unset: ~/.nccl.conf */
	f.conf_file = "";
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	CHECK_STR(value, "home0");
	/* a user file that does not name it: /etc's */
	f.conf_file = write_file("other", "NCCL_DEBUG=INFO\n", 16);
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	CHECK_STR(value, "etc0");
	CHECK_STR(from, etc);
	/* inside spur's node daemon only /etc's is read */
	f.conf_file = conf;
	f.etc_only = 1;
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	CHECK_STR(value, "etc0");
	/* none names it, or none is there */
	f.etc_only = 0;
	CHECK(mad_ncclconf_lookup(&f, "NCCL_IB_HCA", value, sizeof(value), from, sizeof(from)) == 0);
	f.conf_file = "/nonexistent/nccl.conf";
	f.etc = "/nonexistent/etc.conf";
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 0);
}

/* A path is cut to 1023 bytes (confFilePath[1024]): NCCL opens the cut one. */
TEST(a_path_is_cut_to_1023_bytes_as_nccl_cuts_it)
{
	static char full[1100], given[1200], got[1100];
	struct mad_ncclconf_files f = { NULL, NULL, "/nonexistent", -1, 0 };
	size_t n;
	int fd;

	snprintf(full, sizeof(full), "%s", dir);
	while ((n = strlen(full)) < 1023 - 250) {
		memset(full + n, 'd', 201);
		full[n] = '/';
		full[n + 201] = '\0';
		CHECK(mkdir(full, 0755) == 0);
	}
	full[n] = '/';
	memset(full + n + 1, 'f', 1023 - n - 1);
	full[1023] = '\0';
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "N=cut\n", 6) == 6);
	if (fd >= 0)
		close(fd);
	snprintf(given, sizeof(given), "%s.not-this-one", full);
	f.conf_file = given;
	CHECK(mad_ncclconf_lookup(&f, "N", value, sizeof(value), got, sizeof(got)) == 1);
	CHECK_STR(value, "cut");
	CHECK_STR(got, full);
}

/* A FIFO, a folder or a device is never read (a FIFO would block); a
 * long file is read to its first 64 KiB only. */
TEST(only_regular_files_and_only_their_first_64_kib)
{
	static char big[MAD_NCCLCONF_MAX + 100];
	struct mad_ncclconf_files f = { NULL, NULL, "/nonexistent", -1, 0 };
	char fifo[512];

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0644) == 0);
	f.conf_file = fifo;
	CHECK(mad_ncclconf_lookup(&f, "N", value, sizeof(value), from, sizeof(from)) == 0);
	f.conf_file = dir;
	CHECK(mad_ncclconf_lookup(&f, "N", value, sizeof(value), from, sizeof(from)) == 0);
	f.conf_file = "/dev/zero";
	CHECK(mad_ncclconf_lookup(&f, "N", value, sizeof(value), from, sizeof(from)) == 0);
	memset(big, '#', sizeof(big));
	memcpy(big + MAD_NCCLCONF_MAX - 8, "\nN=a\n", 5);
	memcpy(big + MAD_NCCLCONF_MAX + 10, "\nM=b\n", 5);
	f.conf_file = write_file("big", big, sizeof(big));
	CHECK(mad_ncclconf_lookup(&f, "N", value, sizeof(value), from, sizeof(from)) == 1);
	CHECK(mad_ncclconf_lookup(&f, "M", value, sizeof(value), from, sizeof(from)) == 0);
}

/* Read as root for a job's user: the user's own file, or root's that all
 * may read; never another user's, nor one only root may read. */
TEST(as_root_only_the_users_or_roots_world_readable_files_decide)
{
	struct mad_ncclconf_files f = { NULL, NULL, "/nonexistent", 1000, 0 };
	const char *p = write_file("owned", "NCCL_SOCKET_IFNAME=ib0\n", 23);

	if (geteuid() != 0) {
		printf("# not root: the ownership rules apply only to root's reads\n");
		return;
	}
	f.conf_file = p;
	CHECK(chown(p, 1000, 1000) == 0);
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	CHECK(chmod(p, 0200) == 0); /* the user's, which the user cannot read */
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 0);
	CHECK(chmod(p, 0644) == 0);
	CHECK(chown(p, 12345, 12345) == 0); /* another user's */
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 0);
	CHECK(chown(p, 0, 0) == 0 && chmod(p, 0600) == 0); /* root's, for root alone */
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 0);
	CHECK(chmod(p, 0644) == 0); /* root's, for all */
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
	/* the caller's own reads (uid -1): what NCCL would read */
	f.uid = -1;
	CHECK(chmod(p, 0600) == 0);
	CHECK(mad_ncclconf_lookup(&f, "NCCL_SOCKET_IFNAME", value, sizeof(value), from,
				  sizeof(from)) == 1);
}

int main(void)
{
	char cmd[600];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	RUN(lines_as_nccl_reads_them);
	RUN(names_and_values_cut_at_1023_bytes);
	RUN(a_line_of_more_than_4095_bytes_is_read_as_several);
	RUN(the_first_file_of_nccls_order_that_names_it_decides);
	RUN(a_path_is_cut_to_1023_bytes_as_nccl_cuts_it);
	RUN(only_regular_files_and_only_their_first_64_kib);
	RUN(as_root_only_the_users_or_roots_world_readable_files_decide);
	rc = unit_done();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	return rc;
}
