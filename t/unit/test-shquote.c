/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/shquote: fixed cases, and a property test in which
 * dash and bash each read back thousands of random values exactly. */
#include "shquote.h"
#include "strbuf.h"
#include "unit.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *quote(const char *s)
{
	static struct strbuf sb;

	sb_reset(&sb);
	if (shell_quote(&sb, s, strlen(s)))
		return "(rejected)";
	return sb_cstr(&sb);
}

TEST(fixed_cases)
{
	CHECK_STR(quote(""), "''");
	CHECK_STR(quote("abc"), "abc");
	CHECK_STR(quote("/usr/bin/x-1.2_3,a:b@c%d+e"), "/usr/bin/x-1.2_3,a:b@c%d+e");
	CHECK_STR(quote("a b"), "'a b'");
	CHECK_STR(quote("it's"), "'it'\\''s'");
	CHECK_STR(quote("'"), "''\\'''");
	CHECK_STR(quote("$(id)"), "'$(id)'");
	CHECK_STR(quote("a=b"), "'a=b'");
	CHECK_STR(quote("~root"), "'~root'");
	CHECK_STR(quote("x#y"), "'x#y'");
	CHECK_STR(quote("line\nbreak"), "'line\nbreak'");
}

TEST(nul_is_rejected)
{
	struct strbuf sb = STRBUF_INIT;

	CHECK(shell_quote(&sb, "a\0b", 3) == -1);
	CHECK(sb.len == 0);
	sb_free(&sb);
}

static const char *sbatch_word(const char *s, size_t len)
{
	static struct strbuf sb;

	sb_reset(&sb);
	if (sbatch_quote(&sb, s, len))
		return "(rejected)";
	return sb_cstr(&sb);
}

TEST(sbatch_words_bare_quoted_or_rejected)
{
	CHECK_STR(sbatch_word("ALL,A=1", 7), "ALL,A=1");
	CHECK_STR(sbatch_word("", 0), "''");
	CHECK_STR(sbatch_word("a b#c", 5), "'a b#c'");
	CHECK_STR(sbatch_word("it's", 4), "'it\\'s'");
	CHECK_STR(sbatch_word("a\\b", 3), "'a\\\\b'");
	CHECK_STR(sbatch_word("a\nb", 3), "(rejected)");
	CHECK_STR(sbatch_word("a\rb", 3), "(rejected)");
	CHECK_STR(sbatch_word("a\0b", 3), "(rejected)");
}

/* Runs SHELL -c "printf %s WORD" and returns what it printed. */
static int shell_reads(const char *shell, const char *word, struct strbuf *out)
{
	struct strbuf script = STRBUF_INIT;
	int fd[2], status;
	char buf[4096];
	ssize_t n;
	pid_t pid;

	sb_adds(&script, "printf %s ");
	sb_adds(&script, word);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp(shell, shell, "-c", sb_cstr(&script), (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	sb_reset(out);
	while ((n = read(fd[0], buf, sizeof(buf))) > 0)
		sb_add(out, buf, (size_t)n);
	close(fd[0]);
	waitpid(pid, &status, 0);
	sb_free(&script);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

TEST(dash_and_bash_read_back_random_values)
{
	static const char *shells[] = { "dash", "bash" };
	static const char tricky[] = "'\"\\$`!#*?[]{}()<>|&;~= \t\n\r-";
	struct strbuf word = STRBUF_INIT, got = STRBUF_INIT;
	unsigned seed = 7;
	int i, s, mismatches = 0;

	for (i = 0; i < 1500; i++) {
		char value[200];
		size_t len = (size_t)(rand_r(&seed) % 40), k;

		for (k = 0; k < len; k++) {
			int pick = rand_r(&seed) % 4;

			if (pick == 0)
				value[k] = tricky[rand_r(&seed) % (sizeof(tricky) - 1)];
			else if (pick == 1) /* any byte but NUL, UTF-8 included */
				value[k] = (char)(1 + rand_r(&seed) % 255);
			else
				value[k] = (char)('a' + rand_r(&seed) % 26);
		}
		value[len] = '\0';
		sb_reset(&word);
		CHECK(shell_quote(&word, value, len) == 0);
		for (s = 0; s < 2; s++) {
			if (shell_reads(shells[s], sb_cstr(&word), &got) || got.len != len ||
			    memcmp(got.buf, value, len)) {
				if (mismatches++ < 5)
					printf("# %s misread the quoted word %s\n", shells[s],
					       word.buf);
				CHECK(0);
			}
		}
	}
	sb_free(&word);
	sb_free(&got);
}

int main(void)
{
	RUN(fixed_cases);
	RUN(nul_is_rejected);
	RUN(sbatch_words_bare_quoted_or_rejected);
	RUN(dash_and_bash_read_back_random_values);
	return unit_done();
}
