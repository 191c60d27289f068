#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# t/cluster/start and stop themselves: start on a running cluster is a no-op, stop is safe
# twice, and start brings back a working cluster. Runs against the cluster the suite runner
# started, with the same settings (from env.sh), and leaves it running as it found it.
# Slow-ish (a restart), so kept apart from cluster.bats; run it after the other files.

load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load
# shellcheck source=t/env.sh
. "$BATS_TEST_DIRNAME/../env.sh"

setup_file() {
	unset MAD_SKIP
	export MAD_CLUSTER_DIR
	local why=
	if [[ ! -r $MAD_CLUSTER_DIR/env.sh ]]; then
		why="no test cluster running ($MAD_CLUSTER_DIR/env.sh missing): run 'sudo t/cluster/start' first"
	elif [[ $(stat -c %u "$MAD_CLUSTER_DIR") != "$(id -u)" ]]; then
		why="the cluster in $MAD_CLUSTER_DIR belongs to another user (run as root?)"
	fi
	if [[ -n $why ]]; then
		if [[ ${CI:-} == true ]]; then
			echo "$why" >&2
			return 1
		fi
		# bats 1.8 cannot skip from setup_file: setup() skips every test instead.
		export MAD_SKIP="$why"
		return 0
	fi
	# Same settings as the running cluster, so a restart rebuilds the same one.
	# shellcheck source=/dev/null
	. "$MAD_CLUSTER_DIR/env.sh"
	CLUSTER=$(cd "$BATS_TEST_DIRNAME/../cluster" && pwd)
	export CLUSTER
}

setup() {
	if [[ -n ${MAD_SKIP:-} ]]; then skip "$MAD_SKIP"; fi
}

@test "start on a running cluster says so and changes nothing" {
	pid_before=$(cat "$MAD_CLUSTER_DIR/run/slurmctld.pid")
	run timeout 120 "$CLUSTER/start"
	assert_success
	assert_output --partial "already up"
	assert_equal "$(cat "$MAD_CLUSTER_DIR/run/slurmctld.pid")" "$pid_before"
}

@test "start on a running cluster whose idle nodes are held for a pending job (plnd) says so" {
	# n1 busy, a job over every node pending: the backfill scheduler holds the other nodes
	# for it (sinfo: plnd). Both have time limits, or there is nothing to plan.
	as_user=$BATS_TEST_DIRNAME/../cluster/as-user
	busy=$("$as_user" sbatch --parsable -t 2 -w n1 -N1 --exclusive -o /dev/null --wrap 'sleep 100')
	whole=$("$as_user" sbatch --parsable -t 1 -N"$MAD_CLUSTER_NODES" -o /dev/null --wrap true)
	for _ in $(seq 60); do
		[[ $(sinfo -h -N -o %t) == *plnd* ]] && break
		sleep 1
	done
	states=$(sinfo -h -N -o '%N %t' | sort -u | paste -sd' ')
	pid_before=$(cat "$MAD_CLUSTER_DIR/run/slurmctld.pid")
	run timeout 120 "$CLUSTER/start"
	"$as_user" scancel "$busy" "$whole"
	[[ $states == *plnd* ]] || fail "no node became plnd within 60 s: $states"
	assert_success
	assert_output --partial "already up"
	assert_equal "$(cat "$MAD_CLUSTER_DIR/run/slurmctld.pid")" "$pid_before"
}

@test "stop, stop again, then start gives a working cluster" {
	pids=$(cat "$MAD_CLUSTER_DIR"/run/*.pid)
	# A slurmd whose pid file is lost (a slurmd of the same name ending unlinks it by path):
	# stop finds it by its SLURM_CONF all the same, or it would outlive the cluster.
	rm "$MAD_CLUSTER_DIR/run/slurmd-n$MAD_CLUSTER_NODES.pid"
	run timeout 120 "$CLUSTER/stop"
	assert_success
	assert_output --partial "a slurmd no pid file names"
	[[ ! -e $MAD_CLUSTER_DIR/env.sh ]] || fail "env.sh left behind"
	# Every daemon gone (asking sinfo would take 9 s of retries to fail).
	for pid in $pids; do
		if grep -qzxF "SLURM_CONF=$SLURM_CONF" "/proc/$pid/environ" 2>/dev/null; then
			fail "process $pid ($(cat "/proc/$pid/comm")) still runs"
		fi
	done
	if [[ $MAD_CLUSTER_MODE == netns ]]; then
		run ip netns list
		refute_output --partial "$MAD_CLUSTER_NS_PREFIX"
		run ip link show "$MAD_CLUSTER_BRIDGE"
		assert_failure
	fi
	run grep -F "# mad-cluster $MAD_CLUSTER_DIR" /etc/hosts
	assert_failure

	run timeout 120 "$CLUSTER/stop"
	assert_success

	run timeout 120 "$CLUSTER/start"
	assert_success
	run timeout 60 "$CLUSTER/as-user" srun -N"$MAD_CLUSTER_NODES" -t 1 printenv SLURMD_NODENAME
	assert_success
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' ' ')" \
		"$(tr ' ' '\n' <<<"$MAD_CLUSTER_NODE_NAMES" | sort | tr '\n' ' ')"
}

teardown_file() {
	# Leave the cluster running even if a test above failed between stop and start.
	if [[ -n ${CLUSTER:-} && ! -e $MAD_CLUSTER_DIR/env.sh ]]; then
		timeout 120 "$CLUSTER/start" >&2 || true
	fi
}

@test "start refuses a MessageTimeout that is not seconds, naming it, and the running cluster stays" {
	pid_before=$(cat "$MAD_CLUSTER_DIR/run/slurmctld.pid")
	for bad in 0 abc 10s 99999; do
		MAD_CLUSTER_MESSAGE_TIMEOUT=$bad run timeout 60 "$CLUSTER/start"
		assert_failure 2
		assert_output "MAD_CLUSTER_MESSAGE_TIMEOUT must be seconds, 1..9999 (got '$bad')"
	done
	assert_equal "$(cat "$MAD_CLUSTER_DIR/run/slurmctld.pid")" "$pid_before"
	grep -qx 'MessageTimeout=10' "$MAD_CLUSTER_DIR/etc/slurm.conf"
}
