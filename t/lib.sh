# SPDX-License-Identifier: GPL-2.0-or-later
# t/lib.sh: shared by the bats files. Loads bats-support/bats-assert and
# finds the tools under test (the build tree first, via PATH).
# shellcheck shell=bash
# shellcheck source=t/env.sh
. "${BASH_SOURCE[0]%/*}/env.sh"
# The tools, as bin_PROGRAMS in Makefile.am lists them (t/bats/docs.bats holds this to it).
mad_tools=(mad-hostlist mad-env mad-mark mad-wait mad-render)

load_helpers() {
	load /usr/lib/bats/bats-support/load
	load /usr/lib/bats/bats-assert/load
}

# trials N: how many times a test that repeats a race runs it: N, or a quarter
# of N (rounded up) in a sanitized build (MAD_SANITIZED=1, set by Makefile.am),
# where each tool starts about 4 times slower and the whole pass has a budget.
trials() {
	if [[ ${MAD_SANITIZED:-0} == 1 ]]; then
		echo $((($1 + 3) / 4))
	else
		echo "$1"
	fi
}

# A test that needs something the machine lacks: fail under CI (where the
# suite installs everything), skip with the reason elsewhere.
require() {
	local what=$1 why=$2
	if ! command -v "$what" >/dev/null 2>&1; then
		if [[ ${CI:-} == true ]]; then
			echo "$what is missing ($why) and CI=true: failing, not skipping" >&2
			return 1
		fi
		skip "$what is not installed ($why)"
	fi
}

# Root, or a failure under CI (a skip elsewhere): for tests that unshare
# namespaces and bind-mount files over /etc.
require_root() {
	[[ $(id -u) -eq 0 ]] && return 0
	if [[ ${CI:-} == true ]]; then
		echo "not root ($1) and CI=true: failing, not skipping" >&2
		return 1
	fi
	skip "not root ($1)"
}

# A cluster whose nodes have network namespaces of their own (netns mode), or a failure
# under CI (a skip elsewhere): for tests that tell the nodes apart by them.
require_netns() {
	[[ ${MAD_CLUSTER_MODE:-} == netns ]] && return 0
	if [[ ${CI:-} == true ]]; then
		echo "the cluster is in ${MAD_CLUSTER_MODE:-an unknown} mode ($1) and CI=true: failing, not skipping" >&2
		return 1
	fi
	skip "the cluster is not in netns mode ($1)"
}

# require_spur_host HOST: HOST is spur's real SPANK host (t/spur/spurd-spank), not the
# stand-in make check writes without spur's source (Makefile.am): else a skip that says
# what to set, a failure under CI.
require_spur_host() {
	local why
	[[ -x $1 ]] || { echo "no spurd-spank at $1 (make check builds it)" >&2; return 1; }
	[[ $(head -c 2 "$1") == '#!' ]] || return 0
	why=$(sed -n 's/^# spurd-spank stand-in: //p' "$1")
	if [[ ${CI:-} == true ]]; then
		echo "$why (${1##*/} is a stand-in) and CI=true: failing, not skipping" >&2
		return 1
	fi
	skip "$why"
}

# silent_resolver TIMEOUT ATTEMPTS CMD...: runs CMD in a network and mount
# namespace of its own (as root) where the resolver never answers: its
# /etc/resolv.conf names 127.0.0.1, where a UDP socket reads every question
# and answers none, with resolv.conf's options timeout:TIMEOUT and
# attempts:ATTEMPTS (how long glibc itself would wait); its /etc/hosts
# names localhost, mad-listed-node (192.0.2.41) and mad-listed-v6
# (2001:db8::41); nsswitch.conf asks files, then dns.  The name of each
# question it reads is appended to $SILENT_RESOLVER_LOG, if set (it waits
# 0.2 s after CMD before it stops, for a question sent as CMD exits): a test
# asserts what the name server was asked, not a clock.  CMD's exit status.
silent_resolver() {
	local d log=${SILENT_RESOLVER_LOG:-/dev/null}
	d=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/silent-resolver.XXXXXX")
	printf 'nameserver 127.0.0.1\noptions timeout:%s attempts:%s\n' "$1" "$2" >"$d/resolv.conf"
	printf '%s\n' '127.0.0.1 localhost' '::1 localhost' '192.0.2.41 mad-listed-node' \
		'2001:db8::41 mad-listed-v6' >"$d/hosts"
	echo 'hosts: files dns' >"$d/nsswitch.conf"
	shift 2
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --net --mount bash -c '
		set -e
		d=$1 log=$2
		shift 2
		ip link set lo up
		for f in resolv.conf hosts nsswitch.conf; do mount --bind "$d/$f" "/etc/$f"; done
		# a name service cache would answer from outside the namespace
		[[ ! -d /run/nscd ]] || mount -t tmpfs none /run/nscd
		python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((\"127.0.0.1\", 53))
log = open(sys.argv[2], \"a\")
open(sys.argv[1], \"w\").write(\"ready\\n\")
while True:
    q = s.recv(4096)
    # the question name: length-prefixed labels after the 12-byte header
    i, labels = 12, []
    while i < len(q) and q[i] and len(labels) < 128:
        labels.append(q[i + 1:i + 1 + q[i]].decode(\"ascii\", \"replace\"))
        i += 1 + q[i]
    log.write(\".\".join(labels) + \"\\n\")
    log.flush()
" "$d/ready" "$log" &
		dns=$!
		for ((i = 0; i < 100; i++)); do [[ -s $d/ready ]] && break; sleep 0.1; done
		[[ -s $d/ready ]] || { echo "silent_resolver: the name server did not start" >&2; exit 99; }
		set +e
		"$@"
		rc=$?
		sleep 0.2
		kill "$dns"
		exit "$rc"' silent-resolver "$d" "$log" "$@"
}

# The mad.so under test. MAD_INSTALLED=deb: the one the installed mad-spank
# package holds (the suite's run against the .deb, whose tools are then the
# ones in /usr/bin); else the one t/prepare installed under $MAD_PREFIX.
mad_so() {
	if [[ ${MAD_INSTALLED:-} == deb ]]; then
		dpkg-query -L mad-spank | grep '/mad\.so$'
	else
		echo "$MAD_PREFIX/lib/slurm/mad.so"
	fi
}

# For cluster tests: the running local cluster's settings, or (no cluster)
# a failure under CI and a skip elsewhere.  Call from setup_file.
use_cluster() {
	local env=$MAD_CLUSTER_DIR/env.sh
	if [[ ! -r $env ]]; then
		if [[ ${CI:-} == true ]]; then
			echo "no local cluster ($env missing) and CI=true: failing, not skipping" >&2
			return 1
		fi
		skip "no local cluster: run t/cluster/start first"
	fi
	# shellcheck source=/dev/null
	. "$env"
	AS_USER=$(cd "$BATS_TEST_DIRNAME/../cluster" && pwd)/as-user
	# the second test user (MAD_CLUSTER_USER2): "$AS_OTHER" is one word, split on purpose
	AS_OTHER="$AS_USER --other"
	export AS_USER AS_OTHER
	# Against the package, a tool found elsewhere would hide a missing file.
	if [[ ${MAD_INSTALLED:-} == deb ]]; then
		local tool
		for tool in "${mad_tools[@]}"; do
			[[ $(command -v "$tool") == /usr/bin/"$tool" ]] ||
				{ echo "MAD_INSTALLED=deb: $tool on PATH is '$(command -v "$tool")', not the package's /usr/bin/$tool" >&2; return 1; }
		done
	fi
}

# setup() of a cluster test file: helpers, the cluster, the shared folder.
cluster_test() {
	load_helpers
	use_cluster
	cd "$MAD_CLUSTER_SHARED" || return 1
}

# look_anew PATH...: what a reader of the shared folder does before it looks for, or reads, a
# file a job wrote there: it opens every folder on the way to PATH, top down, and PATH itself
# if it is a regular file (none is read). On NFS (MAD_CLUSTER_NFS=1) this host keeps a cache
# of its own: a name it once found absent stays absent to it, and a file replaced by another
# node keeps its old attributes, until the folder's cached attributes expire (30 to 60 s) or
# an open revalidates the folder (close-to-open: /work/shared/notes/nfs-client-cache.md, facts
# 9, 12, 15 and 17). A glob or `ls` opens its folder itself. Locally a few open(2)s.
look_anew() {
	local p part d parts
	for p; do
		[[ $p == /* ]] || p=$PWD/$p
		IFS=/ read -ra parts <<<"${p#/}"
		d=
		for part in "${parts[@]}"; do
			[[ -n $part ]] || continue
			d+=/$part
			# the folder above was just opened: this lookup is the server's answer
			[[ -d $d || -f $d ]] || break
			: <"$d" || break
		done 2>/dev/null
	done
	return 0
}

# submit SBATCH-ARGS...: one batch job of the test user, "sbatch --wait --parsable", so
# $status is the job's exit status and $jobid its id (empty if sbatch gave none); $output
# is sbatch's.  The job writes $out, $MAD_CLUSTER_SHARED/NAME-N.out (NAME: the test file's
# name without "cluster-", N: the test's number); an array's tasks may write NAME-N-*.out
# (an --output= in ARGS wins).  Both are removed first and printed after (look_anew), for
# bats to show when the test fails.  A file sets at its top, for all its jobs: submit_within, the
# seconds sbatch may take (default 120), and submit_time, the jobs' --time (default none).
# shellcheck disable=SC2034,SC2154 # bats's run sets $status and $output; the tests read $jobid
submit() {
	local name
	name=$(basename "$BATS_TEST_FILENAME" .bats)
	local base=$MAD_CLUSTER_SHARED/${name#cluster-}-$BATS_TEST_NUMBER
	out=$base.out
	rm -f "$out" "$base"-*.out
	run "$AS_USER" timeout "${submit_within:-120}" sbatch --wait --parsable \
		${submit_time:+--time="$submit_time"} --output="$out" "$@"
	echo "sbatch -> $status: $output"
	jobid=$(sed -n 's/^\([0-9][0-9]*\)\(;.*\)\{0,1\}$/\1/p' <<<"$output" | head -n 1)
	look_anew "$out" # the job wrote it on a node, where this host last saw it removed
	cat "$out" "$base"-*.out 2>/dev/null || true
	# a busy MASTER_PORT names its holder in any test (a CI run once failed on one, held
	# by nothing the test had started, and nothing was left to say what)
	port_holders "$out" "$base"-*.out || true
}

# Cluster tests that change the plugstack keep a copy of it for the whole
# file and put it back at the end (setup_file / teardown_file), and copy the
# TCP rank-exchange program where the test user's jobs find it.
plugstack_save() {
	cp "$MAD_CLUSTER_PLUGSTACK" "$BATS_FILE_TMPDIR/plugstack.saved"
	cp "$BATS_TEST_DIRNAME/../helpers/tcp-exchange" "$MAD_CLUSTER_SHARED/tcp-exchange"
	chmod 0755 "$MAD_CLUSTER_SHARED/tcp-exchange"
}

plugstack_restore() {
	[[ -r ${BATS_FILE_TMPDIR:-}/plugstack.saved ]] || return 0
	cp "$BATS_FILE_TMPDIR/plugstack.saved" "$MAD_CLUSTER_PLUGSTACK"
}

# mad.so on the cluster's plugstack line, with run-dir= the folder NAME in the
# shared folder; sets and exports $so and $run_dir (plugstack_restore undoes).
use_plugin() {
	so=$(mad_so)
	[[ -r $so ]] || { echo "mad.so is not installed at '$so' (t/prepare, or the package with MAD_INSTALLED=deb, installs it)"; return 1; }
	run_dir=$MAD_CLUSTER_SHARED/$1
	fresh_run_dir "$run_dir"
	plugstack_save
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	export so run_dir
}

# The run folder of a test file, made if missing and otherwise kept as it is:
# job ids start again at 1 whenever the cluster (or its controller's state)
# starts afresh, so it holds earlier jobs' folders under the ids of the jobs
# to come, as a site's shared run folder does; every test runs over them, and
# each job must find its own folder (lib/jobdir.h), never an earlier one.
fresh_run_dir() {
	"$AS_USER" mkdir -p "$1"
}

# PyTorch across the cluster (t/helpers/torch-allreduce): shared by the SLURM and spur tests.
# The lines torch-allreduce printed in FILES.
allreduce_lines() { cat "$@" | grep '^allreduce '; }

# The port --mad-master-port=auto gives job JOB's step STEP (the batch script: none), as
# lib/contract.c (choose_port) and doc/design.md §6 compute it; the tests compare with it.
auto_port() { # JOB [STEP]
	local slot=0
	[[ -z ${2:-} ]] || slot=$((($2 + 1) % 64))
	echo $((20000 + ($1 % 100000 * 64 + slot) % 9000))
}

# The marker writer's request in FILE (t/corpus/writer) with the version of the mad-writer
# WRITER in its header (bytes 8..31, lib/writer.c's request_head), on standard output: the
# corpus was made by one version, and a request of another stops at the version check. A
# layout that changed is still refused (exit 80): then the corpus is to be made again.
writer_request_of_this_build() { # file writer
	local version
	version=$("$2" --version) || return 1
	python3 -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read())
if b[:8] == b"madwrite" and len(b) >= 32:
    b[8:32] = sys.argv[2].encode().ljust(24, b"\0")
sys.stdout.buffer.write(b)' "$1" "${version##* }"
}

# port_holders FILES...: for each "MASTER_PORT P is already in use on rank 0's node N" a job
# printed in FILES, what node N's namespace lists on port P now (ss, with the owning
# processes): a failed launch then says what held the port, not only that one did.
port_holders() {
	local p n
	cat "$@" 2>/dev/null | sed -n "s/.*MASTER_PORT \([0-9]*\) is already in use on rank 0's node \([^ ]*\) .*/\1 \2/p" |
		sort -u | while read -r p n; do
		echo "what ${MAD_CLUSTER_NS_PREFIX:-}$n lists on port $p now:"
		nsenter --net="/run/netns/${MAD_CLUSTER_NS_PREFIX:-}$n" \
			ss -tanpe "( sport = :$p or dport = :$p )" 2>&1 | head -n 20
	done
}

# Every one of WORLD ranks printed its line once: ranks 0..WORLD-1, world=WORLD and sum=WORLD
# everywhere, and on each host LOCAL_RANK 0..n-1 with LOCAL_WORLD_SIZE n for its n ranks.
# TORCHRUN: the ranks are torchrun's children, whose LOCAL_* torchrun sets from
# --nproc_per_node (it has to agree with the contract's MAD_NPROC_PER_NODE all the same).
assert_allreduce() { # world files...
	local world=$1
	shift
	port_holders "$@"
	allreduce_lines "$@" | awk -v world="$world" '
		{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		v["world"] != world { print "rank " v["rank"] ": world=" v["world"] ", not " world; bad = 1 }
		v["sum"] != world { print "rank " v["rank"] ": sum=" v["sum"] ", not " world; bad = 1 }
		seen[v["rank"]]++ { print "rank " v["rank"] " twice"; bad = 1 }
		{ n[v["host"]]++; lw[v["host"] " " v["local_world"]]++; loc[v["host"] " " v["local"]]++; lines++ }
		END {
			if (lines != world) { print lines " ranks printed, not " world; bad = 1 }
			for (r = 0; r < world; r++) if (!(r in seen)) { print "rank " r " missing"; bad = 1 }
			for (h in n) {
				if (lw[h " " n[h]] != n[h]) { print h ": LOCAL_WORLD_SIZE is not " n[h] " in every rank"; bad = 1 }
				for (l = 0; l < n[h]; l++) if (loc[h " " l] != 1) { print h ": LOCAL_RANK " l " not once"; bad = 1 }
			}
			exit bad
		}'
}

# The PyTorch helpers where the test user's jobs find them.
copy_torch_helpers() {
	local h
	for h in torch-allreduce torchrun-compat; do
		cp "$BATS_TEST_DIRNAME/../helpers/$h" "$MAD_CLUSTER_SHARED/$h"
		chmod 0755 "$MAD_CLUSTER_SHARED/$h"
	done
}

# The launcher stand-ins (t/helpers/standin/) where the test user's jobs find them.
copy_standins() {
	rm -rf "$MAD_CLUSTER_SHARED/standin"
	cp -r "$BATS_TEST_DIRNAME/../helpers/standin" "$MAD_CLUSTER_SHARED/standin"
	chmod -R a+rX "$MAD_CLUSTER_SHARED/standin"
}

# A PyTorch with gloo, or a failure under CI (a skip elsewhere).
require_torch() {
	require /usr/bin/python3 "the PyTorch tests"
	/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
		require python3-torch-with-gloo "Debian package python3-torch: the PyTorch tests"
}
