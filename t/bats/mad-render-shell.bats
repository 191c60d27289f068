#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Shell safety of mad-render's output, as a property: 2,100 nasty values
# (quotes, $( ), backticks, newlines, globs, leading '-', '=', '~', '!',
# control characters, non-ASCII, empty, 10,000-byte strings; never a NUL),
# each printed by {{ }} in several shell contexts of one script; dash and
# bash run the script, which writes every value back NUL-terminated, and
# what comes back is compared byte for byte with the values.  Nothing in a
# value may run: values hold "touch PWNED" in every form, and no PWNED file
# may appear.

bats_require_minimum_version 1.5.0

SEED=20261130

setup() {
	load ../lib.sh
	load_helpers
	require python3 "the value generator"
	work=$BATS_TEST_TMPDIR/work
	mkdir -p "$work"
}

# values.json ({"values": [...]}) and expected (each value, then a NUL).
make_values() {
	python3 - "$SEED" "$work" <<-'EOF'
		import json, random, sys
		seed, out = sys.argv[1], sys.argv[2]
		rng = random.Random(int(seed))
		special = [
		    "", " ", "  ", "'", '"', "''", '""', "\\", "\\\\", "\\'", "'\\''", "a'b", 'a"b',
		    "$(touch PWNED)", "`touch PWNED`", "$(touch${IFS}PWNED)", "\"$(touch PWNED)\"",
		    "'$(touch PWNED)'", "; touch PWNED", "| touch PWNED", "&& touch PWNED",
		    "& touch PWNED", "\ntouch PWNED\n", "x\ntouch PWNED", ">PWNED", "> PWNED",
		    "<PWNED", "$((1+1))", "${HOME}", "$HOME", "$1", "$@", "$*", "$$", "$?", "$#",
		    "$-", "$!", "${x:-$(touch PWNED)}", "!", "!!", "!$", "!-1", "~", "~root",
		    "~/x", "a=~", "x:~/y", "*", "?", "[a]", "[!a]", "*.*", "/*", ".*", "-", "--",
		    "-n", "-e", "-E", "-x", "--help", "-", "=", "a=b", "==", "#", "# c", "a #b",
		    "a#b", ";", ";;", "&", "|", "(", ")", ")(", "()", "{", "}", "{a,b}", "{1..3}",
		    "<", ">", "<<EOF", "2>&1", "\n", "\n\n", "\t", "\r", "\r\n", "a\nb", " \n ",
		    "\\n", "\\0", "\\x41", "\\c", "%s", "%%", "%d", "%b", "é", "日本語", "😀",
		    "\u00a0", "\ufeff", "e\u0301", "\u2028", "\u200b", "\x01\x02\x1b[31m", "\x7f",
		    "\x1f", " leading", "trailing ", "  two  spaces  ", "IFS", "${IFS}", "PATH=/x",
		    "export", "set", "--", "-- -n", "time", "if", "then", "fi", "!x", "x!",
		    "\\$(touch PWNED)", "\\`touch PWNED\\`", "$'\\x41'", "$\"x\"", "a\\\nb",
		]
		alphabet = ("abcXYZ019_-./@%+:,=~!#$&*?[]{}()<>|;^`'\"\\ \t\n\r"
		            "\x01\x1b\x7féß日😀\u00a0\u2028")
		values = list(special)
		values += ["x" * 10000, "'" * 10000, "$(touch PWNED)" * 700,
		           "".join(rng.choice(alphabet) for _ in range(10000))]
		while len(values) < 2100:
		    n = rng.choice([0, 1, 1, 2, 3, 5, 8, 13, 40, 200])
		    values.append("".join(rng.choice(alphabet) for _ in range(n)))
		assert not any("\0" in v for v in values)
		with open(out + "/values.json", "w", encoding="utf-8") as f:
		    json.dump({"values": values, "nl": "\n", "cr": "\r"}, f,
		              ensure_ascii=rng.random() < 0.5)
		with open(out + "/expected", "wb") as f:
		    f.write(b"".join(v.encode("utf-8") + b"\0" for v in values))
		print(len(values))
	EOF
}

@test "2,100 nasty values, five shell contexts: dash and bash read back every byte, nothing runs" {
	run make_values
	assert_success
	local count=$output
	((count >= 2000))
	# Five contexts: an assignment, a printf argument, export, set --, a for
	# list.  Each writes the value(s) it got, NUL-terminated, to its file.
	cat >"$work/script.j2" <<-'EOF'
		# written by t/bats/mad-render-shell.bats: the values back, NUL-terminated
		out=$1
		: >"$out.assign"
		: >"$out.arg"
		: >"$out.export"
		: >"$out.set"
		: >"$out.for"
		{% for v in values %}
		v{{ loop.index }}={{ v }}
		printf '%s\0' "$v{{ loop.index }}" >>"$out.assign"
		printf '%s\0' {{ v }} >>"$out.arg"
		export X_{{ loop.index }}={{ v }}
		printf '%s\0' "$X_{{ loop.index }}" >>"$out.export"
		unset X_{{ loop.index }}
		set -- {{ v }}
		printf '%s\0' "$@" >>"$out.set"
		for w in {{ v }}; do printf '%s\0' "$w" >>"$out.for"; done
		{% endfor %}
	EOF
	cd "$work"
	mad-render -c values.json script.j2 >script.sh 2>render.err || {
		cat render.err
		return 1
	}
	local sh ctx
	for sh in dash bash; do
		require "$sh" "running the rendered script"
		mkdir -p "$work/$sh"
		(cd "$work/$sh" && "$sh" ../script.sh "$work/$sh/got") || {
			echo "$sh fails on the rendered script (status $?)"
			return 1
		}
	done
	run find "$BATS_TEST_TMPDIR" -name 'PWNED*'
	if [[ -n $output ]]; then
		echo "a value ran as a command: $output"
		return 1
	fi
	for sh in dash bash; do
		for ctx in assign arg export set for; do
			if ! cmp "$work/expected" "$work/$sh/got.$ctx"; then
				echo "$sh, context '$ctx': the values do not come back as they were"
				python3 - "$work/expected" "$work/$sh/got.$ctx" <<-'EOF'
					import sys
					a = open(sys.argv[1], "rb").read().split(b"\0")
					b = open(sys.argv[2], "rb").read().split(b"\0")
					for i, (x, y) in enumerate(zip(a, b)):
					    if x != y:
					        print(f"value {i + 1}: sent {x[:200]!r}, got {y[:200]!r}")
					        break
					else:
					    print(f"{len(a) - 1} values sent, {len(b) - 1} back")
				EOF
				return 1
			fi
		done
	done
	echo "# $count values, 5 contexts, dash and bash: identical" >&3
}

@test "the same values through | sbatch: each stays on its own #SBATCH line" {
	run make_values
	assert_success
	local count=$output
	# | sbatch refuses newlines and carriage returns; the others give one line
	cat >"$work/sbatch.j2" <<-'EOF'
		{% for v in values %}
		{% if nl not in v and cr not in v %}
		#SBATCH --comment={{ v | sbatch }}
		{% endif %}
		{% endfor %}
	EOF
	cd "$work"
	run mad-render -c values.json sbatch.j2
	assert_success
	local lines
	lines=$(python3 -c '
import json, sys
v = json.load(open("values.json"))["values"]
print(sum(1 for x in v if "\n" not in x and "\r" not in x))')
	[[ $(printf '%s\n' "$output" | grep -c '^#SBATCH --comment=') -eq $lines ]]
	[[ $(printf '%s\n' "$output" | wc -l) -eq $lines ]]
	((count >= 2000))
}
