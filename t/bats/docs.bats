#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Facts written in more than one file agree with the one that keeps them
# (t/README.md, "Facts kept in one place"): the options (lib/options.c
# defs[]) in mad.8, mad-env.1, design.md §4 and the plugstack snippet; the
# auto port (lib/contract.c choose_port, run through mad-env) in design.md §6
# and the snippet; mad-wait's exit codes (its --help) in mad-wait.1 and the
# README, its JSON fields (tools/mad-wait.c) in the README's example; the
# variables every task sees (design.md §3) in the README; the tested SLURM
# releases (t/suite) in the README's tables, its opening line and mad.8, and
# the one of them on NFS (t/suite) in the README's table.

setup() {
	load ../lib.sh
	load_helpers
	src=$MAD_SRCDIR
}

# troff to plain text: fonts dropped, \- as -, \(mu as ×.
plain() { sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\(mu/×/g' "$@"; }

# The option table, lib/options.c defs[]: "NAME ARGINFO DEFAULT" per option
# ("-" for no default), read from the source, however its lines are broken.
options_table() {
	tr '\n' ' ' <"$src/lib/options.c" | awk '{
		s = substr($0, index($0, "defs[MAD_OPT_COUNT]") + 19)
		s = substr(s, 1, index(s, "};"))
		n = split(s, e, /\[MAD_OPT_[A-Z_]+\] *= *\{/)
		for (k = 2; k <= n; k++) {
			name = e[k]; sub(/^ *NAME\("/, "", name); sub(/".*/, "", name)
			arg = e[k]; sub(/^ *NAME\("[^"]*"\) *, *"/, "", arg); sub(/".*/, "", arg)
			def = e[k]; sub(/[ \t},;]+$/, "", def)
			if (def ~ /NULL$/) def = "-"; else { sub(/"$/, "", def); sub(/.*"/, "", def) }
			print name, arg, def
		}
	}'
}
option_names() { options_table | cut -d' ' -f1 | sort; }

# The paragraph of a man page's .TP entry whose tag line matches ERE, as plain text.
man_paragraph() { # FILE ERE
	plain "$1" | awk -v re="$2" '
		/^\.(TP|SH|SS|PP)/ { on = 0 }
		on { print }
		prev ~ /^\.TP/ && $0 ~ re { on = 1; print }
		{ prev = $0 }'
}

# "X is the default" in TEXT, however a file words it.
states_default() { # TEXT VALUE
	grep -qE "([Dd]efault:? $2([^0-9a-z-]|\$))|($2 \((the )?default)" <<<"$1"
}

@test "the option table is read whole: what mad.so registers (sbatch --help)" {
	run options_table
	assert_success
	# every entry has a name and an argument
	[[ $(awk 'NF == 3 && $1 ~ /^[a-z][a-z-]*$/' <<<"$output" | wc -l) -eq $(grep -cE '^[[:space:]]*\[MAD_OPT_[A-Z_]+\] *=' "$src/lib/options.c") ]]
	so=$MAD_BUILDDIR/plugin/.libs/mad.so
	slurm_prefix=$(sed -n 's/^#define MAD_SLURM_PREFIX "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	[[ -z $slurm_prefix ]] || PATH=$slurm_prefix/bin:$PATH
	require sbatch "SLURM's clients (Debian package slurm-client): what mad.so registers"
	echo "optional $so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	printf 'ClusterName=x\nSlurmctldHost=localhost\nPlugStackConfig=%s\n' \
		"$BATS_TEST_TMPDIR/plugstack.conf" >"$BATS_TEST_TMPDIR/slurm.conf"
	registered=$(SLURM_CONF=$BATS_TEST_TMPDIR/slurm.conf sbatch --help | grep -oE -- '--mad-[a-z-]+' | sed 's/^--mad-//' | sort -u)
	diff <(echo "$registered") <(option_names)
}

@test "mad.8 documents every option, each in its own .TP paragraph, and no other" {
	documented=$(plain "$src/doc/mad.8" | grep -E '^\.B[IR]? +--mad-' | sed -E 's/^\.B[IR]? +--mad-([a-z-]+)=.*/\1/' | sort)
	diff <(echo "$documented") <(option_names)
	# an option's tag line right after its .TP, else man prints it inside the paragraph before
	run awk '/^\.B[IR]? +\\-\\-mad\\-/ && prev !~ /^\.TP/ { print FILENAME ":" NR ": no .TP before: " $0 } { prev = $0 }' "$src/doc/mad.8"
	assert_output ''
}

@test "mad.8 states each built-in default as the option table has it" {
	while read -r name arg def; do
		[[ $def != - ]] || continue
		text=$(man_paragraph "$src/doc/mad.8" "^\\.B[IR]? +--mad-$name=")
		[[ -n $text ]] || { echo "mad.8: no paragraph for --mad-$name"; false; }
		states_default "$text" "$def" || { echo "mad.8, --mad-$name ($arg): default '$def' not stated: $text"; false; }
	done < <(options_table)
}

@test "mad-env.1 lists every option as its MAD_ variable (ENVIRONMENT), with its default, and no other" {
	listed=$(plain "$src/doc/mad-env.1" | awk '/^\.SH/ { on = ($0 ~ /^\.SH ENVIRONMENT/) } on && prev ~ /^\.TP/ { print } { prev = $0 }' |
		sed -E 's/^\.B +MAD_([A-Z_]+).*/\1/' | tr 'A-Z_' 'a-z-' | sort)
	diff <(echo "$listed") <(option_names)
	while read -r name arg def; do
		[[ $def != - ]] || continue
		var=MAD_$(tr 'a-z-' 'A-Z_' <<<"$name")
		text=$(man_paragraph "$src/doc/mad-env.1" "^\\.B +$var\$")
		states_default "$text" "$def" || { echo "mad-env.1, $var: default '$def' not stated: $text"; false; }
	done < <(options_table)
}

@test "design.md §4 lists every option and no other" {
	# shellcheck disable=SC2016 # backquotes, not a command
	listed=$(awk '/^## §4 /, /^## §5 /' "$src/doc/design.md" | tr '\n' ' ' |
		sed -n 's/.*Options: \([^.]*\)\..*/\1/p' | grep -oE '`[a-z-]+`' | tr -d '`' | sort)
	diff <(echo "$listed") <(option_names)
}

@test "the plugstack snippet lists every key as KEY=DEFAULT (else KEY=ARGUMENT), and no other" {
	conf=$src/contrib/plugstack.conf.d/mad.conf
	listed=$(sed -nE 's/^#   ([a-z-]+)=([^ ]+).*/\1 \2/p' "$conf" | sort)
	diff <(echo "$listed") <(options_table | awk '{ print $1, ($3 == "-" ? $2 : $3) }' | sort)
	# every key on its plugstack lines is one too
	keys=$(grep -E '^(# )?optional ' "$conf" | grep -oE ' [a-z-]+=' | tr -d ' =' | sort -u)
	run comm -23 <(echo "$keys") <(option_names)
	assert_output ''
}

@test "every --mad-X a document names is an option" {
	mentioned=$(cd "$src" && sed 's/\\-/-/g' README.md NEWS CONTRIBUTING.md doc/* contrib/plugstack.conf.d/* t/README.md |
		grep -oE -- '--mad-[a-z][a-z-]*[a-z]' | sed 's/^--mad-//' | sort -u)
	[[ -n $mentioned ]]
	run comm -23 <(echo "$mentioned") <(option_names)
	assert_output ''
}

@test "the auto port in design.md §6 and the plugstack snippet is the one mad-env computes" {
	for file in "$src/doc/design.md" "$src/contrib/plugstack.conf.d/mad.conf"; do
		rule=$(tr '\n' ' ' <"$file" | grep -oE '20000 \+ \(\(job mod [0-9]+\) [×*] 64 \+ step slot\) mod [0-9]+' | head -n 1)
		[[ -n $rule ]] || { echo "$file: no '20000 + ((job mod M) × 64 + step slot) mod N'"; false; }
		expr=$(sed -e 's/mod/%/g' -e 's/×/*/g' -e 's/step slot/slot/' <<<"$rule")
		for job in 1 4242 99999 123457 4294967290; do
			for step in '' 0 3 62 63; do
				slot=0
				[[ -z $step ]] || slot=$(((step + 1) % 64))
				want=$((${expr//job/$job}))
				got=$(env -i PATH="$PATH" MAD_MODEL=m MAD_MASTER_PORT=auto SLURM_JOB_ID="$job" SLURM_NODEID=0 \
					SLURM_JOB_NUM_NODES=1 SLURM_NNODES=1 SLURM_JOB_NODELIST=localhost ${step:+SLURM_STEP_ID=$step \
					SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_STEP_NUM_TASKS=1 SLURM_STEP_TASKS_PER_NODE=1 SLURM_STEP_NUM_NODES=1} \
					mad-env | sed -n 's/^export MASTER_PORT=//p')
				[[ $got == "$want" ]] || { echo "$file: job $job step ${step:-batch}: the rule gives $want, mad-env $got"; false; }
			done
		done
	done
}

@test "mad-wait.1 lists the exit codes mad-wait --help lists" {
	codes=$(mad-wait --help | sed -n '/^Exit:/,$p' | grep -oE '(^|; |: |\n)[0-9]+ ' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
	[[ -n $codes ]]
	documented=$(awk '/^\.SH EXIT STATUS/ { on = 1; next } /^\.SH/ { on = 0 } on && prev ~ /^\.TP/ { print } { prev = $0 }' "$src/doc/mad-wait.1" |
		grep -oE '^\.B [0-9]+$' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
	assert_equal "$documented" "$codes"
}

# The README's section (## or ###) whose heading starts with TITLE, up to the next heading.
readme_section() { # TITLE
	awk -v t="$1" '/^##+ / { h = $0; sub(/^#+ /, "", h); on = index(h, t) == 1; next } on' "$src/README.md"
}

@test "the README's mad-wait exit codes are the ones mad-wait --help lists" {
	codes=$(mad-wait --help | sed -n '/^Exit:/,$p' | grep -oE '(^|; |: |\n)[0-9]+ ' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
	[[ -n $codes ]]
	listed=$(readme_section 'For pipeline authors' | grep -oE '^\| [0-9]+ \|' | grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
	assert_equal "$listed" "$codes"
}

@test "the README's mad-wait --json example is JSON, with only the fields mad-wait writes" {
	example=$(readme_section 'For pipeline authors' | awk '/^```json/ { on = 1; next } /^```/ { on = 0 } on')
	[[ -n $example ]]
	require python3 "Debian package python3: reading the README's JSON"
	python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$example"
	written=$(grep -oE 'cJSON_Add[A-Za-z]+ToObject\([a-z]+, "[a-z_]+"' "$src/tools/mad-wait.c" | sed -E 's/.*"([a-z_]+)"$/\1/' | sort -u)
	used=$(grep -oE '"[a-z_]+":' <<<"$example" | tr -d '":' | sort -u)
	run comm -23 <(echo "$used") <(echo "$written")
	assert_output ''
}

@test "the README's table of what every task sees names design.md §3's variables, level by level" {
	# design.md §3: the node table's rows (first name of each), the process table's
	# shellcheck disable=SC2016 # backquotes, not a command
	node=$(awk '/^## §3 /, /^## §4 /' "$src/doc/design.md" | awk '/^\*\*Node level/ { on = 1 } /^\*\*Process level/ { on = 0 } on' |
		grep -oE '^\| `[A-Z_]+`' | grep -oE '[A-Z_]+' | sort)
	# shellcheck disable=SC2016 # backquotes, not a command
	process=$(awk '/^## §3 /, /^## §4 /' "$src/doc/design.md" | awk '/^\*\*Process level/ { on = 1 } on && /^$/ && n++ { exit } on' |
		grep -oE '^\| `[A-Z_]+`' | grep -oE '[A-Z_]+' | sort)
	[[ -n $node && -n $process ]]
	section=$(readme_section 'For ML engineers')
	diff <(grep -E '^\| node \|' <<<"$section" | cut -d'|' -f3 | grep -oE '[A-Z_]+' | sort) <(echo "$node")
	diff <(grep -E '^\| process \|' <<<"$section" | cut -d'|' -f3 | grep -oE '[A-Z_]+' | sort) <(echo "$process")
}

@test "the README's launch shapes: t/suite's releases, spur's generations, and files t/suite runs on every release" {
	table=$(readme_section 'For ML engineers' | awk '/^\*\*Launch shapes/ { on = 1 } on && /^\| / { print } on && /^$/ && n++ { exit }')
	[[ -n $table ]]
	header=$(head -n 1 <<<"$table")
	releases=$(sed -n 's/^releases=//p' "$src/t/suite" | tr ',' ' ')
	assert_equal "$(cut -d'|' -f3 <<<"$header" | grep -oE '[0-9]+\.[0-9]+' | tr '\n' ' ' | sed 's/ $//')" "$releases"
	gens=$(sed -n 's/^# fact  *\([0-9.]*\)  *\([0-9.]*\) .*/\1 \2/p' "$src/t/spur/lib.sh")
	[[ -n $gens ]]
	assert_equal "$(cut -d'|' -f4 <<<"$header" | grep -oE '[0-9]+\.[0-9]+' | tr '\n' ' ' | sed 's/ $//')" "$gens"
	# every file a row names exists and runs on every release (release_tests in
	# t/suite), and a spur ✓ is tested in cluster-spur.bats, which runs both generations
	every=" $(sed -n '/^release_tests=(/,/)/p' "$src/t/suite" | tr -d '()' | sed 's/release_tests=//' | tr -s ' \t\n' ' ') "
	files=$(tail -n +3 <<<"$table" | awk -F'|' '{ print $(NF - 1) }' | grep -oE 'cluster[a-z-]*' | sort -u)
	[[ -n $files ]]
	for f in $files; do
		[[ -e $src/t/bats/$f.bats ]] || { echo "README names $f, which does not exist"; false; }
		[[ $every == *" $f "* ]] || { echo "README names $f, which t/suite does not run on every release"; false; }
	done
	run awk -F'|' 'NR > 2 && $4 ~ /✓/ && $(NF - 1) !~ /cluster-spur/ { print "spur ✓ without cluster-spur: " $0 }' <<<"$table"
	assert_output ''
}

@test "the README and mad.8 name the releases t/suite tests, with the same versions" {
	releases=$(sed -n 's/^releases=//p' "$src/t/suite" | tr ',' '\n' | sort -V | tr '\n' ' ')
	[[ -n $releases ]]
	# README: the table under "SLURM releases" (X.Y.Z per row), and the opening line
	table=$(readme_section 'SLURM releases' | grep -oE '^\| [0-9]+\.[0-9]+\.[0-9]+ ' | grep -oE '[0-9.]+' | sort -V)
	assert_equal "$(sed -E 's/\.[0-9]+$//' <<<"$table" | tr '\n' ' ')" "$releases"
	opening=$(grep -m1 -oE 'stock SLURM [0-9][0-9., and]+' "$src/README.md" | grep -oE '[0-9]+\.[0-9]+' | sort -V | tr '\n' ' ')
	assert_equal "$opening" "$releases"
	# mad.8: "Tested: 22.05 (Debian 12), 24.11.7, ...": the same versions as the table
	tested=$(plain "$src/doc/mad.8" | tr '\n' ' ' | grep -oE 'Tested: [^(]*\([^)]*\)[^(]*' | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | sort -V | tr '\n' ' ')
	assert_equal "$tested" "$(sed '1s/\.[0-9]*$//' <<<"$table" | tr '\n' ' ')"
	# the release whose cluster has its shared folder on NFS (nfs_release): its row, only its, says so
	nfs=$(sed -n 's/^nfs_release=//p' "$src/t/suite")
	[[ -n $nfs ]]
	assert_equal "$(readme_section 'SLURM releases' | grep -E '^\| [0-9]+\.[0-9]+\.[0-9]+ .*NFS' | grep -oE '^\| [0-9]+\.[0-9]+' | grep -oE '[0-9.]+')" "$nfs"
}

# The words of a variable of Makefile.am (its continued lines joined).
makefile_list() { # VAR
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$src/Makefile.am" | sed -n "s/^$1 = //p" | tr -s ' \t' '\n' | sed '/^$/d'
}

@test "every bats file is in one list of Makefile.am, the cluster's in BATS_CLUSTER; t/suite names only files that exist" {
	listed=$(for v in BATS_CHECK BATS_VALGRIND BATS_CLUSTER BATS_SUITE; do makefile_list "$v"; done | sort)
	[[ -n $listed ]]
	diff <(uniq -d <<<"$listed") /dev/null
	diff <(uniq <<<"$listed") <(cd "$src" && printf '%s\n' t/bats/*.bats | sort)
	diff <(makefile_list BATS_CLUSTER | sort) <(cd "$src" && printf '%s\n' t/bats/cluster*.bats | sort)
	# t/suite picks files by glob, and names some to order or choose them
	named=$({
		grep -oE 't/bats/[a-z0-9-]+\.bats' "$src/t/suite"
		sed -n -e '/^release_tests=(/,/)/p' -e '/^debian_first=(/,/)/p' -e '/for t in cluster/p' "$src/t/suite" |
			grep -oE '\bcluster(-[a-z0-9]+)*\b' | sed 's|.*|t/bats/&.bats|'
	} | sort -u)
	run bash -c "cd '$src' && for f in $(tr '\n' ' ' <<<"$named"); do [[ -e \$f ]] || echo \"t/suite names \$f, which does not exist\"; done"
	assert_output ''
}

@test "the tools: bin_PROGRAMS in Makefile.am, and each has its man page, its completion and a place in t/lib.sh's mad_tools" {
	tools=$(makefile_list bin_PROGRAMS | sed 's|^tools/||' | sort)
	[[ -n $tools ]]
	diff <(makefile_list dist_man_MANS | sed -n 's|^doc/\(.*\)\.1$|\1|p' | sort) <(echo "$tools")
	diff <(sed -n 's/^complete .* -F _mad_spank_tool //p' "$src/contrib/bash-completion/mad-spank" | tr ' ' '\n' | sort) <(echo "$tools")
	diff <(printf '%s\n' "${mad_tools[@]}" | sort) <(echo "$tools")
}
