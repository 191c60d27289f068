# SPDX-License-Identifier: GPL-2.0-or-later
# t/spur/squeue.awk: spur's squeue over the real cluster's rows (see t/spur/bin/squeue, which
# gives the settings as -v variables).  Input: the id map (lib.sh), then the real rows
# id|state|user|partition|name|account|qos|nodes|nodelist|time|limit|submit|start|end|
# reason|cpus|priority|workdir|comment.  Plain awk (mawk runs it), after format.awk.

function state_of(s) {
	sub(/ .*/, "", s)
	if (s == "CONFIGURING" || s == "RESIZING") return "RUNNING"
	if (s == "BOOT_FAIL" || s == "SPECIAL_EXIT" || s == "REVOKED") return "FAILED"
	return s
}
function terminal(s) {
	return s !~ /^(PENDING|RUNNING|SUSPENDED|COMPLETING|REQUEUED)$/
}
# crates/spur-core/src/job.rs code() and sort_rank()
function code(s) { return s in CODE ? CODE[s] : "?" }
function rank_of(s) { return s in RANK ? RANK[s] : 255 }
function header(c) { return c in HEAD ? HEAD[c] : "?" }

# crates/spur-core/src/array.rs aggregate_array_state: "" while a task is not done
function aggregate(J,   i, s, worst, w, r, all) {
	all = 1; worst = ""; w = -1
	for (i = 1; i <= ntask[J]; i++) {
		s = F[taskrow[J, i], 2]
		if (!terminal(s)) return ""
		if (s != "COMPLETED") all = 0
		r = s == "OUT_OF_MEMORY" ? 6 : s == "FAILED" ? 5 : s == "DEADLINE" ? 4 : s == "NODE_FAIL" ? 3 : s == "TIMEOUT" ? 2 : s == "CANCELLED" ? 1 : 0
		if (r > w) { w = r; worst = s }
	}
	return all ? "COMPLETED" : worst
}

function field(r, c,   s) {
	if (c == "i" || c == "A") return F[r, 0]
	if (c == "j" || c == "n") return F[r, 5]
	if (c == "u") return F[r, 3]
	if (c == "P") return F[r, 4]
	if (c == "t") return code(F[r, 2])
	if (c == "T") return F[r, 2]
	if (c == "M") return F[r, 10]
	if (c == "l") return F[r, 11]
	if (c == "D") return F[r, 8]
	if (c == "R") return F[r, 2] == "PENDING" ? "(" F[r, 15] ")" : F[r, 9]
	if (c == "C") return F[r, 16]
	if (c == "N") return F[r, 9]
	if (c == "a") return F[r, 6]
	if (c == "p") return F[r, 17]
	if (c == "q") return F[r, 7]
	if (c == "r") return F[r, 15]
	if (c == "Z") return F[r, 18]
	if (c == "S") return F[r, 13]
	if (c == "V") return F[r, 12]
	if (c == "e") return F[r, 14]
	if (c == "k") return F[r, 19]
	return "?"
}

# squeue.rs compare_field: numbers as numbers, states by rank, the rest as text
function cmp1(a, b, c,   x, y) {
	if (c == "i" || c == "A" || c == "p" || c == "D" || c == "C") { x = field(a, c) + 0; y = field(b, c) + 0 }
	else if (c == "t" || c == "T") { x = rank_of(F[a, 2]); y = rank_of(F[b, 2]) }
	else { x = field(a, c); y = field(b, c) }
	return x < y ? -1 : x > y ? 1 : 0
}
function cmp(a, b,   k, o) {
	for (k = 1; k <= nkeys; k++) {
		o = cmp1(a, b, KEY[k])
		if (DESC[k]) o = -o
		if (o) return o
	}
	return 0
}

function die(msg) { print "Error: " msg > "/dev/stderr"; failed = 1; exit 1 }

BEGIN {
	n = split("PENDING PD 0;RUNNING R 1;SUSPENDED S 2;COMPLETING CG 3;COMPLETED CD 4;CANCELLED CA 5;FAILED F 6;TIMEOUT TO 7;NODE_FAIL NF 8;PREEMPTED PR 9;DEADLINE DL 10;OUT_OF_MEMORY OOM 11;REQUEUED RQ 12", st, ";")
	for (i = 1; i <= n; i++) { split(st[i], p, " "); CODE[p[1]] = p[2]; RANK[p[1]] = p[3]; BYCODE[p[2]] = p[1]; BYNAME[p[1]] = p[1] }
	n = split("i JOBID;j NAME;u USER;P PARTITION;t ST;T STATE;M TIME;l TIME_LIMIT;D NODES;R NODELIST(REASON);C CPUS;a ACCOUNT;p PRIORITY;S START_TIME;V SUBMIT_TIME;e END_TIME;Z WORK_DIR;o COMMAND;q QOS;r REASON;n NAME;N NODELIST;b GRES;L TIME_LEFT;v RESERVATION;k COMMENT;A ARRAY_JOB_ID", h, ";")
	for (i = 1; i <= n; i++) { c = substr(h[i], 1, 1); HEAD[c] = substr(h[i], 3) }
	# -t (squeue.rs parse_states_arg)
	if (states == "") { WANT["PENDING"] = WANT["RUNNING"] = WANT["SUSPENDED"] = WANT["COMPLETING"] = 1; anystate = 0 }
	else if (tolower(states) == "all") anystate = 1
	else {
		n = split(states, t, ",")
		for (i = 1; i <= n; i++) {
			s = toupper(t[i]); gsub(/^[ \t]+|[ \t]+$/, "", s)
			if (s == "") continue
			if (s in BYCODE) s = BYCODE[s]; else if (!(s in BYNAME)) die("Invalid job state specified: " t[i])
			WANT[s] = 1; nwant++
		}
		if (!nwant) die("Invalid job state specified: (empty)")
	}
	# -S (squeue.rs parse_sort_arg)
	if (sort == "") { nkeys = split("P t p i", KEY, " "); DESC[3] = 1 }
	else {
		n = split(sort, t, ",")
		for (i = 1; i <= n; i++) {
			s = t[i]; gsub(/^[ \t]+|[ \t]+$/, "", s)
			if (s == "") continue
			d = 0
			if (substr(s, 1, 1) == "-") { d = 1; s = substr(s, 2) } else if (substr(s, 1, 1) == "+") s = substr(s, 2)
			if (length(s) != 1 || header(s) == "?") die("Invalid sort specification: " t[i])
			KEY[++nkeys] = s; DESC[nkeys] = d
		}
		if (!nkeys) die("Invalid sort specification: (empty)")
	}
	# -j: only numbers are ids
	n = split(jobs, t, ",")
	for (i = 1; i <= n; i++) { s = t[i]; gsub(/^[ \t]+|[ \t]+$/, "", s); if (s ~ /^[0-9]+$/ && s + 0 <= 4294967295) { IDS[s + 0] = 1; nids++ } }
	n = split(nodes, t, ","); for (i = 1; i <= n; i++) NODE[t[i]] = 1
	parse_format(fmt)
}

# the id map: SPURID REALID TASKS SUBMITTED SUBMIT_TIME (as %V prints it)
NR == FNR {
	if ($0 == "") next
	split($0, m, " ")
	if (m[3] == "-") { PLAIN[m[2]] = m[1] }
	else {
		k = split(m[3], t, ",")
		PARENT_REAL[m[1]] = m[2]; ntask[m[1]] = 0; NTASKS[m[1]] = k
		for (i = 1; i <= k; i++) { TASK[m[2] "_" t[i]] = m[1] + i; TASKOF[m[2] "_" t[i]] = m[1]; TIDX[m[2] "_" t[i]] = i }
	}
	SUBMITTED[m[1]] = m[4]; SUBMV[m[1]] = m[5]
	next
}

$0 != "" {
	id = $1
	if (id in PLAIN) { sid = PLAIN[id]; parent = "" }
	else if (id in TASK) { sid = TASK[id]; parent = TASKOF[id] }
	else next
	r = ++nrows
	F[r, 0] = sid
	for (i = 2; i <= 19; i++) F[r, i] = $i
	F[r, 2] = state_of($2)
	sub(/\(.*/, "", F[r, 3])
	SUBM[r] = parent != "" ? SUBMITTED[parent] : SUBMITTED[sid]
	# spur keeps the submit time over a requeue (spur #629): the map's, not SLURM's
	s = parent != "" ? SUBMV[parent] : SUBMV[sid]
	if (s != "") F[r, 12] = s
	if (parent != "") { ntask[parent]++; taskrow[parent, ntask[parent]] = r; TASKPOS[r] = TIDX[id] }
}

function matches(r,   s, k, n, t, ok) {
	if (!anystate && !(F[r, 2] in WANT)) return 0
	if (user != "" && F[r, 3] != user) return 0
	if (partition != "" && F[r, 4] != partition) return 0
	if (account != "" && F[r, 6] != account) return 0
	if (name != "") {
		n = split(name, t, ","); ok = 0
		for (k = 1; k <= n; k++) { s = t[k]; gsub(/^[ \t]+|[ \t]+$/, "", s); if (s == F[r, 5]) ok = 1 }
		if (!ok) return 0
	}
	if (nodes != "") {
		n = split(F[r, 9], t, ","); ok = 0
		for (k = 1; k <= n; k++) if (t[k] in NODE) ok = 1
		if (!ok) return 0
	}
	if (hide > 0 && now - SUBM[r] < hide) return 0
	return 1
}

END {
	if (failed) exit 1
	for (r = 1; r <= nrows; r++) if ((!nids || (F[r, 0] in IDS)) && matches(r)) OUT[++nout] = r
	# a requested array parent: a row of its own, synthesized from its tasks
	for (J in IDS) {
		if (!(J in ntask) || !ntask[J]) continue
		first = 0
		for (i = 1; i <= ntask[J]; i++) if (!first || TASKPOS[taskrow[J, i]] < TASKPOS[first]) first = taskrow[J, i]
		r = ++nrows
		for (i = 0; i <= 19; i++) F[r, i] = F[first, i]
		F[r, 0] = J
		s = aggregate(J)
		F[r, 2] = s == "" ? "PENDING" : s
		SUBM[r] = SUBMITTED[J]
		if (matches(r)) OUT[++nout] = r
	}
	for (i = 2; i <= nout; i++) {
		v = OUT[i]
		for (j = i - 1; j >= 1 && cmp(OUT[j], v) > 0; j--) OUT[j + 1] = OUT[j]
		OUT[j + 1] = v
	}
	if (!noheader) print line(0, 1)
	for (i = 1; i <= nout; i++) print line(OUT[i], 0)
}
