#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Bash completion (contrib/bash-completion/mad-spank), in bash with
# bash-completion loaded, its functions called the way readline calls them:
# COMP_WORDS split as readline splits them ("--opt=" is "--opt" "=" ""), the
# tools of this build on PATH, and the client of the release this build is
# for, whose --help lists mad.so's options from a plugstack that loads this
# build's mad.so.

setup() {
	load ../lib.sh
	load_helpers
	bash_completion=/usr/share/bash-completion/bash_completion
	[[ -r $bash_completion ]] || require bash-completion "Debian package bash-completion: the completion tests"
	script=$MAD_SRCDIR/contrib/bash-completion/mad-spank
	so=$MAD_BUILDDIR/plugin/.libs/mad.so
	[[ -r $so ]] || { echo "no $so: build first"; false; }
	slurm_prefix=$(sed -n 's/^#define MAD_SLURM_PREFIX "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	if [[ -n $slurm_prefix ]]; then PATH=$slurm_prefix/bin:$PATH; fi
	require sbatch "SLURM's clients (Debian package slurm-client): the --mad-* completion tests"
	echo "optional $so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	printf 'ClusterName=x\nSlurmctldHost=localhost\nPlugStackConfig=%s\n' \
		"$BATS_TEST_TMPDIR/plugstack.conf" >"$BATS_TEST_TMPDIR/slurm.conf"
	export SLURM_CONF=$BATS_TEST_TMPDIR/slurm.conf PATH
}

# complete WORD... : the replies, one per line, for the last WORD, in a bash
# that loaded bash-completion and then, as /etc/bash_completion.d does at
# shell start, the mad-spank file; SLURM's own completion file is left to be
# loaded on demand, as bash-completion does.
complete_words() {
	bash -c '
		. "$1" && . "$2" || exit 1
		shift 2
		COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
		spec=$(complete -p "$1") || { echo "no completion for $1"; exit 1; }
		func=$(sed -n "s/.* -F \([^ ]*\) .*/\1/p" <<<"$spec")
		COMPREPLY=()
		"$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$bash_completion" "$script" "$@"
}

@test "mad-wait --j completes to --json (from mad-wait --help)" {
	run complete_words mad-wait --j
	assert_success
	assert_output --json
}

@test "every mad-* tool completes the long options its --help lists" {
	for tool in mad-env mad-wait mad-render mad-hostlist; do
		expected=$("$tool" --help | grep -E '^[[:space:]]+-' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
		[[ -n $expected ]]
		run complete_words "$tool" --
		assert_success
		diff <(tr -d = <<<"$output" | sort -u) <(echo "$expected")
	done
	run complete_words mad-hostlist --max
	assert_output --max-hosts=
	run complete_words mad-env --ex
	assert_output --explain
}

@test "mad-hostlist completes its commands, then no more commands" {
	run complete_words mad-hostlist ''
	assert_output "$(printf '%s\n' expand compress count nth)"
	run complete_words mad-hostlist co
	assert_output "$(printf '%s\n' compress count)"
	run complete_words mad-hostlist --sort co
	assert_output "$(printf '%s\n' compress count)"
	run complete_words mad-hostlist expand co
	assert_output ''
}

@test "an option's DIR argument completes folders: mad-wait --run-dir, sbatch --mad-run-dir=" {
	mkdir -p "$BATS_TEST_TMPDIR/runs-a" "$BATS_TEST_TMPDIR/runs-b"
	: >"$BATS_TEST_TMPDIR/runs-file"
	# in the folder's order: readline sorts what it shows
	folders=$(printf '%s\n' "$BATS_TEST_TMPDIR/runs-a" "$BATS_TEST_TMPDIR/runs-b")
	run complete_words mad-wait --run-dir "$BATS_TEST_TMPDIR/runs"
	assert_success
	assert_equal "$(sort <<<"$output")" "$folders"
	run complete_words sbatch --mad-run-dir = "$BATS_TEST_TMPDIR/runs"
	assert_success
	assert_equal "$(sort <<<"$output")" "$folders"
}

@test "sbatch --mad-f completes to --mad-fanout= (from sbatch --help, which loads mad.so)" {
	run complete_words sbatch --mad-f
	assert_success
	assert_output --mad-fanout=
}

@test "sbatch --mad-fanout=<TAB> offers auto nodes array" {
	run complete_words sbatch --mad-fanout =
	assert_output "$(printf '%s\n' auto nodes array)"
	run complete_words sbatch --mad-fanout = ''
	assert_output "$(printf '%s\n' auto nodes array)"
	run complete_words sbatch --mad-fanout = n
	assert_output nodes
	# a word not split at '=' (COMP_WORDBREAKS without '='): the whole word
	run complete_words sbatch --mad-fanout=a
	assert_output "$(printf '%s\n' --mad-fanout=auto --mad-fanout=array)"
}

@test "srun and salloc complete mad.so's options too, and their choices" {
	run complete_words srun --mad-scheduler = ''
	assert_output "$(printf '%s\n' auto slurm spur)"
	run complete_words salloc --mad-n
	assert_output "$(printf '%s\n' --mad-nnodes= --mad-nproc-per-node=)"
}

@test "SLURM's own sbatch completion still answers: --mai, and --m gives both" {
	[[ -r /usr/share/bash-completion/completions/sbatch ]] ||
		require slurm-sbatch-completion "SLURM's bash completion (Debian package slurm-client)"
	run complete_words sbatch --mai
	assert_output "$(printf '%s\n' --mail-user= --mail-type=)"
	run complete_words sbatch --m
	assert_line --mail-type=
	assert_line --mem=
	assert_line --mad-model=
	assert_line --mad-timeout=
	# and afterwards sbatch's completion is still ours in front of SLURM's
	run bash -c '. "$1" && . "$2" && COMP_WORDS=(sbatch --m) COMP_CWORD=1 && _mad_spank_slurm sbatch 2>/dev/null;
		complete -p sbatch srun salloc' bash "$bash_completion" "$script"
	assert_line --regexp '-F _mad_spank_slurm sbatch$'
	assert_line --regexp '-F _mad_spank_slurm srun$'
	assert_line --regexp '-F _mad_spank_slurm salloc$'
}

@test "no --mad-* option is offered where the plugstack does not load mad.so" {
	: >"$BATS_TEST_TMPDIR/plugstack.conf"
	run complete_words sbatch --mad-
	assert_success
	assert_output ''
}
