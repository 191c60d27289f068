#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# templates/job.sh.j2: every combination renders to a script that bash
# parses and shellcheck passes, and hostile values stay single words: the
# script run with stand-in mad-env, mad-mark and srun passes them through
# byte for byte and runs nothing of them.

# shellcheck disable=SC2016,SC1003 # literal $(...) and backslashes are the test data
bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	load_helpers
	tpl=$MAD_SRCDIR/templates/job.sh.j2
	data=$MAD_SRCDIR/templates/example.yaml
}

@test "every scheduler, fan-out, partition, run folder and env: bash -n and shellcheck clean" {
	require shellcheck "lints the rendered scripts"
	local n=0
	cat >"$BATS_TEST_TMPDIR/env.json" <<-'EOF'
		{"env": {"NCCL_DEBUG": "INFO", "ODD": "a 'b' \"c\" $(d) `e` #f \\g\nh"}}
	EOF
	for sch in slurm spur; do
		for fo in nodes array; do
			for part in none 'gpu #1'; do
				for rd in none '/shared/a b'; do
					for envs in "$data" "$BATS_TEST_TMPDIR/env.json"; do
						args=(-c "$data" -c "$envs" -D "scheduler=$sch" -D "fanout=$fo")
						[[ $part == none ]] || args+=(-D "partition=$part")
						[[ $rd == none ]] || args+=(-D "run_dir=$rd")
						out=$BATS_TEST_TMPDIR/job-$n.sh
						run mad-render "${args[@]}" -o "$out" "$tpl"
						assert_success
						bash -n "$out"
						# SC2016 flags '$(d)' kept literal in single quotes: the point
						shellcheck -s bash -e SC2016 "$out" || { cat -A "$out"; false; }
						n=$((n + 1))
					done
				done
			done
		done
	done
	echo "# $n combinations" >&3
	((n == 32))
}

@test "hostile values: #SBATCH lines read back as given, command words passed byte for byte, nothing runs" {
	cd "$BATS_TEST_TMPDIR"
	cat >data.json <<-'EOF'
		{"job_name": "it's #1 \\ $(touch PWNED)", "log_dir": "logs dir",
		 "command": ["printf", "%s\\n", "a b", "$(touch PWNED)", "`touch PWNED`", "'", "\"", "*", "-n", "x\ny", ""],
		 "env": {"X_1": "$(touch PWNED)"}}
	EOF
	mad-render -c "$data" -c data.json -o job.sh "$tpl"
	grep -x "#SBATCH --job-name='it\\\\'s #1 \\\\\\\\ \$(touch PWNED)'" job.sh
	mkdir bin
	printf '#!/bin/sh\ntrue\n' >bin/mad-env
	printf '#!/bin/sh\ntrue\n' >bin/mad-mark
	# srun stand-in: run the task's command after its option words
	printf '#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\nexec "$@"\n' >bin/srun
	chmod +x bin/*
	run env PATH="$PWD/bin:$PATH" bash job.sh
	assert_success
	expected=$(printf '%s\n' "a b" '$(touch PWNED)' '`touch PWNED`' "'" '"' '*' '-n' $'x\ny' '')
	assert_output "$expected"
	[[ ! -e PWNED ]]
}

@test "a value on an #SBATCH line without '| sbatch', and quotes around {{ }}, are errors naming the place" {
	printf '#!/bin/bash\n#SBATCH --job-name={{ name }}\n' >"$BATS_TEST_TMPDIR/t1.j2"
	run mad-render -D name=x "$BATS_TEST_TMPDIR/t1.j2"
	assert_failure 1
	assert_output --partial "t1.j2:2:20: a value on an #SBATCH line needs '| sbatch'"
	printf 'echo "{{ name }}"\n' >"$BATS_TEST_TMPDIR/t2.j2"
	run mad-render -D name=x "$BATS_TEST_TMPDIR/t2.j2"
	assert_failure 1
	assert_output --partial "t2.j2:1:7: a '{{ }}' between quotes would be quoted twice"
	printf '#SBATCH --comment={{ c | sbatch }}\n' >"$BATS_TEST_TMPDIR/t3.j2"
	run mad-render -D $'c=a\nb' "$BATS_TEST_TMPDIR/t3.j2"
	assert_failure 1
	assert_output --partial "a newline, carriage return or NUL cannot be in an #SBATCH line"
	# nothing partial written with -o
	run mad-render -D $'c=a\nb' -o "$BATS_TEST_TMPDIR/out.sh" "$BATS_TEST_TMPDIR/t3.j2"
	assert_failure 1
	[[ ! -e $BATS_TEST_TMPDIR/out.sh ]]
}

@test "data errors name the file and line; usage errors exit 64" {
	printf 'a: 1\nb: [x\n' >"$BATS_TEST_TMPDIR/bad.yaml"
	run mad-render -c "$BATS_TEST_TMPDIR/bad.yaml" "$tpl"
	assert_failure 1
	assert_output --regexp "bad.yaml:[0-9]+: "
	printf '{"a": 1.5}' >"$BATS_TEST_TMPDIR/bad.json"
	run mad-render -c "$BATS_TEST_TMPDIR/bad.json" "$tpl"
	assert_failure 1
	assert_output --partial "bad.json:1: the number 1.5 is not an integer"
	printf '{"a": [1,}' >"$BATS_TEST_TMPDIR/bad2.json"
	run mad-render -c "$BATS_TEST_TMPDIR/bad2.json" "$tpl"
	assert_failure 1
	assert_output --partial "bad2.json:1: not valid JSON"
	run mad-render -D 1x=2 "$tpl"
	assert_failure 64
	assert_output --partial "'1x' is not a name"
	run mad-render
	assert_failure 64
	run mad-render a b
	assert_failure 64
	run mad-render "$BATS_TEST_TMPDIR/none.j2"
	assert_failure 1
	assert_output --partial "cannot read"
}

@test "very long or deep expressions: a clear error, no crash" {
	for expr in "1$(printf '+1%.0s' $(seq 5000))" "a$(printf '.b%.0s' $(seq 5000))" \
		"x$(printf '|trim%.0s' $(seq 5000))" "$(printf -- '-%.0s' $(seq 5000))1" \
		"$(printf '[%.0s' $(seq 5000))1$(printf ']%.0s' $(seq 5000))"; do
		printf '{{ %s }}\n' "$expr" >"$BATS_TEST_TMPDIR/deep.j2"
		run mad-render -D a=1 -D x=1 "$BATS_TEST_TMPDIR/deep.j2"
		assert_failure 1
		assert_output --regexp 'deep.j2:1:[0-9]+: (an expression )?nested deeper than'
	done
	printf '{{ 1%s }}\n' "$(printf '+1%.0s' $(seq 900))" >"$BATS_TEST_TMPDIR/ok.j2"
	run mad-render "$BATS_TEST_TMPDIR/ok.j2"
	assert_success
	assert_output 901
}
