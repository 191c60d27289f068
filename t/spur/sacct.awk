# SPDX-License-Identifier: GPL-2.0-or-later
# t/spur/sacct.awk: spur's sacct over the real controller's job records (see t/spur/bin/sacct,
# which gives the settings as -v variables).  Input: the id map (lib.sh), then
# `scontrol show job -o`.  Plain awk, after format.awk.

function header(c) { return c in HEAD ? HEAD[c] : "?" }
function field(r, c) { return (r SUBSEP c) in V ? V[r, c] : "" }

BEGIN {
	n = split("i JobID;j JobName;u User;a Account;P Partition;T State;t State;M Elapsed;D NNodes;x ExitCode;X DerivedExitCode;S Start;E End;V Submit;l TimeLimit;n NodeList;C NCPUS;R ReqMem;Q QOS;y PreemptedBy;m PreemptMode;q PreemptQOS", h, ";")
	for (i = 1; i <= n; i++) { c = substr(h[i], 1, 1); HEAD[c] = substr(h[i], 3) }
	n = split("jobid i;jobname j;user u;account a;partition P;state T;elapsed M;nnodes D;exitcode x;derivedexitcode X;start S;end E;submit V;timelimit l;nodelist n;ncpus C;reqmem R;qos Q;preemptedby y;preemptmode m;preemptqos q", h, ";")
	for (i = 1; i <= n; i++) { split(h[i], p, " "); SPEC[p[1]] = p[2] }
	if (named != "") {
		parse_named(named, SPEC)
		if (!ntok) { print "Error: sacct: no recognized fields in --format='" named "'" > "/dev/stderr"; bad = 1; exit 1 }
	} else parse_format(fmt)
	n = split(jobs, t, ","); for (i = 1; i <= n; i++) if (t[i] ~ /^[0-9]+$/) WANTID[t[i] + 0] = 1
	nwantid = n
	n = split(toupper(states), t, ","); for (i = 1; i <= n; i++) WANTST[t[i]] = 1
	nwantst = n
}

NR == FNR {
	if ($0 == "") next
	if ($3 == "-") PLAIN[$2] = $1
	else { k = split($3, t, ","); for (i = 1; i <= k; i++) TASK[$2 "_" t[i]] = $1 + i }
	next
}

$0 != "" {
	delete kv
	for (i = 1; i <= NF; i++) { e = index($i, "="); if (e) kv[substr($i, 1, e - 1)] = substr($i, e + 1) }
	key = ("ArrayTaskId" in kv && "ArrayJobId" in kv) ? kv["ArrayJobId"] "_" kv["ArrayTaskId"] : kv["JobId"]
	if (key in PLAIN) id = PLAIN[key]; else if (key in TASK) id = TASK[key]; else next
	st = kv["JobState"]
	if (st == "PENDING" || kv["StartTime"] == "Unknown" || kv["StartTime"] == "None") next # no record before it runs
	if (nwantid && !(id in WANTID)) next
	if (nwantst && !(st in WANTST)) next
	u = kv["UserId"]; sub(/\(.*/, "", u)
	if (user != "" && u != user) next
	r = ++nrec
	V[r, "i"] = id; V[r, "j"] = kv["JobName"]; V[r, "u"] = u; V[r, "a"] = kv["Account"]
	V[r, "P"] = kv["Partition"]; V[r, "T"] = V[r, "t"] = st; V[r, "M"] = kv["RunTime"]
	V[r, "D"] = kv["NumNodes"]; V[r, "x"] = kv["ExitCode"]; V[r, "X"] = kv["DerivedExitCode"]
	V[r, "S"] = kv["StartTime"]; V[r, "E"] = kv["EndTime"]; V[r, "V"] = kv["SubmitTime"]
	V[r, "l"] = kv["TimeLimit"]; V[r, "n"] = kv["NodeList"]; V[r, "C"] = kv["NumCPUs"]
	V[r, "Q"] = kv["QOS"]
}

END {
	if (bad) exit 1
	if (!noheader) {
		head = line(0, 1); rule = head; gsub(/[^ ]/, "-", rule)
		print head; print rule
	}
	for (r = 1; r <= nrec; r++) print line(r, 0)
}
