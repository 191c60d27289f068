#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-hostlist inside real multi-node jobs, submitted as the test user.
# shellcheck disable=SC2016 # the job scripts are single-quoted: the job expands them

setup() {
	load ../lib.sh
	load_helpers
	use_cluster
	command -v mad-hostlist >/dev/null || {
		echo "mad-hostlist is not on PATH (t/suite installs it under \$MAD_PREFIX)"
		false
	}
}

@test "a 4-node job expands its own SLURM_JOB_NODELIST as scontrol does" {
	local out=$MAD_CLUSTER_DIR/shared/hl-$BATS_TEST_NUMBER.out
	run "$AS_USER" timeout 120 sbatch --wait --nodes=4 --output="$out" --wrap '
		set -eu
		echo "list $SLURM_JOB_NODELIST"
		echo "mad $(mad-hostlist --sep=, expand)"
		echo "scontrol $(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd,)"
		echo "count $(mad-hostlist count)"
		echo "first $(mad-hostlist nth 0) batch-on $SLURMD_NODENAME"
		echo "nodes $(srun --nodes=4 --ntasks=4 printenv SLURMD_NODENAME | sort | paste -sd,)"'
	look_anew "$out"
	cat "$out"
	assert_success
	run cat "$out"
	mad=$(sed -n 's/^mad //p' "$out")
	[[ -n $mad ]]
	assert_line "scontrol $mad"
	assert_line "count 4"
	# the batch script runs on the first node of the list: rank 0's node
	assert_line --regexp '^first (n[0-9]+) batch-on \1$'
	# the list names the 4 nodes that ran the tasks
	assert_line "nodes $(tr , '\n' <<<"$mad" | sort | paste -sd,)"
}

@test "rank 0's node resolves to its own address on every node" {
	require_netns "one shared address in loopback mode"
	local out=$MAD_CLUSTER_DIR/shared/hl-$BATS_TEST_NUMBER.out
	run "$AS_USER" timeout 120 sbatch --wait --nodes=4 --output="$out" --wrap '
		srun --nodes=4 --ntasks=4 bash -c "echo \$(hostname) \
			\$(getent ahostsv4 \$(mad-hostlist nth 0) | head -1 | cut -d\" \" -f1) \
			\$(hostname -I)"'
	look_anew "$out"
	cat "$out"
	assert_success
	# every task names the same rank-0 address ...
	rank0_addr=$(awk '{print $2}' "$out" | sort -u)
	[[ $(wc -l <<<"$rank0_addr") -eq 1 && -n $rank0_addr ]]
	# ... four nodes have four addresses, and the node listed first owns it
	[[ $(awk '{print $3}' "$out" | sort -u | wc -l) -eq 4 ]]
	run awk -v a="$rank0_addr" '$3 == a {print $1}' "$out"
	assert_output "$(awk '{print $1}' "$out" | sort -V | head -1)"
}
