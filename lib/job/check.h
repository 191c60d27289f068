/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check.h: the pre-launch check (mad-env --check), in lib/job/ (its rules
 * open job.h).  Run from every task before the real program: within
 * seconds, every rank tells
 * rank 0 its RANK, WORLD_SIZE, NNODES, MASTER_ADDR and MASTER_PORT over TCP
 * on MASTER_ADDR:MASTER_PORT, rank 0 compares them with its own and tells
 * each rank the verdict.  A rank that disagrees, claims a rank another task
 * has, or cannot reach rank 0 is named, instead of a 30-minute NCCL or
 * c10d timeout later.
 *
 * The port is free for the real program when this returns on rank 0: the
 * listener has SO_REUSEADDR (its accepted sockets inherit it), is closed
 * before the verdicts are sent, and every peer closes its connection first,
 * so the TIME_WAIT state lands on the peers' ephemeral ports, never on
 * MASTER_PORT. */
#ifndef MAD_CHECK_H
#define MAD_CHECK_H

#include "contract.h"
#include "options.h"
#include "strbuf.h"

#include <stddef.h>

/* What one task's program will read, and where it runs. */
struct mad_check_values {
	long rank, world_size, nnodes, master_port;
	char master_addr[256];
	char host[64]; /* this task's host name, for rank 0's table */
};

/* Seconds the ranks other than 0 wait for rank 0's verdict past the
 * deadline: rank 0 waits for missing ranks up to the deadline itself. */
#define MAD_CHECK_VERDICT_GRACE 2.0

/* Fills V with what a program in this task reads: the task environment's
 * RANK, WORLD_SIZE, NNODES, MASTER_ADDR and MASTER_PORT where set (through
 * GETENV_FN), else the values contract C exports, and this host's name.
 * 0, or -1 with ERR naming the variable that is missing or not a number. */
int mad_check_values_from(struct mad_check_values *v, const struct mad_options *o,
			  const struct mad_contract *c, mad_getenv_fn getenv_fn, void *ctx,
			  char *err, size_t size);

/* Reads one line a rank sends rank 0 (without its newline; LINE is
 * changed) into V: 0, or -1 when it is not a mad check's line. */
int mad_check_parse_line(char *line, struct mad_check_values *v);

/* This task's part of the check, until DEADLINE (mad_monotonic() seconds).
 * Rank 0 listens on MASTER_PORT (the wildcard address of MASTER_ADDR's
 * family) until the other WORLD_SIZE - 1 ranks have told their values or
 * the deadline passes; the other ranks connect to MASTER_ADDR:MASTER_PORT,
 * retrying until the deadline, and wait for the verdict up to
 * MAD_CHECK_VERDICT_GRACE seconds past it.  0 when every rank agrees and
 * reached rank 0; -1 with ERR, one line saying which rank failed and why.
 * On rank 0 a failure also appends to TABLE (may be NULL) a table with rank
 * 0's row, every failing rank's row (every row up to 64 ranks) and a status
 * column. */
int mad_check_run(const struct mad_check_values *v, double deadline, struct strbuf *table,
		  char *err, size_t size);

#endif
