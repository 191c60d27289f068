#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# t/fetch-sources and t/sources: a source found beside the tree or in the cache only when it is
# the pinned one, fetched from upstream (git, curl) and verified, refused with what was
# expected and what came, and offline a message naming the file and where to put it.  The
# upstreams are servers on 127.0.0.1 (git daemon, python3 -m http.server) serving small
# sources made here, named by a table of the test's own (MAD_SOURCES_TABLE); the script runs
# from a copy of the tree with nothing beside it but what a test puts there.

bats_require_minimum_version 1.5.0

# free_port: a TCP port nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

setup_file() {
	local d=$BATS_FILE_TMPDIR
	mkdir -p "$d/srv" "$d/www"
	git_port=$(free_port)
	git daemon --reuseaddr --export-all --base-path="$d/srv" --listen=127.0.0.1 \
		--port="$git_port" --pid-file="$d/git.pid" "$d/srv" >"$d/git.log" 2>&1 3>&- &
	http_port=$(free_port)
	python3 -m http.server --bind 127.0.0.1 --directory "$d/www" "$http_port" \
		>"$d/http.log" 2>&1 3>&- &
	echo $! >"$d/http.pid"
	export git_port http_port
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$http_port/" >/dev/null && [[ -s $d/git.pid ]] && return 0
		sleep 0.1
	done
	echo "the servers did not start: $(cat "$d/git.log" "$d/http.log")"
	return 1
}

teardown_file() {
	kill "$(cat "$BATS_FILE_TMPDIR/git.pid")" "$(cat "$BATS_FILE_TMPDIR/http.pid")" 2>/dev/null || true
}

setup() {
	load ../lib.sh
	load_helpers
	src=${MAD_SRCDIR:-$BATS_TEST_DIRNAME/../..}
	# a tree of its own: its shared folder (beside it) is $w/shared, empty
	w=$BATS_TEST_TMPDIR/w
	mkdir -p "$w/tree/t" "$w/shared/demo"
	cp "$src/t/fetch-sources" "$src/t/sources" "$w/tree/t/"
	fetch=$w/tree/t/fetch-sources
	export MAD_SOURCES_TABLE=$w/sources MAD_SOURCES_CACHE=$w/cache
	unset MAD_SOURCES_OFFLINE MAD_SPUR_TARBALL MAD_SLURM_TARBALLS
	echo '# name version file upstream tag commit sha256' >"$MAD_SOURCES_TABLE"
}

# upstream NAME: a git repository NAME.git the git daemon serves, with one commit tagged v1;
# $commit is its commit, $tarball (in $w) its "git archive" with xz, $sum that file's sha256.
upstream() {
	local repo=$BATS_FILE_TMPDIR/srv/$1.git
	git init -q "$w/$1"
	echo "source of $1" >"$w/$1/README"
	git -C "$w/$1" add README
	git -C "$w/$1" -c user.name=t -c user.email=t@example.org commit -q -m one
	git -C "$w/$1" tag v1
	commit=$(git -C "$w/$1" rev-parse HEAD)
	git clone -q --bare "$w/$1" "$repo"
	tarball=$w/$1-1.tar.xz
	git -C "$w/$1" archive --format=tar --prefix="$1-1/" HEAD | xz -6 >"$tarball"
	sum=$(sha256sum <"$tarball" | cut -c1-64)
}

# row NAME UPSTREAM TAG: the test table pins NAME as $commit and $sum, file demo/NAME-1.tar.xz.
row() {
	echo "$1 1 demo/$1-1.tar.xz $2 $3 $commit $sum" >>"$MAD_SOURCES_TABLE"
}

# cache_is_empty: no file in the cache but its lock; no fetch folder left.
cache_is_empty() {
	run find "$w/cache" -mindepth 1 ! -type d ! -name .lock
	assert_output ''
	run find "$w/cache" -name '.fetch-*'
	assert_output ''
}

@test "a copy beside the tree with the pinned sha256 is found; nothing is fetched" {
	upstream found
	row found "http://127.0.0.1:1/nothing-listens.tar.xz" -
	cp "$tarball" "$w/shared/demo/found-1.tar.xz"
	run --separate-stderr "$fetch" found
	assert_success
	assert_output "$w/shared/demo/found-1.tar.xz"
	run "$fetch" --check
	assert_success
	assert_output "found: found $w/shared/demo/found-1.tar.xz"
	[[ ! -e $w/cache/demo ]]
}

@test "a copy beside the tree with another sha256 is refused: expected, got, and what to do" {
	upstream wrong
	row wrong "git://127.0.0.1:$git_port/wrong.git" v1
	echo 'not the source' | xz >"$w/shared/demo/wrong-1.tar.xz"
	got=$(sha256sum <"$w/shared/demo/wrong-1.tar.xz" | cut -c1-64)
	run "$fetch" wrong
	assert_failure 2
	assert_output --partial "t/fetch-sources: wrong: $w/shared/demo/wrong-1.tar.xz is not wrong-1.tar.xz"
	assert_output --partial "sha256 expected $sum, got $got; refused"
	# never passed over for a fetch
	refute_output --partial fetching
	[[ ! -e $w/cache/demo/wrong-1.tar.xz ]]
}

@test "fetched by git at its tag, verified by its commit, archived into the cache, then found there" {
	upstream bytag
	row bytag "git://127.0.0.1:$git_port/bytag.git" v1
	run --separate-stderr "$fetch" bytag
	assert_success
	assert_output "$w/cache/demo/bytag-1.tar.xz"
	[[ $stderr == *"bytag: verified, in $w/cache/demo/bytag-1.tar.xz"* ]] || { echo "$stderr"; false; }
	[[ $(xz -dc "$output" | git get-tar-commit-id) == "$commit" ]]
	[[ $(tar -xJOf "$output" bytag-1/README) == 'source of bytag' ]]
	# the cache is read first: no server needed now
	echo "bytag 1 demo/bytag-1.tar.xz git://127.0.0.1:1/bytag.git v1 $commit $sum" >"$MAD_SOURCES_TABLE"
	run --separate-stderr "$fetch" --no-fetch bytag
	assert_success
	assert_output "$w/cache/demo/bytag-1.tar.xz"
	# a cached copy that was changed is not taken
	echo 'changed' | xz >"$w/cache/demo/bytag-1.tar.xz"
	run "$fetch" --no-fetch bytag
	assert_failure 1
	assert_output --partial "bytag: ignored the cached $w/cache/demo/bytag-1.tar.xz: sha256 expected $sum"
}

@test "fetched by git at a commit (no tag), verified" {
	upstream bycommit
	row bycommit "git://127.0.0.1:$git_port/bycommit.git" -
	run --separate-stderr "$fetch" bycommit
	assert_success
	assert_output "$w/cache/demo/bycommit-1.tar.xz"
	[[ $(xz -dc "$output" | git get-tar-commit-id) == "$commit" ]]
}

@test "a tag moved to another commit is refused, and nothing is left in the cache" {
	upstream moved
	row moved "git://127.0.0.1:$git_port/moved.git" v1
	echo more >>"$w/moved/README"
	git -C "$w/moved" -c user.name=t -c user.email=t@example.org commit -q -am two
	other=$(git -C "$w/moved" rev-parse HEAD)
	git -C "$w/moved" tag -f v1 >/dev/null
	git -C "$w/moved" push -q -f "$BATS_FILE_TMPDIR/srv/moved.git" HEAD:refs/heads/master refs/tags/v1
	run "$fetch" moved
	assert_failure 2
	assert_output --partial "moved: tag v1 of git://127.0.0.1:$git_port/moved.git is commit $other, expected commit $commit"
	assert_output --partial 'refused (nothing kept)'
	cache_is_empty
}

@test "a download (curl) with the pinned sha256 is kept; a corrupted one is refused and nothing is left" {
	upstream dl
	cp "$tarball" "$BATS_FILE_TMPDIR/www/dl-1.tar.xz"
	row dl "http://127.0.0.1:$http_port/dl-1.tar.xz" -
	run --separate-stderr "$fetch" dl
	assert_success
	assert_output "$w/cache/demo/dl-1.tar.xz"
	cmp "$tarball" "$output"
	# the same file with one byte changed
	rm -rf "$w/cache"
	python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 1; open(p, "wb").write(b)' \
		"$BATS_FILE_TMPDIR/www/dl-1.tar.xz"
	got=$(sha256sum <"$BATS_FILE_TMPDIR/www/dl-1.tar.xz" | cut -c1-64)
	run "$fetch" dl
	assert_failure 2
	assert_output --partial "dl: the download from http://127.0.0.1:$http_port/dl-1.tar.xz is not dl-1.tar.xz"
	assert_output --partial "sha256 expected $sum, got $got; refused (nothing kept)"
	cache_is_empty
}

@test "offline: the message names the file and where to put it, and nothing is left in the cache" {
	upstream off
	port=$(free_port) # nothing listens there
	row off "git://127.0.0.1:$port/off.git" v1
	run "$fetch" off
	assert_failure 1
	assert_output --partial "off: off-1.tar.xz not found here, and fetching it from git://127.0.0.1:$port/off.git failed ("
	assert_output --partial "): put off-1.tar.xz (off 1, sha256 $sum) in $w/shared/demo/"
	cache_is_empty
	# --no-fetch (make check) and --check say the same, and how to fetch it
	run "$fetch" --no-fetch off
	assert_failure 1
	assert_output "t/fetch-sources: off: off-1.tar.xz not found: put off-1.tar.xz (off 1, sha256 $sum) in $w/shared/demo/, or run t/fetch-sources off to fetch it from git://127.0.0.1:$port/off.git"
	run "$fetch" --check
	assert_failure 1
	assert_output --partial "off: missing: put off-1.tar.xz"
	# and with the file put there, it is found
	cp "$tarball" "$w/shared/demo/"
	run --separate-stderr "$fetch" off
	assert_success
	assert_output "$w/shared/demo/off-1.tar.xz"
}

@test "spur's source: MAD_SPUR_TARBALL is verified too, and without it t/spur/host/build says what to set (make check's stand-in)" {
	unset MAD_SOURCES_TABLE
	mkdir -p "$w/tree/t/spur/host"
	cp "$src/t/spur/host/build" "$w/tree/t/spur/host/"
	echo 'not spur' | xz >"$w/not-spur.tar.xz"
	MAD_SPUR_TARBALL=$w/not-spur.tar.xz run "$fetch" spur
	assert_failure 2
	assert_output --partial "spur: $w/not-spur.tar.xz is not spur-4cc3da8.tar.xz"
	assert_output --partial "sha256 expected $(awk '$1 == "spur" {print $7}' "$src/t/sources"), got"
	MAD_SOURCES_OFFLINE=1 run "$w/tree/t/spur/host/build"
	assert_failure 3
	assert_output --partial "spur: spur-4cc3da8.tar.xz not found: put spur-4cc3da8.tar.xz"
	assert_output --partial "in $w/shared/spur/ or set MAD_SPUR_TARBALL to it, or run t/fetch-sources spur"
}

@test "t/sources pins spur and the SchedMD release of every source release t/suite tests, each row well formed" {
	MAD_SOURCES_TABLE='' run "$src/t/fetch-sources" --names
	assert_success
	assert_line spur
	releases=$(sed -n 's/^releases=//p' "$src/t/suite")
	IFS=, read -r -a rels <<<"$releases"
	for r in "${rels[@]}"; do
		[[ $r == 22.05 ]] && continue # Debian's
		assert_line "slurm-$r"
	done
	# a bad row is named, with its line
	printf 'x 1 demo/x.tar.xz git://h/x.git v1 nothex %064d\n' 0 >"$MAD_SOURCES_TABLE"
	run "$fetch" x
	assert_failure 64
	assert_output --partial "$MAD_SOURCES_TABLE: line 1: expected 'name version dir/file.tar.xz upstream tag commit sha256'"
}
