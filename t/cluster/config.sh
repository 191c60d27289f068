# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Settings of the throwaway test cluster, sourced by start, stop, status and as-user.
# Every setting can be overridden from the environment. The defaults are chosen to be
# unlikely to clash with a real SLURM, another test cluster or the host's own network,
# so several clusters can coexist if each gets its own dir, ports, subnet, bridge and
# namespace prefix.

# shellcheck source=t/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/../env.sh"  # MAD_CLUSTER_DIR: everything the cluster writes
: "${MAD_CLUSTER_NODES:=4}"                  # nodes are n1..nN
: "${MAD_CLUSTER_CPUS:=2}"                   # CPUs= of each node (--exclusive takes all)
: "${MAD_CLUSTER_NETNS:=auto}"               # auto: namespaces when root; 0: loopback; 1: namespaces
# Three octets: a /24, the bridge .1, node k .(10+k), up to 244 nodes. Two octets (10.252):
# a /16, the bridge .0.1, node k the address 10 + k above the subnet's (.0.11, ...,
# .1.10 for node 256), up to 1024 nodes.
: "${MAD_CLUSTER_SUBNET:=10.213.47}"
: "${MAD_CLUSTER_BRIDGE:=madbr47}"           # host-side veths are <bridge>v<k> (<= 15 chars)
: "${MAD_CLUSTER_NS_PREFIX:=madns47-}"       # namespace of node nK is <prefix>nK
# 2: a second network per node, as a site's management network beside its fabric: each
# node's eth1 on a second bridge (<bridge>m, subnet MAD_CLUSTER_SUBNET2, node k .(10+k), the
# bridge .1), the nodes' default route on it, its bridge ports isolated (a node reaches the
# bridge's address there, never another node, as a firewall between management ports does),
# and every hosts view naming node nK by its eth1 address, its eth0 (the fabric) as nK-fab.
# SLURM keeps eth0 (NodeAddr). So a program that takes its own host name's address (gloo's
# default device) or the default route's interface picks a network its peers cannot reach.
# 1 (the default): eth0 only. Needs namespaces; not with MAD_CLUSTER_IPV6_ONLY.
: "${MAD_CLUSTER_NETS:=1}"
: "${MAD_CLUSTER_SUBNET2:=${MAD_CLUSTER_SUBNET%.*}.$(((${MAD_CLUSTER_SUBNET##*.} + 100) % 256))}"
# A node number K: nK gets only an IPv6 address (no IPv4 on its eth0), every other node and
# the bridge get one too (dual stack). Then SLURM (NodeAddr, SlurmctldHost) and every hosts
# view use IPv6 addresses only: nK reaches no IPv4 address, and torch's gloo announces to its
# peers the address each rank resolves for its own name. Empty (the default): IPv4 only.
# Needs namespaces.
: "${MAD_CLUSTER_IPV6_ONLY:=}"
# 1: two more partitions over the same nodes for preemption tests, "low" (PriorityTier=1) and
# "high" (PriorityTier=2), where a job in high requeues the jobs in low it needs nodes of
# (PreemptType=preempt/partition_prio, PreemptMode=REQUEUE). The default partition "mad",
# which every other test uses, stays as it is. 0: leave them out.
: "${MAD_CLUSTER_PREEMPT:=1}"
# N > 0: each node has N GRES GPUs without any GPU (notes/local-cluster.md, "GPUs without
# GPUs"): GresTypes=gpu, Gres=gpu:N, and a gres.conf (AutoDetect=off) naming character
# devices made for the cluster ($MAD_CLUSTER_DIR/dev/gpu0..N-1, copies of /dev/null), so
# SLURM binds them per task as on a GPU node (TaskPlugin=task/none: the node's indices).
# 0 (the default): no GRES. Four tasks per node need MAD_CLUSTER_CPUS=4. t/suite and
# t/cluster/test give their clusters 4: a job that asks for none gets none, but an
# --exclusive job is given every GPU of its nodes, as on a GPU cluster (sbatch(1),
# --exclusive: "allocated all CPUs and GRES on all nodes").
: "${MAD_CLUSTER_GPUS:=0}"
# With GPUs, node K's are AMD's: its gres.conf line has Flags=amd_gpu_env, as an AMD site's
# (AutoDetect=rsmi) has, so SLURM sets only ROCR_VISIBLE_DEVICES there, no
# CUDA_VISIBLE_DEVICES (gres.conf(5), Flags; SLURM 24.11
# src/plugins/gres/common/gres_common.c gres_common_gpu_set_env). The other nodes' lines
# name no flag, so SLURM sets every list there (CUDA_, ROCR_VISIBLE_DEVICES,
# GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK). Default: the last node; 0: none.
: "${MAD_CLUSTER_AMD_NODE:=$MAD_CLUSTER_NODES}"
# 1: the shared folder ($MAD_CLUSTER_DIR/shared, where the tests' run folders are) behaves
# as NFS does at a site: its files are kept in $MAD_CLUSTER_DIR/nfs-server (the server), and
# each node sees them through a client of its own, t/nfs/nfs-client (a model of a Linux NFS
# client's cache), mounted at that path in the node's mount namespace; the host (tests,
# as-user, mad-wait) sees them through one more client mounted there. A name one node
# looked up absent then stays absent to it until the folder's cached attributes expire
# (30 to 60 s) or it opens the folder. Needs root and /dev/fuse. 0: a plain local folder,
# every file seen by every node the moment it is renamed into place.
: "${MAD_CLUSTER_NFS:=0}"
# Options of every nfs-client, e.g. "--acdirmin 3 --acdirmax 6" (default: NFS's own).
: "${MAD_CLUSTER_NFS_ARGS:=}"
: "${MAD_CLUSTER_CTLD_PORT:=16817}"
: "${MAD_CLUSTER_SLURMD_PORT:=16821}"        # node k listens on this + k - 1
# seconds start waits for all nodes to be idle once every slurmd runs (a node a second each
# 4 nodes beyond the first 240: a loaded 2-core host registers about that many)
: "${MAD_CLUSTER_START_TIMEOUT:=$((MAD_CLUSTER_NODES > 240 ? 60 + (MAD_CLUSTER_NODES - 240) / 4 : 60))}"
# SLURM's MessageTimeout: how long a client waits for a daemon's answer. A site's slurmctld
# and slurmds have cores of their own; here 2 cores carry them all, and when 256 batch
# scripts each ask for a step at once the controller answers some of them after 10 s. The
# client has then given up and asks again, while the step of the lost answer holds the job's
# CPUs: its srun waits for them for ever (t/README.md, "Clusters of hundreds of nodes").
# So 10 s up to 128 nodes, then 60.
: "${MAD_CLUSTER_MESSAGE_TIMEOUT:=$((MAD_CLUSTER_NODES > 128 ? 60 : 10))}"
: "${MAD_SLURM_PREFIX:=}"                    # a SLURM built by t/slurm/build; empty: Debian's

# The cluster runs one SLURM release everywhere: its daemons here, and its clients in every
# test, the spur shims (t/spur/lib.sh spur_real takes the first real client on PATH), the
# demo and the benches, all through PATH (env.sh puts the same in front). Clients of another
# release fail against this controller ("Incompatible versions of client and server code").
if [[ -n $MAD_SLURM_PREFIX ]]; then
	[[ -x $MAD_SLURM_PREFIX/sbin/slurmctld && -x $MAD_SLURM_PREFIX/bin/sbatch ]] || {
		echo "mad-cluster: MAD_SLURM_PREFIX=$MAD_SLURM_PREFIX has no sbin/slurmctld or bin/sbatch (t/slurm/build VERSION prints one)" >&2
		exit 2
	}
	case ":$PATH:" in
		"$MAD_SLURM_PREFIX/bin:$MAD_SLURM_PREFIX/sbin:"*) ;;
		*) PATH=$MAD_SLURM_PREFIX/bin:$MAD_SLURM_PREFIX/sbin:$PATH ;;
	esac
	export PATH
fi

# Jobs must run as an ordinary user to exercise the plugin's privilege rules; only root
# can switch users, so without root the cluster runs everything as the caller.
# MAD_CLUSTER_USER2 is a second ordinary user (as-user --other), for tests where another
# user of a shared run folder plants files; MAD_CLUSTER_GROUP a group the first user
# belongs to as a secondary group only (its primary group stays its own), for a run
# folder shared by group. start creates them. Without root both users are the caller and
# there is no such group: tests that need them say so.
if [[ $(id -u) == 0 ]]; then
	: "${MAD_CLUSTER_USER:=madtest}"
	: "${MAD_CLUSTER_USER2:=madtest2}"
	: "${MAD_CLUSTER_GROUP:=madshare}"
else
	: "${MAD_CLUSTER_USER:=$(id -un)}"
	: "${MAD_CLUSTER_USER2:=$(id -un)}"
	: "${MAD_CLUSTER_GROUP:=}"
fi

[[ $MAD_CLUSTER_NFS == [01] ]] || { echo "MAD_CLUSTER_NFS must be 0 or 1 (got '$MAD_CLUSTER_NFS')" >&2; exit 2; }
[[ $MAD_CLUSTER_PREEMPT == [01] ]] || { echo "MAD_CLUSTER_PREEMPT must be 0 or 1 (got '$MAD_CLUSTER_PREEMPT')" >&2; exit 2; }
[[ $MAD_CLUSTER_GPUS =~ ^[0-9]{1,2}$ ]] || { echo "MAD_CLUSTER_GPUS must be a number of GPUs per node, 0..99 (got '$MAD_CLUSTER_GPUS')" >&2; exit 2; }
[[ $MAD_CLUSTER_MESSAGE_TIMEOUT =~ ^[1-9][0-9]{0,3}$ ]] ||
	{ echo "MAD_CLUSTER_MESSAGE_TIMEOUT must be seconds, 1..9999 (got '$MAD_CLUSTER_MESSAGE_TIMEOUT')" >&2; exit 2; }
[[ $MAD_CLUSTER_AMD_NODE =~ ^[0-9]{1,3}$ && $MAD_CLUSTER_AMD_NODE -le $MAD_CLUSTER_NODES ]] ||
	{ echo "MAD_CLUSTER_AMD_NODE must be a node number 1..$MAD_CLUSTER_NODES, or 0 (got '$MAD_CLUSTER_AMD_NODE')" >&2; exit 2; }

case $MAD_CLUSTER_NETNS in
	auto) if [[ $(id -u) == 0 ]]; then MAD_CLUSTER_NETNS=1; else MAD_CLUSTER_NETNS=0; fi ;;
	0 | 1) ;;
	*) echo "MAD_CLUSTER_NETNS must be auto, 0 or 1 (got '$MAD_CLUSTER_NETNS')" >&2; exit 2 ;;
esac
if [[ $MAD_CLUSTER_NETNS == 1 ]]; then MAD_CLUSTER_MODE=netns; else MAD_CLUSTER_MODE=loopback; fi
if [[ -n $MAD_CLUSTER_IPV6_ONLY ]]; then
	[[ $MAD_CLUSTER_IPV6_ONLY =~ ^[1-9][0-9]{0,2}$ && $MAD_CLUSTER_IPV6_ONLY -le $MAD_CLUSTER_NODES ]] ||
		{ echo "MAD_CLUSTER_IPV6_ONLY must be a node number 1..$MAD_CLUSTER_NODES (got '$MAD_CLUSTER_IPV6_ONLY')" >&2; exit 2; }
	[[ $MAD_CLUSTER_MODE == netns ]] ||
		{ echo "MAD_CLUSTER_IPV6_ONLY needs network namespaces (root, MAD_CLUSTER_NETNS=1)" >&2; exit 2; }
fi
[[ $MAD_CLUSTER_NETS == [12] ]] || { echo "MAD_CLUSTER_NETS must be 1 or 2 (got '$MAD_CLUSTER_NETS')" >&2; exit 2; }
if [[ $MAD_CLUSTER_NETS == 2 ]]; then
	[[ $MAD_CLUSTER_MODE == netns && -z $MAD_CLUSTER_IPV6_ONLY ]] ||
		{ echo "MAD_CLUSTER_NETS=2 needs network namespaces (root, MAD_CLUSTER_NETNS=1) and no MAD_CLUSTER_IPV6_ONLY" >&2; exit 2; }
	[[ $MAD_CLUSTER_SUBNET2 != "$MAD_CLUSTER_SUBNET" ]] ||
		{ echo "MAD_CLUSTER_SUBNET2 must differ from MAD_CLUSTER_SUBNET ($MAD_CLUSTER_SUBNET)" >&2; exit 2; }
fi
export MAD_CLUSTER_IPV6_ONLY MAD_CLUSTER_NFS MAD_CLUSTER_NFS_ARGS MAD_CLUSTER_NETS MAD_CLUSTER_SUBNET2

export MAD_CLUSTER_DIR MAD_CLUSTER_NODES MAD_CLUSTER_CPUS MAD_CLUSTER_NETNS MAD_CLUSTER_SUBNET \
	MAD_CLUSTER_BRIDGE MAD_CLUSTER_NS_PREFIX MAD_CLUSTER_CTLD_PORT MAD_CLUSTER_SLURMD_PORT \
	MAD_CLUSTER_START_TIMEOUT MAD_CLUSTER_USER MAD_CLUSTER_USER2 MAD_CLUSTER_GROUP MAD_CLUSTER_MODE \
	MAD_SLURM_PREFIX MAD_CLUSTER_PREEMPT MAD_CLUSTER_GPUS MAD_CLUSTER_AMD_NODE \
	MAD_CLUSTER_MESSAGE_TIMEOUT

# shellcheck disable=SC2034 # used by the scripts that source this file
mad_conf=$MAD_CLUSTER_DIR/etc/slurm.conf
# Tags our /etc/hosts lines; includes the folder so two clusters never remove each other's.
# shellcheck disable=SC2034
mad_hosts_marker="# mad-cluster $MAD_CLUSTER_DIR"

mad_die() { echo "mad-cluster: $*" >&2; exit 1; }
mad_log() { echo "mad-cluster: $*"; }

# IPv6 mode: a ULA prefix derived from the subnet ("mad" in hex, then its third octet), so
# two clusters with distinct subnets never share one; node k is ::(10+k), the bridge ::1.
mad_ipv6_prefix() { local third=${MAD_CLUSTER_SUBNET#*.}; echo "fd00:6d61:64:${third#*.}:"; }
mad_subnet_bits() { if [[ $MAD_CLUSTER_SUBNET == *.*.* ]]; then echo 24; else echo 16; fi; }
mad_node_addr4() {
	if [[ $(mad_subnet_bits) == 24 ]]; then echo "$MAD_CLUSTER_SUBNET.$((10 + $1))"; return; fi
	echo "$MAD_CLUSTER_SUBNET.$(((10 + $1) / 256)).$(((10 + $1) % 256))"
}
mad_node_addr_net2() { echo "$MAD_CLUSTER_SUBNET2.$((10 + $1))"; } # MAD_CLUSTER_NETS=2: eth1
mad_node_addr6() { echo "$(mad_ipv6_prefix):$((10 + $1))"; }

mad_node_addr() { # k -> address slurmd of node nK listens on
	if [[ -n $MAD_CLUSTER_IPV6_ONLY ]]; then mad_node_addr6 "$1"; return; fi
	if [[ $MAD_CLUSTER_MODE == netns ]]; then mad_node_addr4 "$1"; else echo 127.0.0.1; fi
}
mad_bridge_addr4() { if [[ $(mad_subnet_bits) == 24 ]]; then echo "$MAD_CLUSTER_SUBNET.1"; else echo "$MAD_CLUSTER_SUBNET.0.1"; fi; }
mad_ctld_addr() {
	if [[ -n $MAD_CLUSTER_IPV6_ONLY ]]; then echo "$(mad_ipv6_prefix):1"; return; fi
	if [[ $MAD_CLUSTER_MODE == netns ]]; then mad_bridge_addr4; else echo 127.0.0.1; fi
}

# Is PID a live process named NAME that belongs to this cluster? Every daemon is started
# with SLURM_CONF pointing into our folder, and slurmstepd inherits it from slurmd; checking
# it protects against killing an unrelated process that reused a stale pid.
mad_pid_is_ours() { # pid name
	local pid=$1 name=$2 comm
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	read -r comm 2>/dev/null <"/proc/$pid/comm" || return 1 # no fork: stop asks every pid
	[[ $comm == "$name" ]] || return 1
	# One reader, no pipe: under pipefail, grep -q leaving early would fail a tr still
	# writing an environment larger than the pipe's buffer.
	grep -qzxF -- "SLURM_CONF=$mad_conf" "/proc/$pid/environ" 2>/dev/null
}

# Daemons we start, as "pidfile name" pairs, in the order stop should end them. The
# slurmd pid files are globbed, not counted, so a changed MAD_CLUSTER_NODES misses none.
mad_daemons() {
	local f
	for f in "$MAD_CLUSTER_DIR"/run/slurmd-*.pid; do
		if [[ -e $f ]]; then echo "$f slurmd"; fi
	done
	for f in "$MAD_CLUSTER_DIR"/run/nfs-*.pid; do
		if [[ -e $f ]]; then echo "$f nfs-client"; fi
	done
	echo "$MAD_CLUSTER_DIR/run/slurmctld.pid slurmctld"
	echo "$MAD_CLUSTER_DIR/run/munged.pid munged"
}

# The settings a cluster was started with, as shell code. start records them in
# run/settings (stop and status source it, so they act on what really runs) and in env.sh.
mad_settings() {
	local v
	# Only when set, so the settings of a default cluster stay as they were.
	if [[ -n $MAD_CLUSTER_IPV6_ONLY ]]; then printf 'export MAD_CLUSTER_IPV6_ONLY=%q\n' "$MAD_CLUSTER_IPV6_ONLY"; fi
	if [[ $MAD_CLUSTER_NFS == 1 ]]; then
		printf 'export MAD_CLUSTER_NFS=1 MAD_CLUSTER_NFS_ARGS=%q\n' "$MAD_CLUSTER_NFS_ARGS"
	fi
	if ((MAD_CLUSTER_GPUS > 0)); then printf 'export MAD_CLUSTER_AMD_NODE=%q\n' "$MAD_CLUSTER_AMD_NODE"; fi
	if [[ $MAD_CLUSTER_NETS == 2 ]]; then printf 'export MAD_CLUSTER_NETS=2 MAD_CLUSTER_SUBNET2=%q\n' "$MAD_CLUSTER_SUBNET2"; fi
	for v in MAD_CLUSTER_DIR MAD_CLUSTER_NODES MAD_CLUSTER_CPUS MAD_CLUSTER_NETNS \
		MAD_CLUSTER_MODE MAD_CLUSTER_SUBNET MAD_CLUSTER_BRIDGE MAD_CLUSTER_NS_PREFIX \
		MAD_CLUSTER_CTLD_PORT MAD_CLUSTER_SLURMD_PORT MAD_CLUSTER_USER MAD_CLUSTER_USER2 \
		MAD_CLUSTER_GROUP MAD_SLURM_PREFIX MAD_CLUSTER_PREEMPT MAD_CLUSTER_GPUS \
		MAD_CLUSTER_MESSAGE_TIMEOUT; do
		printf 'export %s=%q\n' "$v" "${!v}"
	done
	# Whoever sources env.sh (tests, demo, benches) then calls this release's clients.
	if [[ -n $MAD_SLURM_PREFIX ]]; then
		# shellcheck disable=SC2016 # $PATH is expanded when env.sh is sourced
		printf 'export PATH=%q:"$PATH"\n' "$MAD_SLURM_PREFIX/bin:$MAD_SLURM_PREFIX/sbin"
	fi
}

# Print the end of every daemon log: the first thing anyone needs when start fails.
mad_log_tails() {
	local f
	for f in "$MAD_CLUSTER_DIR"/log/*; do
		[[ -f $f ]] || continue
		echo "===== $f (last 25 lines)"
		tail -n 25 "$f"
	done
}

# A node state from sinfo's %t that takes jobs: idle, allocated, mixed or completing, or
# plnd (idle, held by the backfill scheduler for a pending job until its next pass, 30 s;
# a trailing - is the same on a busy node). A trailing * (not responding), ~ or # (power
# saving) and every down, drain or fail state do not.
mad_node_states_usable='(idle|alloc|mix|comp|plnd)-?'

# Up and healthy: every recorded daemon alive and ours, and every node known to slurmctld
# in a usable state. When not, mad_unhealthy says why, for start's log and for status.
mad_unhealthy=
# shellcheck disable=SC2034 # mad_unhealthy is read by start and status, which source this
mad_healthy() {
	local pidfile name n states
	mad_unhealthy=
	if [[ ! -r $MAD_CLUSTER_DIR/env.sh ]]; then
		mad_unhealthy="no $MAD_CLUSTER_DIR/env.sh"
		return 1
	fi
	n=0
	while read -r pidfile name; do
		if ! mad_pid_is_ours "$(cat "$pidfile" 2>/dev/null)" "$name"; then
			mad_unhealthy="$name of $(basename "$pidfile") not running"
			return 1
		fi
		if [[ $name == slurmd ]]; then n=$((n + 1)); fi
	done < <(mad_daemons)
	if [[ $n != "$MAD_CLUSTER_NODES" ]]; then
		mad_unhealthy="$n slurmd running, $MAD_CLUSTER_NODES wanted"
		return 1
	fi
	if ! states=$(SLURM_CONF=$mad_conf timeout 10 sinfo -h -N -o '%N %t' 2>&1); then
		mad_unhealthy="sinfo failed: ${states//$'\n'/ }"
		return 1
	fi
	states=$(sort -u <<<"$states")
	n=$(grep -cE "^n[0-9]+ $mad_node_states_usable\$" <<<"$states") || true
	if [[ $n != "$MAD_CLUSTER_NODES" ]]; then
		mad_unhealthy="$n of $MAD_CLUSTER_NODES nodes usable: ${states//$'\n'/, }"
		return 1
	fi
}

# Daemons must inherit no descriptor beyond 2: munged keeps them all open, so our lock (fd 9)
# or a caller's pipe (bats waits for its fd 3 to close) would stay open as long as it runs
# and hang the next stop or the caller. mad_daemon runs a command with only fds 0-2.
mad_daemon() {
	(
		for fd in /proc/"$BASHPID"/fd/*; do
			fd=${fd##*/}
			if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
		done
		exec "$@"
	)
}

# Starts the slurmd of node nK (also used to bring one back in tests). As root each node
# also gets a mount namespace of its own in which $MAD_CLUSTER_DIR/etc/hosts.nK is bound over
# /etc/hosts: the node (its slurmd, steps and jobs) resolves the cluster's names there, so two
# clusters with the same node names never see each other's, the machine's /etc/hosts is never
# written, and a test can give one node a hosts view of its own (edit the file in place).
mad_start_slurmd() {
	local k=$1 hosts=$MAD_CLUSTER_DIR/etc/hosts.n$1 nfs=()
	# MAD_CLUSTER_NFS: the node's own NFS client, mounted in its mount namespace before
	# slurmd starts (nfs-client returns once mounted; its pid file names it for stop),
	# over the host's client's mount, which the namespace got a copy of: unmounted first
	# (the last word of the command is the mount point).
	if [[ $MAD_CLUSTER_NFS == 1 ]]; then
		mad_nfs_retire "n$k"
		mapfile -t nfs < <(mad_nfs_client "n$k")
	fi
	# shellcheck disable=SC2016 # $1, $2 and $@ are expanded by the inner sh
	local boot='n=$1; mount --bind "$2" /etc/hosts && hostname "$1" && shift 2 &&
		{ [ $# -eq 0 ] || { for m; do :; done; umount -l "$m" 2>/dev/null; "$@"; }; } && exec slurmd -N "$n"'
	if [[ $MAD_CLUSTER_MODE == netns ]]; then
		# Not `ip netns exec`: it remounts /sys, and slurmd, finding no cgroup filesystem
		# there, refuses to start. nsenter changes only the network; unshare gives the node
		# its own host name and mounts.
		mad_daemon nsenter --net="/run/netns/${MAD_CLUSTER_NS_PREFIX}n$k" \
			unshare --uts --mount --propagation private sh -c "$boot" sh "n$k" "$hosts" "${nfs[@]}"
	elif [[ $(id -u) == 0 ]]; then
		# shellcheck disable=SC2016
		mad_daemon unshare --mount --propagation private \
			sh -c 'n=$1; mount --bind "$2" /etc/hosts && shift 2 && { [ $# -eq 0 ] || { for m; do :; done; umount -l "$m" 2>/dev/null; "$@"; }; } && exec slurmd -N "$n"' \
			sh "n$k" "$hosts" "${nfs[@]}"
	else
		mad_daemon slurmd -N "n$k"
	fi >>"$MAD_CLUSTER_DIR/log/slurmd-n$k.stderr" 2>&1
}

# Writes the hosts view of every node: the machine's /etc/hosts without lines of ours (an
# older harness wrote them there), then the cluster's names.
mad_write_hosts_views() {
	local k base names=
	base=$(awk -v m=" $mad_hosts_marker" 'substr($0, length($0) - length(m) + 1) != m' /etc/hosts)
	# the cluster's lines once: N views of N lines each, without a subshell per line
	for ((k = 1; k <= MAD_CLUSTER_NODES; k++)); do
		# nK.spur.test: the FQDN-style name spur's emulation gives as MASTER_ADDR
		if [[ $MAD_CLUSTER_NETS == 2 ]]; then
			# the names on the management network, the fabric's with -fab
			names+="$(mad_node_addr_net2 "$k") n$k n$k.spur.test $mad_hosts_marker"$'\n'
			names+="$(mad_node_addr "$k") n$k-fab $mad_hosts_marker"$'\n'
		else
			names+="$(mad_node_addr "$k") n$k n$k.spur.test $mad_hosts_marker"$'\n'
		fi
	done
	# The bridge, where slurmctld and the host's commands connect from: SLURM 24.11 and
	# 25.11 name every connection by its peer (src/common/net.c sockaddr_to_string,
	# xgetnameinfo), and with the default route on eth1 a name missing here goes to a DNS
	# server no node reaches, 5 s x 2 tries per connection: a batch launch then took 20 s,
	# slurmctld gave it up and requeued the job (a whole run, cluster-nets.bats 4 on 24.11).
	[[ $MAD_CLUSTER_NETS != 2 ]] || names+="$(mad_bridge_addr4) mad-bridge $mad_hosts_marker"$'\n'
	for ((k = 1; k <= MAD_CLUSTER_NODES; k++)); do
		printf '%s\n%s' "$base" "$names" >"$MAD_CLUSTER_DIR/etc/hosts.n$k"
		chmod 0644 "$MAD_CLUSTER_DIR/etc/hosts.n$k"
	done
}

# MAD_CLUSTER_NFS=1: the folder that holds the shared folder's files (the server).
mad_nfs_server() { echo "$MAD_CLUSTER_DIR/nfs-server"; }

# The command that mounts client NAME (a node, or "host") of the server at the shared folder.
# One word a line, for mapfile.
mad_nfs_client() { # name
	local args
	read -ra args <<<"$MAD_CLUSTER_NFS_ARGS"
	printf '%s\n' "$(cd "$(dirname "${BASH_SOURCE[0]}")/../nfs" && pwd)/nfs-client" "${args[@]}" \
		--log "$MAD_CLUSTER_DIR/log/nfs-$1.log" --pidfile "$MAD_CLUSTER_DIR/run/nfs-$1.pid" \
		"$(mad_nfs_server)" "$MAD_CLUSTER_DIR/shared"
}

# The client of a node whose slurmd is started again: ended if nothing else is left in its
# mount namespace; else kept for the steps still running there (their namespace outlives a
# killed slurmd), its pid file renamed so stop still ends it.
mad_nfs_retire() { # name
	local f=$MAD_CLUSTER_DIR/run/nfs-$1.pid pid ns p
	[[ -e $f ]] || return 0
	pid=$(cat "$f" 2>/dev/null) || pid=
	if ! mad_pid_is_ours "$pid" nfs-client; then rm -f "$f"; return 0; fi
	ns=$(readlink "/proc/$pid/ns/mnt") || ns=
	for p in /proc/[0-9]*; do
		if [[ ${p#/proc/} != "$pid" && $(readlink "$p/ns/mnt" 2>/dev/null) == "$ns" ]]; then
			mv -f "$f" "$MAD_CLUSTER_DIR/run/nfs-$1-old$pid.pid"
			return 0
		fi
	done
	kill -TERM "$pid" 2>/dev/null || true
	rm -f "$f"
}

# The shared folder's model mounts: the host's here, each node's in its namespace.
mad_nfs_mounts() {
	local pidfile name pid
	findmnt -n -t fuse.nfsmodel -o TARGET,SOURCE "$MAD_CLUSTER_DIR/shared" | sed 's/^/  host: /' || true
	while read -r pidfile name; do
		[[ $name == slurmd ]] || continue
		pid=$(cat "$pidfile" 2>/dev/null) || continue
		mad_pid_is_ours "$pid" slurmd || continue
		nsenter --mount="/proc/$pid/ns/mnt" findmnt -n -t fuse.nfsmodel -o TARGET,SOURCE "$MAD_CLUSTER_DIR/shared" |
			sed "s/^/  $(basename "$pidfile" .pid): /" || true
	done < <(mad_daemons)
}
