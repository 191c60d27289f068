#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-render against its oracle, t/oracle/render-oracle (Jinja2 configured
# as the contract t/oracle/render-spec.md says, inside the subset's limits):
# the hand-written cases of t/oracle/render-cases.txt and 300 generated
# templates (t/oracle/render-gen.py), byte for byte.  The oracle runs all the
# cases of a folder in one process (--batch: Python and Jinja2 take 0.2 s to
# start); mad-render runs once a case:
#   mad-render [-c NAME.yaml|NAME.json|NAME.2.yaml...]... [-D key=value]... NAME.j2
# in the case's folder, with its stdout and stderr kept in files.  A valid
# case passes when both exit 0 with the same bytes on stdout; an error case
# when both exit 1 and mad-render's message has FILE:LINE:COL: (or, for an
# error in a data file, names that file).

bats_require_minimum_version 1.5.0

SEED=20261130

# The cases and the oracle's results, once for the file (bats 1.8 cannot
# skip from setup_file: setup does, when the oracle cannot run).
setup_file() {
	if ! python3 -c 'import jinja2, yaml' 2>/dev/null; then
		export no_oracle=1
		return 0
	fi
	hand=$BATS_FILE_TMPDIR/hand
	gen=$BATS_FILE_TMPDIR/gen
	python3 "$MAD_SRCDIR/t/oracle/render-gen.py" --split "$MAD_SRCDIR/t/oracle/render-cases.txt" "$hand"
	python3 "$MAD_SRCDIR/t/oracle/render-gen.py" "$SEED" 300 "$gen"
	run_oracle "$hand"
	run_oracle "$gen"
	export hand gen
}

setup() {
	load ../lib.sh
	load_helpers
	require python3 "the oracle and the generator"
	if [[ -n ${no_oracle:-} ]]; then
		if [[ ${CI:-} == true ]]; then
			echo "python3-jinja2 or python3-yaml is missing and CI=true: failing, not skipping" >&2
			return 1
		fi
		skip "the oracle needs python3-jinja2 and python3-yaml"
	fi
}

# The arguments of case $1 (in its folder) before its template, in $args.
case_args() {
	args=()
	if [[ -e $1.args ]]; then
		mapfile -t args <"$1.args"
	elif [[ -e $1.yaml ]]; then
		args=(-c "$1.yaml")
	elif [[ -e $1.json ]]; then
		args=(-c "$1.json")
	fi
}

# The oracle on every case of folder $1, in one process: NAME.o.out,
# NAME.o.err, NAME.o.rc.  Status 2 means an oracle bug (an exception).
run_oracle() {
	(
		cd "$1" || exit 1
		while read -r n; do
			case_args "$n"
			printf '%s' "$PWD/$n.o"
			printf '\t%s' "${args[@]}" "$n.j2"
			printf '\n'
		done <list >oracle.batch
		"$MAD_SRCDIR/t/oracle/render-oracle" --batch <oracle.batch
	)
}

# mad-render on case $1, in its folder: NAME.m.out, NAME.m.err, NAME.m.rc.
run_mad() {
	local rc=0
	case_args "$1"
	mad-render "${args[@]}" "$1.j2" >"$1.m.out" 2>"$1.m.err" || rc=$?
	echo "$rc" >"$1.m.rc"
}

# Everything about case $1 that helps to see why it differs.
show_case() {
	local n=$1
	case_args "$n"
	echo "---- case $n (in $PWD): mad-render ${args[*]} $n.j2"
	echo "---- template:"
	cat -A "$n.j2" | head -60
	for f in "$n".*yaml "$n".*json; do
		[[ -e $f ]] || continue
		echo "---- $f:"
		head -c 3000 "$f"
		echo
	done
	echo "---- oracle: status $(<"$n.o.rc")"
	cat "$n.o.err"
	echo "---- mad-render: status $(<"$n.m.rc")"
	cat "$n.m.err"
	if [[ $(<"$n.o.rc") == 0 && $(<"$n.m.rc") == 0 ]]; then
		echo "---- the outputs differ: $(cmp "$n.o.out" "$n.m.out" 2>&1 | head -1)"
		echo "---- diff -u oracle mad-render (cat -A):"
		diff -u <(cat -A "$n.o.out") <(cat -A "$n.m.out") | head -60 || true
	fi
}

# Checks every case of folder $1 whose kind is $2 ("renders": all but the
# error cases, "fails": the error cases).  Prints the mismatches, the first
# in full, and the count on fd 3.
check_cases() {
	local dir=$1 kind=$2 n same=0 total=0 orc mrc
	local -a bad=()
	cd "$dir"
	while read -r n; do
		if [[ -e $n.error ]]; then
			[[ $kind == fails ]] || continue
		else
			[[ $kind == renders ]] || continue
		fi
		total=$((total + 1))
		run_mad "$n"
		read -r orc <"$n.o.rc"
		read -r mrc <"$n.m.rc"
		if [[ $kind == renders ]]; then
			if [[ $orc != 0 ]]; then
				bad+=("$n: the oracle fails on a valid case: $(head -c 300 "$n.o.err")")
			elif [[ $mrc != 0 ]]; then
				bad+=("$n: mad-render fails (status $mrc): $(head -1 "$n.m.err")")
			elif ! cmp -s "$n.o.out" "$n.m.out"; then
				bad+=("$n: the outputs differ")
			else
				same=$((same + 1))
			fi
		elif [[ $orc != 1 ]]; then
			bad+=("$n: the oracle does not fail with status 1 on an error case (status $orc)")
		elif [[ $mrc != 1 ]]; then
			bad+=("$n: mad-render exits with $mrc, not 1")
		elif [[ -e $n.data-error ]]; then
			# an error in a data file: the message names that file
			if grep -Eq "^mad-render: $n(\.[0-9]+)?\.(yaml|json)[:,]" "$n.m.err"; then
				same=$((same + 1))
			else
				bad+=("$n: mad-render's message does not name the data file: $(head -1 "$n.m.err")")
			fi
		elif grep -Eq ':[0-9]+:[0-9]+: ' "$n.m.err"; then
			same=$((same + 1))
		else
			bad+=("$n: mad-render's message gives no FILE:LINE:COL: $(head -1 "$n.m.err")")
		fi
	done <list
	if [[ $kind == renders ]]; then
		echo "# $same of $total cases identical" >&3
	else
		echo "# $same of $total error cases fail in both, with a position" >&3
	fi
	if ((${#bad[@]})); then
		echo "${#bad[@]} of $total cases disagree:"
		printf '  %s\n' "${bad[@]}"
		show_case "${bad[0]%%:*}"
		return 1
	fi
	((total > 0))
}

@test "hand-written cases: mad-render prints what the oracle prints, byte for byte" {
	check_cases "$hand" renders
}

@test "hand-written error cases: both fail with status 1, mad-render at FILE:LINE:COL" {
	check_cases "$hand" fails
}

@test "300 generated templates (fixed seed): mad-render prints what the oracle prints" {
	check_cases "$gen" renders
}

@test "the oracle agrees with the contract: expected outputs, its error messages, spot checks" {
	local n checked=0
	local -a bad=()
	cd "$hand"
	while read -r n; do
		if [[ -e $n.expect ]]; then
			checked=$((checked + 1))
			if [[ $(<"$n.o.rc") != 0 ]] || ! cmp -s "$n.expect" "$n.o.out"; then
				bad+=("$n: the oracle's output is not the expected one")
				[[ ${#bad[@]} -gt 1 ]] || diff -u <(cat -A "$n.expect") <(cat -A "$n.o.out") || true
			fi
		elif [[ -e $n.error ]]; then
			checked=$((checked + 1))
			if [[ $(<"$n.o.rc") != 1 ]] || ! grep -qiF -- "$(<"$n.error")" "$n.o.err"; then
				bad+=("$n: the oracle does not fail as expected: $(<"$n.o.err")")
			fi
		fi
	done <list
	echo "# $checked hand-written expectations checked on the oracle" >&3
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}"
		return 1
	fi
	((checked > 150))

	# Spot checks straight from the contract.
	local oracle=$MAD_SRCDIR/t/oracle/render-oracle t=$BATS_TEST_TMPDIR
	# shell_quote: "" -> '', the safe set as is, '=' not safe, ' as '\''
	printf '{{ a }}|{{ b }}|{{ c }}|{{ d }}|{{ e }}\n' >"$t/q.j2"
	run "$oracle" -D a= -D "b=it's" -D c=a=b -D d=A-z_0@%+:,./ -D "e=\$(x) \`y\`" "$t/q.j2"
	assert_success
	assert_output "''|'it'\\''s'|'a=b'|A-z_0@%+:,./|'\$(x) \`y\`'"
	# sbatch: '=' safe; else '...' with \ and ' escaped; raw output
	printf '#SBATCH {{ a | sbatch }} {{ b | sbatch }} {{ c | raw }}\n' >"$t/s.j2"
	run "$oracle" -D a=--x=y -D "b=a'b\\c d" -D c=1 "$t/s.j2"
	assert_success
	assert_output "#SBATCH --x=y 'a\\'b\\\\c d' 1"
	# YAML scalars are strings; | int converts; mixing types is an error
	printf 'n: 4\nt: true\n' >"$t/d.yaml"
	printf '{{ n == "4" }} {{ n | int + 1 }} {{ t ~ "" }}\n' >"$t/y.j2"
	run "$oracle" -c "$t/d.yaml" "$t/y.j2"
	assert_success
	assert_output "True 5 true"
	printf '{{ n < 5 }}\n' >"$t/e.j2"
	run "$oracle" -c "$t/d.yaml" "$t/e.j2"
	assert_failure 1
	assert_output --regexp '^render-oracle: .*cannot compare'
	# usage
	run "$oracle"
	assert_failure 64
}
