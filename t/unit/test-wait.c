/* Unit tests for mad-wait's rules (lib/wait, lib/queue, lib/marker's
 * reader, lib/plugstack, lib/follow), on a real folder with a fake clock. */
#include "follow.h"
#include "marker.h"
#include "plugstack.h"
#include "queue.h"
#include "unit.h"
#include "wait.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char run_dir[] = "/tmp/mad-test-wait.XXXXXX";

static const struct mad_wait_cfg cfg = {
	.grace = 60, .startup_grace = 300, .empty_grace = 5, .gone_polls = 3, .nnodes = -1,
};

static void put(const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mkjob(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	mkdir(path, 0755);
}

TEST(marker_reader)
{
	long st, t;
	char host[64], note[256];

	CHECK(mad_marker_parse("0\nrank=1\nhost=n2\ntime=7\n", 23, &st, &t, host, 64, note, 256) == 1);
	CHECK(st == 0 && t == 7);
	CHECK_STR(host, "n2");
	CHECK(mad_marker_parse("3", 1, &st, &t, host, 64, note, 256) == 1 && st == 3);
	CHECK(mad_marker_parse(" 4 \r\n", 5, &st, &t, host, 64, note, 256) == 1 && st == 4);
	CHECK(mad_marker_parse("1\nerror=late\n", 13, &st, &t, host, 64, note, 256) == 1);
	CHECK_STR(note, "late");
	CHECK(mad_marker_parse("", 0, &st, &t, host, 64, note, 256) == 0);
	CHECK(mad_marker_parse("\n \n", 3, &st, &t, host, 64, note, 256) == 0);
	CHECK(mad_marker_parse("ok\n", 3, &st, &t, host, 64, note, 256) == -1);
	CHECK(strstr(note, "'ok'") != NULL);
	CHECK(mad_marker_parse("-1\n", 3, &st, &t, host, 64, note, 256) == -1);
	CHECK(mad_marker_parse("1x\n", 3, &st, &t, host, 64, note, 256) == -1);
	CHECK(mad_marker_parse("99999999999999999999\n", 21, &st, &t, host, 64, note, 256) == -1);
	CHECK(mad_marker_parse("0\0\n", 3, &st, &t, host, 64, note, 256) == -1);
}

TEST(time_limits)
{
	CHECK(mad_time_limit_parse("30") == 1800);
	CHECK(mad_time_limit_parse("5:00") == 300);
	CHECK(mad_time_limit_parse("1:00:00") == 3600);
	CHECK(mad_time_limit_parse("2-00:00:00") == 172800);
	CHECK(mad_time_limit_parse("1-2") == 93600);
	CHECK(mad_time_limit_parse("1-2:30") == 95400);
	CHECK(mad_time_limit_parse("UNLIMITED") == -1);
	CHECK(mad_time_limit_parse("NOT_SET") == -1);
	CHECK(mad_time_limit_parse("1:2:3:4") == -1);
	CHECK(mad_time_limit_parse("1:") == -1);
	CHECK(mad_time_limit_parse("") == -1);
}

TEST(queue_output)
{
	struct mad_queue_entry e[3] = { { .id = 12 }, { .id = 13 }, { .id = 14 } };
	const char *out =
		"12_0 RUNNING 1:00:00\n"
		"12_1 COMPLETED 1:00:00\n"
		"garbage\n"
		"120 RUNNING UNLIMITED\n"   /* another job: never matched by prefix */
		"13 CANCELLED 5:00\n"
		"\n"
		"x12 RUNNING\n";

	CHECK(mad_queue_parse(out, strlen(out), e, 3) == 2);
	CHECK(e[0].listing == LISTING_ACTIVE && e[0].array == 1);
	CHECK_STR(e[0].state, "RUNNING");
	CHECK(e[0].time_limit == 3600);
	CHECK(e[1].listing == LISTING_ENDED);
	CHECK_STR(e[1].state, "CANCELLED");
	CHECK(e[2].listing == LISTING_ABSENT);
	/* spur's squeue ignores custom delimiters: whitespace is all we need */
	CHECK(mad_queue_parse("14   PENDING\t 30\n", 17, e + 2, 1) == 0);
	CHECK(e[2].listing == LISTING_ACTIVE && e[2].time_limit == 1800);
	/* a pending array range */
	CHECK(mad_queue_parse("12_[0-3%2] PENDING 10\n", 22, e, 1) == 0 && e[0].listing == LISTING_ACTIVE);
}

TEST(markers_decide)
{
	struct mad_wait_job j;
	char err[512], missing[64];

	mad_wait_job_init(&j, 100, run_dir);
	CHECK(mad_wait_scan(&j, &cfg, 0, err, sizeof(err)) == 0);
	CHECK(!j.dir_seen && mad_wait_decide(&j, &cfg, 0) == WAIT_PENDING);
	mkjob("100");
	put("100/expected", "4\n");
	put("100/done_rank0", "0\nhost=a\n");
	put("100/done_rank2", "0\n");
	put("100/done_rank07", "1\n");      /* not a marker name */
	put("100/done_rank9", "1\n");       /* beyond the job's ranks */
	CHECK(mad_wait_scan(&j, &cfg, 1, err, sizeof(err)) == 2);
	CHECK(j.expected == 4 && j.ndone == 2 && j.nfailed == 0);
	mad_wait_missing(&j, missing, sizeof(missing));
	CHECK_STR(missing, "1,3");
	CHECK(mad_wait_decide(&j, &cfg, 1) == WAIT_PENDING);
	put("100/done_rank1", "0\n");
	put("100/done_rank3", "0\n");
	CHECK(mad_wait_scan(&j, &cfg, 2, err, sizeof(err)) == 2);
	CHECK(mad_wait_decide(&j, &cfg, 2) == WAIT_OK);
	mad_wait_job_free(&j);

	mad_wait_job_init(&j, 101, run_dir);
	mkjob("101");
	put("101/expected", "2\n");
	put("101/done_rank1", "3\nhost=n2\nerror=oom\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 0) == WAIT_FAILED);
	CHECK(strstr(j.reason, "rank 1 failed with exit status 3 on n2: oom") != NULL);
	mad_wait_job_free(&j);
}

TEST(empty_and_garbage_markers)
{
	struct mad_wait_job j;
	char err[512];

	mad_wait_job_init(&j, 102, run_dir);
	mkjob("102");
	put("102/expected", "2\n");
	put("102/done_rank0", "");
	put("102/done_rank1", "0\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(j.rank[0].state == RANK_EMPTY && mad_wait_decide(&j, &cfg, 0) == WAIT_PENDING);
	mad_wait_scan(&j, &cfg, 4, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 4) == WAIT_PENDING);
	mad_wait_scan(&j, &cfg, 6, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 6) == WAIT_FAILED);
	CHECK(strstr(j.reason, "still empty") != NULL);
	mad_wait_job_free(&j);

	mad_wait_job_init(&j, 103, run_dir);
	mkjob("103");
	put("103/expected", "1\n");
	put("103/done_rank0", "Traceback (most recent call last):\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(mad_wait_decide(&j, &cfg, 0) == WAIT_FAILED);
	CHECK(strstr(j.reason, "is not an exit status") != NULL);
	mad_wait_job_free(&j);
}

TEST(liveness_rules)
{
	struct mad_wait_job j;
	struct mad_queue_entry absent = { .id = 104, .listing = LISTING_ABSENT };
	struct mad_queue_entry running = { .id = 104, .listing = LISTING_ACTIVE, .state = "RUNNING" };
	struct mad_queue_entry ended = { .id = 104, .listing = LISTING_ENDED, .state = "CANCELLED" };

	/* never listed: pending through the startup grace, then gone */
	mad_wait_job_init(&j, 104, run_dir);
	mad_wait_observe(&j, &absent, &cfg, 0, 100);
	mad_wait_observe(&j, &absent, &cfg, 0, 200);
	CHECK(j.gone_polls == 0 && mad_wait_decide(&j, &cfg, 200) == WAIT_PENDING);
	mad_wait_observe(&j, &absent, &cfg, 0, 300);
	mad_wait_observe(&j, &absent, &cfg, 0, 305);
	mad_wait_observe(&j, &absent, &cfg, 0, 310);
	CHECK(mad_wait_decide(&j, &cfg, 310) == WAIT_PENDING); /* grace not over */
	CHECK(mad_wait_decide(&j, &cfg, 360) == WAIT_GONE);
	CHECK(strstr(j.reason, "never appeared") != NULL);
	mad_wait_job_free(&j);

	/* seen, then gone: one missing answer is not enough; a return resets */
	mad_wait_job_init(&j, 104, run_dir);
	mad_wait_observe(&j, &running, &cfg, 0, 1);
	mad_wait_observe(&j, &absent, &cfg, 0, 2);
	mad_wait_observe(&j, &absent, &cfg, 0, 7);
	mad_wait_observe(&j, &running, &cfg, 0, 12); /* slurmctld back after a restart */
	CHECK(j.gone_polls == 0 && mad_wait_decide(&j, &cfg, 500) == WAIT_PENDING);
	mad_wait_observe(&j, &ended, &cfg, 0, 20);
	mad_wait_observe(&j, &absent, &cfg, 0, 25);
	CHECK(mad_wait_decide(&j, &cfg, 100) == WAIT_PENDING); /* two polls only */
	mad_wait_observe(&j, &absent, &cfg, 0, 30);
	CHECK(mad_wait_decide(&j, &cfg, 79) == WAIT_PENDING);
	CHECK(mad_wait_decide(&j, &cfg, 80) == WAIT_GONE);
	CHECK(strstr(j.reason, "CANCELLED") != NULL);
	mad_wait_job_free(&j);
}

TEST(requeued_job_folder)
{
	struct mad_wait_job j;
	char err[512];

	mad_wait_job_init(&j, 105, run_dir);
	mkjob("105");
	put("105/expected", "1\n");
	put("105/done_rank0", "143\n");
	mkjob("105.1");
	put("105.1/expected", "1\n");
	put("105.1/done_rank0", "0\n");
	mad_wait_scan(&j, &cfg, 0, err, sizeof(err));
	CHECK(j.restart == 1 && mad_wait_decide(&j, &cfg, 0) == WAIT_OK);
	mad_wait_job_free(&j);
}

TEST(plugstack_lines)
{
	static struct mad_plugstack ps;
	char err[512], inc[4096];
	const char *text = "# site\n"
			   "optional /usr/lib/x/pyxis.so\n"
			   "required  /usr/lib/slurm/mad.so   run-dir=/shared/runs timeout=60 # note\n";

	CHECK(mad_plugstack_parse(text, strlen(text), "p.conf", 1, &ps, err, sizeof(err)) == 1);
	CHECK(ps.line == 3 && ps.argc == 2);
	CHECK_STR(mad_plugstack_value(&ps, "run-dir"), "/shared/runs");
	CHECK(mad_plugstack_value(&ps, "run") == NULL);
	CHECK(mad_plugstack_parse("optional madx.so run-dir=/x\n", 28, "p", 1, &ps, err, sizeof(err)) == 0);
	/* include, relative to the including file */
	mkjob("conf.d");
	put("conf.d/mad.conf", "optional mad.so run-dir=/from/include\n");
	snprintf(inc, sizeof(inc), "%s/plugstack.conf", run_dir);
	memset(&ps, 0, sizeof(ps));
	CHECK(mad_plugstack_parse("include conf.d/*.conf\n", 22, inc, 2, &ps, err, sizeof(err)) == 1);
	CHECK_STR(mad_plugstack_value(&ps, "run-dir"), "/from/include");
	CHECK(mad_plugstack_parse("include conf.d/*.conf\n", 22, inc, 0, &ps, err, sizeof(err)) == -1);
	CHECK(strstr(err, "nested") != NULL);
	CHECK(mad_plugstack_parse("include\n", 8, "p", 1, &ps, err, sizeof(err)) == -1);
	CHECK_STR(err, "p:1: 'include' takes one pattern");
}

TEST(follow_names)
{
	char out[256], err[256];

	CHECK(mad_follow_name("slurm-%A_%a.out", 7, 3, out, sizeof(out), err, sizeof(err)) == 0);
	CHECK_STR(out, "slurm-7_3.out");
	CHECK(mad_follow_name("log-%j-%r-%%.txt", 7, 0, out, sizeof(out), err, sizeof(err)) == 0);
	CHECK_STR(out, "log-7-0-%.txt");
	CHECK(mad_follow_name("x-%t", 7, 0, out, sizeof(out), err, sizeof(err)) == -1);
	CHECK(mad_follow_per_rank("a-%a") && !mad_follow_per_rank("a-%j") && !mad_follow_per_rank("a%%a"));
}

int main(void)
{
	char cmd[4200];
	int rc;

	if (!mkdtemp(run_dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(marker_reader);
	RUN(time_limits);
	RUN(queue_output);
	RUN(markers_decide);
	RUN(empty_and_garbage_markers);
	RUN(liveness_rules);
	RUN(requeued_job_folder);
	RUN(plugstack_lines);
	RUN(follow_names);
	rc = unit_done();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run_dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
