#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-render's '| sbatch' against the real sbatch: each tricky value, put on
# #SBATCH lines as the job name and comment, comes back from the controller
# exactly as given (submitted held as the test user, then cancelled).

# shellcheck disable=SC2016,SC1003 # literal $(...) and backslashes are the test data
bats_require_minimum_version 1.5.0

setup() {
	load ../lib.sh
	cluster_test
}

@test "'| sbatch' values round-trip through sbatch's #SBATCH reader (job name and comment)" {
	local shared=$MAD_CLUSTER_SHARED n=0
	printf '#!/bin/bash\n#SBATCH --job-name={{ v | sbatch }}\n#SBATCH --comment={{ v | sbatch }}\ntrue\n' \
		>"$BATS_TEST_TMPDIR/sb.j2"
	values=(plain 'a b' "it's" 'x"y' 'back\slash' 'hash #1' '$(id)' '`id`' 'é ü 日本' 'a=b'
		'-n' $'tab\tx' 'semi;colon' "'" '\' '#' '%x %j' "a'b\\c#d \"e\"")
	for v in "${values[@]}"; do
		mad-render -D "v=$v" -o "$shared/sb-$n.sh" "$BATS_TEST_TMPDIR/sb.j2"
		chmod 0644 "$shared/sb-$n.sh"
		id=$("$AS_USER" sbatch --parsable --hold --output=/dev/null "sb-$n.sh")
		name=$("$AS_USER" squeue -h -j "$id" -o %j)
		comment=$("$AS_USER" squeue -h -j "$id" -o %k)
		"$AS_USER" scancel "$id"
		[[ $name == "$v" && $comment == "$v" ]] ||
			{ echo "value [$v]: name [$name], comment [$comment]"; sed -n 2,3p "$shared/sb-$n.sh"; false; }
		n=$((n + 1))
	done
	echo "# $n values round-tripped" >&3
	# why a filter of its own: shell quoting loses the backslash on an #SBATCH line
	printf '#!/bin/bash\n#SBATCH --job-name=%s\ntrue\n' "'back\\slash'" >"$shared/sb-shell.sh"
	chmod 0644 "$shared/sb-shell.sh"
	id=$("$AS_USER" sbatch --parsable --hold --output=/dev/null sb-shell.sh)
	name=$("$AS_USER" squeue -h -j "$id" -o %j)
	"$AS_USER" scancel "$id"
	[[ $name == backslash ]]
}

@test "'| sbatch' refuses a value no #SBATCH line can carry" {
	printf '#SBATCH --comment={{ v | sbatch }}\n' >"$BATS_TEST_TMPDIR/nl.j2"
	run mad-render -D $'v=two\nlines' "$BATS_TEST_TMPDIR/nl.j2"
	assert_failure 1
	assert_output --partial "nl.j2:1:26: '| sbatch': a newline, carriage return or NUL cannot be in an #SBATCH line"
}
