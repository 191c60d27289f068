# SPDX-License-Identifier: GPL-2.0-or-later
# t/spur/format.awk: spur's format engine (crates/spur-cli/src/format_engine.rs), shared by
# squeue.awk and sacct.awk, which define field(row, letter) and header(letter).

# format_engine.rs parse_format: literal runs and %[#][.][-]WIDTH<letter> fields
function parse_format(s,   i, c, lit, hash, dot, neg, w, hasw) {
	ntok = 0; lit = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c != "%") { lit = lit c; continue }
		if (substr(s, i + 1, 1) == "%") { lit = lit "%"; i++; continue }
		if (lit != "") { TT[++ntok] = "lit"; TV[ntok] = lit; lit = "" }
		hash = dot = neg = hasw = 0; w = 0; i++
		if (substr(s, i, 1) == "#") { hash = 1; i++ }
		if (substr(s, i, 1) == ".") { dot = 1; i++ }
		if (substr(s, i, 1) == "-") { neg = 1; i++ }
		while (substr(s, i, 1) ~ /[0-9]/) { w = w * 10 + substr(s, i, 1); hasw = 1; i++ }
		if (i > length(s)) break
		TT[++ntok] = "field"; TV[ntok] = substr(s, i, 1); TW[ntok] = w
		TR[ntok] = !(hash || neg); TX[ntok] = dot && hasw ? w : 0
	}
	if (lit != "") { TT[++ntok] = "lit"; TV[ntok] = lit }
}
function fmt_field(v, k,   pad) {
	if (TX[k] && length(v) > TX[k]) v = substr(v, 1, TX[k])
	pad = TW[k] - length(v)
	while (pad-- > 0) v = TR[k] ? " " v : v " "
	return v
}
# format_row / format_header: the tokens in order, trimmed at the end
function line(r, hdr,   k, s) {
	s = ""
	for (k = 1; k <= ntok; k++)
		s = s (TT[k] == "lit" ? TV[k] : fmt_field(hdr ? header(TV[k]) : field(r, TV[k]), k))
	sub(/[ \t\r\n]+$/, "", s)
	return s
}

# sacct's -o (parse_named_format): "name[%width]" items joined by one space; unknown names
# are skipped; a width truncates
function parse_named(s, spec_of,   n, it, i, k, nm, w) {
	ntok = 0
	n = split(s, it, ",")
	for (i = 1; i <= n; i++) {
		gsub(/^[ \t]+|[ \t]+$/, "", it[i])
		if (it[i] == "") continue
		k = index(it[i], "%")
		if (k) { nm = substr(it[i], 1, k - 1); w = substr(it[i], k + 1) + 0 } else { nm = it[i]; w = 0 }
		gsub(/[ \t]+$/, "", nm)
		if (!(tolower(nm) in spec_of)) continue
		TT[++ntok] = "field"; TV[ntok] = spec_of[tolower(nm)]; TW[ntok] = w < 0 ? -w : w
		TR[ntok] = w >= 0; TX[ntok] = w ? TW[ntok] : 0
		if (i < n) { TT[++ntok] = "lit"; TV[ntok] = " " }
	}
}
