#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# t/nfs/nfs-client, the NFS client cache model the cluster's MAD_CLUSTER_NFS=1 uses:
# two mounts of one backing folder are two clients, A and B, and each rule a Linux
# NFSv3 client follows with default mount options is seen through them. "fact N" is
# fact N of the notes the model cites (t/nfs/nfs-client names them). Needs root and
# /dev/fuse.

bats_require_minimum_version 1.5.0

# Short attribute cache times, so a test sees them expire. A test that asserts what
# a client keeps while its cache is fresh mounts with long ones (mount_clients
# --fresh): on a loaded machine a step may take seconds. In one CI run B's write
# and A's next stat came 2.2 s after A's LOOKUP, and the stat after "sleep 1" found
# d's 3 s attributes expired and the name present.
acdirmin=3 acregmin=3 acdirmax=12 acfresh=60

setup() {
	load ../lib.sh
	load_helpers
	require_root "FUSE mounts with allow_other, files made as other users"
	require fusermount "Debian package fuse"
	require /usr/bin/python3 "Debian package python3-fusepy"
	if [[ ! -c /dev/fuse ]]; then
		[[ ${CI:-} != true ]] || { echo "no /dev/fuse and CI=true: failing, not skipping" >&2; return 1; }
		skip "no /dev/fuse (FUSE mounts)"
	fi
	/usr/bin/python3 -c 'import fusepy' || { echo "no fusepy (Debian package python3-fusepy)" >&2; return 1; }
	nfs=$(cd "$BATS_TEST_DIRNAME/../nfs" && pwd)/nfs-client
	for u in madtest madtest2; do
		id -u "$u" >/dev/null 2>&1 || useradd -M -s /bin/bash "$u"
	done
	# Under /tmp, not BATS_TEST_TMPDIR: the test users must reach it.
	base=$(mktemp -d /tmp/nfs-model.XXXXXX)
	chmod 0755 "$base"
	srv=$base/srv A=$base/A B=$base/B
	mkdir "$srv" "$A" "$B" "$srv/d"
	chmod 0777 "$srv/d"
}

teardown() {
	local m
	for m in "${A:-}" "${B:-}"; do
		if [[ -n $m ]] && mountpoint -q "$m"; then umount "$m" || umount -l "$m"; fi
	done
	for m in A B; do
		if [[ -r ${base:-}/$m.log ]]; then echo "== client $m's decisions"; tail -n 40 "$base/$m.log"; fi
	done
	if [[ -n ${base:-} ]]; then rm -rf "$base"; fi
}

mount_clients() { # [--fresh]: A and B, two clients of $srv
	local dmin=$acdirmin dmax=$acdirmax rmin=$acregmin rmax=6 m
	if [[ ${1:-} == --fresh ]]; then dmin=$acfresh dmax=$acfresh rmin=$acfresh rmax=$acfresh; fi
	for m in "$A" "$B"; do
		"$nfs" --acdirmin "$dmin" --acdirmax "$dmax" --acregmin "$rmin" --acregmax "$rmax" \
			--log "$base/$(basename "$m").log" "$srv" "$m"
		mountpoint -q "$m"
	done
}

# Seconds (decimal) since START (from date +%s.%N).
since() { awk -v s="$1" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }'; }

@test "a name stat'd absent stays absent while the parent is fresh, and appears after opendir (facts 9, 12)" {
	mount_clients --fresh
	run ! stat "$A/d/x"
	echo hello >"$B/d/x"
	[[ -e $srv/d/x ]]
	# fact 9: the negative entry is trusted while d's attributes are fresh (acdirmin)
	run ! stat "$A/d/x"
	sleep 1
	run ! stat "$A/d/x"
	# fact 12: opendir revalidates d; its changed ctime bumps the counter (fact 8)
	ls "$A/d" >/dev/null
	stat "$A/d/x"
	[[ $(cat "$A/d/x") == hello ]]
}

@test "a poller that only calls stat sees a new name once the parent's attributes expire (fact 16)" {
	mount_clients
	run ! stat "$A/d/y"
	start=$(date +%s.%N)
	echo hello >"$B/d/y"
	until stat "$A/d/y" >/dev/null 2>&1; do sleep 0.1; done
	took=$(since "$start")
	echo "seen by stat polling after ${took}s (acdirmin ${acdirmin}s)"
	# not before acdirmin less the time between A's LOOKUP and B's create; nearer acdirmin
	# than acdirmax, the timer a client that ignored acdirmin would keep (a loaded machine
	# may add seconds to a poll, not the 9 s between the two)
	awk -v t="$took" -v m="$acdirmin" -v x="$acdirmax" 'BEGIN { exit !(t >= m - 1 && t <= (m + x) / 2) }'
}

@test "open shows a file renamed over at once while stat keeps the old size (facts 10, 15)" {
	mount_clients --fresh
	echo old >"$B/d/z"
	[[ $(stat -c %s "$A/d/z") == 4 ]]
	echo "a much longer new content" >"$B/d/z.tmp"
	mv "$B/d/z.tmp" "$B/d/z"
	# fact 15: the old entry and its attributes are kept while fresh (acregmin)
	[[ $(stat -c %s "$A/d/z") == 4 ]]
	# fact 10: open forces a GETATTR, which finds another file: the new one
	[[ $(cat "$A/d/z") == "a much longer new content" ]]
	[[ $(stat -c %s "$A/d/z") == 26 ]]
}

@test "files made through a mount belong to the caller, with the caller's mode and permissions" {
	mount_clients
	runuser -u madtest -- sh -c "umask 027; echo x >'$A/d/own'; mkdir '$A/d/dir'; ln -s own '$A/d/link'"
	[[ $(stat -c '%U %a' "$srv/d/own") == "madtest 640" ]]
	[[ $(stat -c '%U %a' "$srv/d/dir") == "madtest 750" ]]
	[[ $(stat -c '%U %F' "$srv/d/link") == "madtest symbolic link" ]]
	# the kernel checks the caller's permissions: madtest2 may not write madtest's file
	run ! runuser -u madtest2 -- sh -c "echo y >'$B/d/own'"
	[[ $output == *"Permission denied"* ]]
	# O_EXCL on an existing name fails; write + fsync + rename land in the backing folder
	run ! runuser -u madtest -- python3 -c "import os; os.open('$A/d/own', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)"
	[[ $output == *FileExistsError* ]]
	runuser -u madtest -- python3 -c "
import os
fd = os.open('$A/d/.t', os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
os.write(fd, b'done\n'); os.fsync(fd); os.close(fd)
os.rename('$A/d/.t', '$A/d/marker')
st = os.stat('marker', dir_fd=os.open('$A/d', os.O_RDONLY | os.O_DIRECTORY))
assert st.st_size == 5, st"
	[[ $(stat -c %U "$srv/d/marker") == madtest && $(cat "$srv/d/marker") == "done" ]]
}

@test "the sticky bit of a 1777 folder refuses another user's rename and unlink" {
	mount_clients
	mkdir -m 1777 "$srv/pub"
	runuser -u madtest -- touch "$A/pub/mine"
	run ! runuser -u madtest2 -- rm -f "$B/pub/mine"
	[[ $output == *"Operation not permitted"* ]]
	run ! runuser -u madtest2 -- mv "$B/pub/mine" "$B/pub/theirs"
	[[ $output == *"Operation not permitted"* ]]
	[[ -e $srv/pub/mine ]]
	runuser -u madtest -- mv "$A/pub/mine" "$A/pub/moved"
	[[ -e $srv/pub/moved ]]
}

@test "a symbolic link opened with O_NOFOLLOW gives ELOOP" {
	mount_clients
	echo x >"$srv/d/target"
	ln -s target "$B/d/sl"
	run ! python3 -c "import os; os.open('$A/d/sl', os.O_RDONLY | os.O_NOFOLLOW)"
	[[ $output == *"Too many levels of symbolic links"* ]]
	[[ $(stat -c %F "$A/d/sl") == "symbolic link" && $(stat -L -c %F "$A/d/sl") == "regular file" ]]
}

@test "readdir lists new names after revalidating the folder and primes them (facts 13, 14)" {
	mount_clients --fresh
	[[ -z $(ls "$A/d") ]]
	run ! stat "$A/d/new"
	touch "$B/d/new"
	run ! stat "$A/d/new" # fact 9
	# fact 13: readdir revalidates d (changed: a fresh READDIRPLUS) and lists it
	[[ $(ls "$A/d") == new ]]
	# fact 14: the listed name replaced the negative entry
	stat "$A/d/new"
	grep -q 'READDIRPLUS: 1 names primed (fact 14)' "$base/A.log"
}
