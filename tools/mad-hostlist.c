/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mad-hostlist: expand, compress, count and index SLURM node lists.
 *
 * A front-end to lib/hostlist: options, input and output only.  Unlike
 * "scontrol show hostnames" it needs no slurm.conf, runs on spur, and exits
 * non-zero on a bad list instead of printing an error and returning 0. */
#include "config.h"

#include "common.h"
#include "decimal.h"
#include "hostlist.h"
#include "strbuf.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_BADLIST MAD_EXIT_FAIL

static const char usage_text[] =
	"Usage: mad-hostlist [OPTION]... COMMAND [HOSTLIST]...\n"
	"Expand, compress, count or index SLURM node lists.\n"
	"\n"
	"Commands:\n"
	"  expand          print every host name, one per line\n"
	"  compress        print the list as one compressed expression\n"
	"  count           print the number of host names\n"
	"  nth N           print host name N, counting from 0\n"
	"\n"
	"Options:\n"
	"  -s, --sort          SLURM's sorted order: name, then number\n"
	"  -u, --uniq          drop repeated host names, keeping the first\n"
	"  -m, --max-hosts=N   refuse a list of more than N host names\n"
	"  -d, --sep=SEP       separator for expand (default: newline;\n"
	"                      \\n, \\t, \\0 and \\\\ are understood)\n"
	"  -f, --format=FMT    expand as a hostfile, one node a line in rank order:\n"
	"                      deepspeed or mpi ('HOST slots=N'), json\n"
	"  -S, --slots=N       slots per node in a hostfile (default:\n"
	"                      $MAD_GPUS_PER_NODE, else 1)\n"
	"  -h, --help          show this help and exit\n"
	"  -V, --version       show the version and exit\n"
	"\n"
	"HOSTLIST arguments are read as one list; '-' reads standard input.\n"
	"With none: $SLURM_JOB_NODELIST, else $SLURM_NODELIST, else standard\n"
	"input when it is not a terminal.\n"
	"\n"
	"Exit status: 0 success, 1 bad host list or index, 64 usage error,\n"
	"74 read or write error.\n";

/* expand --format: the hostfiles launchers read (doc/mad-hostlist.1 cites
 * each format's documentation). */
enum hostfile_format { FORMAT_NONE, FORMAT_SLOTS, FORMAT_JSON };

struct opts {
	int sort, uniq;
	enum hostfile_format format;
	uint64_t slots;
	int started;        /* a name was written: the next needs SEP */
	uint64_t max_hosts; /* 0: no limit */
	const char *sep;
	size_t sep_len;
};

/* Strict unsigned decimal (decimal.h): digits only, no sign, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
	return mad_decimal_span(s, strlen(s), 0, UINT64_MAX, out);
}

/* Turns \n \t \0 \\ in SEP into bytes, in place; -1 on another escape. */
static int unescape_sep(char *sep, size_t *len)
{
	size_t i, o = 0;

	for (i = 0; sep[i]; i++) {
		if (sep[i] != '\\') {
			sep[o++] = sep[i];
			continue;
		}
		switch (sep[++i]) {
		case 'n':
			sep[o++] = '\n';
			break;
		case 't':
			sep[o++] = '\t';
			break;
		case '0':
			sep[o++] = '\0';
			break;
		case '\\':
			sep[o++] = '\\';
			break;
		default:
			return -1;
		}
	}
	*len = o;
	return 0;
}

/* Gathers the input text and says where it came from, for messages. */
static int gather_input(char **args, int nargs, struct strbuf *in, const char **source)
{
	static char dash[] = "-";
	static char *stdin_only[] = { dash };
	const char *env;
	int i;

	if (nargs == 0) {
		env = getenv("SLURM_JOB_NODELIST");
		*source = "SLURM_JOB_NODELIST";
		if (!env || !*env) {
			env = getenv("SLURM_NODELIST");
			*source = "SLURM_NODELIST";
		}
		if (env && *env) {
			sb_adds(in, env);
			return in->failed ? MAD_EXIT_IO : 0;
		}
		if (isatty(STDIN_FILENO)) {
			tool_error("no host list: give one as an argument, "
				   "'-' for standard input, or set SLURM_JOB_NODELIST");
			return MAD_EXIT_USAGE;
		}
		nargs = 1;
		args = stdin_only;
	}
	*source = nargs == 1 && strcmp(args[0], "-") ? "the argument" :
		  nargs == 1                         ? "standard input" :
						       "the arguments";
	for (i = 0; i < nargs; i++) {
		if (i)
			sb_addc(in, ',');
		if (strcmp(args[i], "-") == 0) {
			if (sb_read(in, stdin, SIZE_MAX)) {
				tool_error("cannot read standard input: %s", strerror(errno));
				return MAD_EXIT_IO;
			}
		} else {
			sb_adds(in, args[i]);
		}
	}
	return in->failed ? MAD_EXIT_IO : 0;
}

static int write_name(const char *name, size_t len, void *arg)
{
	struct opts *o = arg;

	if (o->format == FORMAT_SLOTS) {
		fwrite(name, 1, len, stdout);
		printf(" slots=%" PRIu64 "\n", o->slots);
		return ferror(stdout) ? 1 : 0;
	}
	if (o->format == FORMAT_JSON) {
		/* host names are [A-Za-z0-9._-] (lib/hostlist): nothing to escape */
		fputs(o->started ? ",\n  {\"host\": \"" : "[\n  {\"host\": \"", stdout);
		fwrite(name, 1, len, stdout);
		printf("\", \"slots\": %" PRIu64 "}", o->slots);
		o->started = 1;
		return ferror(stdout) ? 1 : 0;
	}
	if (o->started)
		fwrite(o->sep, 1, o->sep_len, stdout);
	o->started = 1;
	fwrite(name, 1, len, stdout);
	return ferror(stdout) ? 1 : 0;
}

/* Ends expand's output: a newline, or the separator itself when that is a
 * newline or NUL (so "--sep='\0'" feeds "xargs -0" cleanly). */
static void end_names(const struct opts *o)
{
	if (o->format == FORMAT_JSON) {
		if (o->started) /* an empty list never gets here */
			fputs("\n]\n", stdout);
		return;
	}
	if (!o->started || o->format == FORMAT_SLOTS)
		return;
	if (o->sep_len == 1 && (o->sep[0] == '\n' || o->sep[0] == '\0'))
		fwrite(o->sep, 1, 1, stdout);
	else
		fputc('\n', stdout);
}

static int out_of_memory(void)
{
	tool_error("out of memory");
	return MAD_EXIT_IO;
}

/* A hostfile has one line per node: DeepSpeed refuses a host named twice
 * (runner.py, "Hostfile contains multiple entries"), OpenMPI would add up
 * its slots.  So a repeated name is a bad list here, named. */
static int check_one_line_per_node(const struct hostvec *v)
{
	struct hostvec sorted = HOSTVEC_INIT;
	int rc = 0;

	for (size_t i = 0; i < v->n && !rc; i++)
		if (hostvec_push(&sorted, hostvec_at(v, i), strlen(hostvec_at(v, i))))
			rc = out_of_memory();
	if (!rc && hostvec_sort(&sorted))
		rc = out_of_memory();
	for (size_t i = 1; i < sorted.n && !rc; i++)
		if (strcmp(hostvec_at(&sorted, i - 1), hostvec_at(&sorted, i)) == 0) {
			tool_error("--format: host '%s' is in the list twice; a hostfile has one line per node (--uniq drops repeats)",
				   hostvec_at(&sorted, i));
			rc = EXIT_BADLIST;
		}
	hostvec_free(&sorted);
	return rc;
}

/* --slots=N, else MAD_GPUS_PER_NODE, else 1.  A node without GPUs
 * (MAD_GPUS_PER_NODE=0, as in a CPU-only job on spur 0.12) still runs
 * one process: 1 slot. */
static int hostfile_slots(const char *arg, uint64_t *slots)
{
	const char *gpus = getenv("MAD_GPUS_PER_NODE");

	if (arg) {
		if (parse_u64(arg, slots) || *slots == 0 || *slots > 1000000)
			return usage_error("--slots: '%s' is not a number of slots (1 to 1000000)",
					   arg);
		return 0;
	}
	*slots = 1;
	if (gpus && *gpus && (parse_u64(gpus, slots) || *slots > 1000000))
		return usage_error("MAD_GPUS_PER_NODE='%s' is not a number of slots (0 to 1000000); give --slots=N",
				   gpus);
	if (*slots == 0)
		*slots = 1;
	return 0;
}

static int run(const char *cmd, const char *index_arg, struct opts *o, const struct hostlist *hl)
{
	struct hostvec v = HOSTVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	uint64_t index = 0;
	int rc = 0, need_vector = o->sort || o->uniq || o->format != FORMAT_NONE ||
				  strcmp(cmd, "compress") == 0;

	if (index_arg && parse_u64(index_arg, &index))
		return usage_error("nth: '%s' is not a host index (0, 1, 2, ...)", index_arg);
	if (!need_vector) {
		if (strcmp(cmd, "count") == 0) {
			printf("%" PRIu64 "\n", hostlist_count(hl));
		} else if (strcmp(cmd, "nth") == 0) {
			size_t size = hostlist_max_len(hl) + 1;
			char *name = malloc(size);

			if (!name)
				return out_of_memory();
			if (hostlist_nth(hl, index, name, size) < 0) {
				tool_error("nth: index %" PRIu64
					   " is out of range: the list has %" PRIu64 " hosts",
					   index, hostlist_count(hl));
				rc = EXIT_BADLIST;
			} else {
				puts(name);
			}
			free(name);
		} else if (hostlist_foreach(hl, write_name, o) < 0) {
			return out_of_memory();
		} else {
			end_names(o);
		}
		return rc ? rc : finish_output();
	}

	if (hostvec_add_hostlist(&v, hl) || (o->sort && hostvec_sort(&v)) ||
	    (o->uniq && hostvec_uniq(&v))) {
		hostvec_free(&v);
		return out_of_memory();
	}
	if (o->format != FORMAT_NONE) {
		rc = check_one_line_per_node(&v);
		if (rc) {
			hostvec_free(&v);
			return rc;
		}
	}
	if (strcmp(cmd, "count") == 0) {
		printf("%zu\n", v.n);
	} else if (strcmp(cmd, "nth") == 0) {
		if (index >= v.n) {
			tool_error("nth: index %" PRIu64 " is out of range: the list has %zu hosts",
				   index, v.n);
			rc = EXIT_BADLIST;
		} else {
			puts(hostvec_at(&v, (size_t)index));
		}
	} else if (strcmp(cmd, "compress") == 0) {
		if (hostvec_compress(&v, &out))
			rc = out_of_memory();
		else
			puts(out.buf);
	} else {
		for (size_t i = 0; i < v.n && !ferror(stdout); i++)
			write_name(hostvec_at(&v, i), strlen(hostvec_at(&v, i)), o);
		end_names(o);
	}
	sb_free(&out);
	hostvec_free(&v);
	return rc ? rc : finish_output();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sort", no_argument, NULL, 's' },
		{ "uniq", no_argument, NULL, 'u' },
		{ "max-hosts", required_argument, NULL, 'm' },
		{ "sep", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "slots", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char outbuf[1 << 16];
	struct opts o = { 0, 0, FORMAT_NONE, 1, 0, 0, "\n", 1 };
	struct strbuf in = STRBUF_INIT;
	struct hostlist *hl = NULL;
	struct hl_error err;
	const char *cmd, *index_arg = NULL, *source = "", *slots_arg = NULL;
	int c, rc, sep_given = 0;

	mad_prog_init(argv[0], "mad-hostlist");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sum:d:f:S:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.sort = 1;
			break;
		case 'u':
			o.uniq = 1;
			break;
		case 'm':
			if (parse_u64(optarg, &o.max_hosts) || o.max_hosts == 0)
				return usage_error("--max-hosts: '%s' is not a number of hosts (1 or more)",
						   optarg);
			break;
		case 'd':
			if (unescape_sep(optarg, &o.sep_len))
				return usage_error("--sep: '%s' has an escape other than \\n, \\t, \\0 or \\\\",
						   optarg);
			o.sep = optarg;
			sep_given = 1;
			break;
		case 'f':
			if (strcmp(optarg, "deepspeed") == 0 || strcmp(optarg, "mpi") == 0)
				o.format = FORMAT_SLOTS;
			else if (strcmp(optarg, "json") == 0)
				o.format = FORMAT_JSON;
			else
				return usage_error("--format: '%s' is not a hostfile format (deepspeed, mpi or json)",
						   optarg);
			break;
		case 'S':
			slots_arg = optarg;
			break;
		case 'h':
			print_help(usage_text);
		case 'V':
			print_version();
		default:
			return usage_bad_option(c, argv);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "missing command (expand, compress, count or nth N)");
	cmd = argv[optind++];
	if (strcmp(cmd, "nth") == 0) {
		if (optind >= argc)
			return usage_error("%s", "nth: missing the index N");
		index_arg = argv[optind++];
	} else if (strcmp(cmd, "expand") && strcmp(cmd, "compress") && strcmp(cmd, "count")) {
		return usage_error("unknown command '%s' (expand, compress, count or nth N)", cmd);
	}

	if ((o.format != FORMAT_NONE || slots_arg) && strcmp(cmd, "expand"))
		return usage_error("%s: --format and --slots go with expand", cmd);
	if (slots_arg && o.format == FORMAT_NONE)
		return usage_error("%s", "--slots needs --format (deepspeed, mpi or json)");
	if (sep_given && o.format != FORMAT_NONE)
		return usage_error("%s",
				   "--sep and --format do not go together: a hostfile has one node a line");
	if (o.format != FORMAT_NONE) {
		rc = hostfile_slots(slots_arg, &o.slots);
		if (rc)
			return rc;
	}

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	rc = gather_input(argv + optind, argc - optind, &in, &source);
	if (rc) {
		sb_free(&in);
		return rc;
	}
	if (hostlist_parse(in.buf ? in.buf : "", in.len, &hl, &err)) {
		tool_error("bad host list in %s: %s", source, err.msg);
		sb_free(&in);
		return EXIT_BADLIST;
	}
	sb_free(&in);
	if (o.max_hosts && hostlist_count(hl) > o.max_hosts) {
		tool_error("the host list in %s has %" PRIu64 " hosts, more than --max-hosts=%" PRIu64,
			   source, hostlist_count(hl), o.max_hosts);
		hostlist_free(hl);
		return EXIT_BADLIST;
	}
	rc = run(cmd, index_arg, &o, hl);
	hostlist_free(hl);
	return rc;
}
