/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for what mad-wait reads from others: marker files,
 * squeue's output, time limits and plugstack.conf text.  The first byte
 * picks the reader.  Beyond "no crash", it checks their promises: a
 * complete marker has a status 0..65535, a rejected one says why; squeue
 * entries keep the ids asked for, a state and a user that fit, a uid only
 * for a numeric user, and a submit time only where listed; a job folder's
 * name gives a job id only when it starts with one (the owner and time mad-wait trusts files
 * by, design.md §15); a found plugstack line has at most
 * MAD_PLUGSTACK_ARGS arguments, all non-empty. */
#include "marker.h"
#include "site/plugstack.h"
#include "wait/prune.h"
#include "wait/queue.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mad_plugstack ps;
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	char host[64], note[256], err[512], *s;
	long status, when;
	int rc;

	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		rc = mad_marker_parse(text, len, &status, &when, host, sizeof(host), note,
				      sizeof(note));
		check(rc >= -1 && rc <= 1);
		check(rc != 1 || (status >= 0 && status <= 65535));
		check(when >= -1);
		check(rc != -1 || (*note && status == -1));
		check(strlen(host) < sizeof(host));
		break;
	case 1: {
		struct mad_queue_entry e[3] = { { .id = 12 }, { .id = 1 }, { .id = 120 } };

		mad_queue_parse(text, len, e, 3);
		check(e[0].id == 12 && e[1].id == 1 && e[2].id == 120);
		for (int i = 0; i < 3; i++) {
			check(e[i].listing >= MAD_LISTING_ABSENT && e[i].listing <= MAD_LISTING_ENDED);
			check(strlen(e[i].state) < sizeof(e[i].state));
			check(e[i].listing != MAD_LISTING_ABSENT || e[i].state[0] == '\0');
			check(e[i].time_limit >= -1);
			check(strlen(e[i].user) < sizeof(e[i].user));
			/* a numeric %u is the uid itself; a name is looked up later */
			check(e[i].submitted >= -1 &&
			      (e[i].uid == -1 || (e[i].user[0] && strspn(e[i].user, "0123456789") ==
									  strlen(e[i].user))));
			check(e[i].listing != MAD_LISTING_ABSENT ||
			      (e[i].user[0] == '\0' && e[i].submitted == -1));
		}
		break;
	}
	case 2:
		s = malloc(len + 1);
		if (!s)
			return 0;
		memcpy(s, text, len);
		s[len] = '\0';
		check(mad_time_limit_parse(s) >= -1);
		check(mad_submit_time_parse(s) >= -1);
		{
			/* a job folder's name, as mad-wait --prune reads the run folder */
			int leftover;
			long job = mad_prune_job_name(s, &leftover);

			check(job >= -1 && (leftover == 0 || leftover == 1));
			check(job < 0 || (s[0] >= '1' && s[0] <= '9'));
			check(!leftover || (job > 0 && strstr(s, ".new.") != NULL));
		}
		free(s);
		break;
	default:
		memset(&ps, 0, sizeof(ps));
		/* depth 0: include lines are checked, never followed (no files) */
		rc = mad_plugstack_parse(text, len, "fuzz.conf", 0, &ps, err, sizeof(err));
		check(rc >= -1 && rc <= 1);
		check(rc != -1 || strncmp(err, "fuzz.conf:", 10) == 0);
		if (rc == 1) {
			check(ps.argc >= 0 && ps.argc <= MAD_PLUGSTACK_ARGS);
			for (int i = 0; i < ps.argc; i++)
				check(*ps.argv[i] != '\0');
		}
		break;
	}
	return 0;
}
