#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Launch shapes beyond block and cyclic layouts, on every release: srun -E,
# 26.05's asynchronous steps, heterogeneous jobs, a node without mad.so.
# Every job is submitted as the test user.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

bats_require_minimum_version 1.5.0

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	use_plugin run-shapes
	copy_torch_helpers
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
}

# The release the cluster runs, as major * 100 + minor (2605).
release() {
	local v
	v=$(sinfo --version | awk '{ print $2 }')
	echo $((10#${v%%.*} * 100 + 10#$(cut -d. -f2 <<<"$v")))
}

@test "srun -E -N1 in a 4-node job: the step's one node, not the job's four, with mad.so and with mad-env" {
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	# -E keeps the job's SLURM_NNODES=4 in the step; SLURM_NODEID is the step's
	run "$AS_USER" timeout 120 sbatch --wait --nodes=4 --mad-model=m --output="$out" \
		--wrap 'srun -E --nodes=1 --ntasks=1 bash -c "echo \"plugin SLURM_NNODES=\$SLURM_NNODES NNODES=\$NNODES WORLD_SIZE=\$WORLD_SIZE RANK=\$RANK\"; eval \"\$(mad-env)\"; echo \"mad-env NNODES=\$NNODES WORLD_SIZE=\$WORLD_SIZE RANK=\$RANK\""'
	look_anew "$out"
	cat "$out"
	assert_success
	grep -qx 'plugin SLURM_NNODES=4 NNODES=1 WORLD_SIZE=1 RANK=0' "$out"
	grep -qx 'mad-env NNODES=1 WORLD_SIZE=1 RANK=0' "$out"
}

@test "srun --async (26.05): a bad --mad-* value is refused at parse time, a good one is passed on" {
	if (($(release) < 2605)); then
		# the shape does not exist before 26.05: srun refuses the option
		run "$AS_USER" timeout 60 srun --async -N1 true
		assert_failure
		return 0
	fi
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	# srun --async skips slurm_spank_local_user_init (26.05 src/srun/srun.c, main:
	# _launch_app only without async); mad.so checks its options in their
	# callbacks, while srun parses them, so an asynchronous step is refused the
	# same.  Running one needs the step manager (PrologFlags=contain), which the
	# test cluster does not set: a good value must reach that point, not a mad error.
	run "$AS_USER" timeout 120 sbatch --wait --nodes=1 --output="$out" \
		--wrap 'srun --async --mad-model=m --mad-master-port=99999999 -N1 true; echo "bad rc=$?"
			srun --async --mad-model=m -N1 true; echo "good rc=$?"'
	look_anew "$out"
	cat "$out"
	assert_success
	grep -q "^srun: error: mad: --mad-master-port: '99999999' is not a port number" "$out"
	grep -q '^bad rc=[1-9]' "$out"
	[[ $(grep -c 'mad:' "$out") -eq 1 ]]
	grep -q 'good rc=' "$out"
}

# Node N's slurmd (and every slurmstepd it starts) in its own mount namespace
# (t/cluster/config.sh, mad_start_slurmd) reads an empty plugstack.conf.
empty_plugstack_on() { # N
	local pid
	pid=$(cat "$MAD_CLUSTER_DIR/run/slurmd-n$1.pid")
	: >"$BATS_FILE_TMPDIR/empty-plugstack.conf"
	chmod 0644 "$BATS_FILE_TMPDIR/empty-plugstack.conf"
	nsenter --mount="/proc/$pid/ns/mnt" mount --bind "$BATS_FILE_TMPDIR/empty-plugstack.conf" "$MAD_CLUSTER_PLUGSTACK"
	emptied=$pid
}
teardown() {
	[[ -z ${emptied:-} ]] || nsenter --mount="/proc/$emptied/ns/mnt" umount "$MAD_CLUSTER_PLUGSTACK" || true
}

@test "a node where mad.so did not load: its tasks have no RANK, never the batch script's rank 0" {
	require_root "a mount in one node's namespace"
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	empty_plugstack_on 2
	run "$AS_USER" timeout 120 sbatch --wait --nodes=2 --ntasks-per-node=2 -w n1,n2 --mad-model=m --output="$out" \
		--wrap 'echo "batch RANK=${RANK-unset} WORLD_SIZE=${WORLD_SIZE-unset} NODE_RANK=$NODE_RANK NNODES=$NNODES"
		srun -N2 --ntasks-per-node=2 bash -c "echo task \$SLURM_PROCID \$(hostname) RANK=\${RANK-unset} WORLD_SIZE=\${WORLD_SIZE-unset} LOCAL_RANK=\${LOCAL_RANK-unset}" | sort'
	look_anew "$out"
	cat "$out"
	assert_success
	# the script of a 2-node job is no task; its node level stays
	grep -qx 'batch RANK=unset WORLD_SIZE=unset NODE_RANK=0 NNODES=2' "$out"
	# n1 ran mad.so: its tasks' own ranks; n2 did not: nothing to take for its own
	grep -qx 'task 0 n1 RANK=0 WORLD_SIZE=4 LOCAL_RANK=0' "$out"
	grep -qx 'task 1 n1 RANK=1 WORLD_SIZE=4 LOCAL_RANK=1' "$out"
	grep -qx 'task 2 n2 RANK=unset WORLD_SIZE=unset LOCAL_RANK=unset' "$out"
	grep -qx 'task 3 n2 RANK=unset WORLD_SIZE=unset LOCAL_RANK=unset' "$out"
}

@test "het job, 2 components x 2 tasks: a step over both is one world (real torch), a step over one its own; the leader's id" {
	require_torch
	export TORCH_ALLREDUCE_TIMEOUT=40
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	script=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.sh
	cat >"$script" <<-'EOF'
		#!/bin/bash
		#SBATCH --nodes=1 --ntasks-per-node=2 --time=2
		#SBATCH hetjob
		#SBATCH --nodes=1 --ntasks-per-node=2 --time=2
		srun -K --het-group=0,1 ./torch-allreduce
		srun --het-group=1 bash -c 'echo "one $SLURM_PROCID RANK=$RANK WORLD_SIZE=$WORLD_SIZE NNODES=$NNODES collect=$MAD_COLLECT_JOB_ID"'
		srun --het-group=0,1 bash -c 'echo "both $SLURM_PROCID port=$MASTER_PORT collect=$MAD_COLLECT_JOB_ID"'
	EOF
	chmod 0644 "$script"
	run "$AS_USER" timeout 150 sbatch --wait --parsable --mad-model=m --output="$out" "$script"
	look_anew "$out"
	cat "$out"
	port_holders "$out"
	assert_success
	jobid=${output%%;*}
	jobid=${jobid##*$'\n'}
	# one world of 4 over both components, rank 0 on component 0's node
	assert_allreduce 4 "$out"
	allreduce_lines "$out" | grep -q ' rank=0 .* host=n1 '
	# a step over component 1 alone: its own world of 2, collected under the leader's id
	grep -qx "one 0 RANK=0 WORLD_SIZE=2 NNODES=1 collect=$jobid" "$out"
	grep -qx "one 1 RANK=1 WORLD_SIZE=2 NNODES=1 collect=$jobid" "$out"
	# one port and one collection id across the components
	[[ $(grep '^both ' "$out" | awk '{ print $3, $4 }' | sort -u | wc -l) -eq 1 ]]
	grep -q "^both 3 .* collect=$jobid\$" "$out"
	# mad-wait on the leader's id (squeue lists the components as ID+0, ID+1)
	run "$AS_USER" mad-wait --timeout=60 "$jobid"
	echo "$output"
	assert_success
}

# srun -m arbitrary: task I on the host file's line I (SLURM_HOSTFILE), so
# task 0 on the step's last node; the node list, sorted, starts elsewhere.
arbitrary_hosts() {
	hosts=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.hosts
	printf '%s\n' n2 n2 n1 n1 >"$hosts"
	chmod 0644 "$hosts"
	hosts_q=$(printf %q "$hosts") # the job script's word for it
}

@test "srun -m arbitrary, task 0 on the last node: MASTER_ADDR where task 0 runs, published by it (real torch)" {
	require_torch
	export TORCH_ALLREDUCE_TIMEOUT=40
	arbitrary_hosts
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	run "$AS_USER" timeout 150 sbatch --wait --nodes=2 --ntasks-per-node=2 -w n1,n2 --mad-model=m --output="$out" \
		--wrap "export SLURM_HOSTFILE=$hosts_q
		srun -K -m arbitrary -n4 ./torch-allreduce
		srun -m arbitrary -n4 bash -c 'echo \"addr \$SLURM_PROCID \$(hostname) \$MASTER_ADDR \$(hostname -I)\"' | sort"
	look_anew "$out"
	cat "$out"
	assert_success
	assert_allreduce 4 "$out"
	allreduce_lines "$out" | grep -q ' rank=0 .* host=n2 '
	# one address in every task: one of n2's own, where task 0 runs
	[[ $(grep -c '^addr ' "$out") -eq 4 ]]
	[[ $(grep '^addr ' "$out" | awk '{ print $4 }' | sort -u | wc -l) -eq 1 ]]
	grep '^addr 0 n2 ' "$out" | awk '{ for (i = 5; i <= NF; i++) if ($i == $4) found = 1 } END { exit !found }'
}

@test "srun -m arbitrary without a run folder: task 0 off the first node fails at once, naming the fix" {
	arbitrary_hosts
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	echo "optional $so" >"$MAD_CLUSTER_PLUGSTACK"
	run "$AS_USER" timeout 120 sbatch --wait --nodes=2 --ntasks-per-node=2 -w n1,n2 --mad-model=m --output="$out" \
		--wrap "SLURM_HOSTFILE=$hosts_q srun -m arbitrary -n4 true; echo \"srun rc=\$?\""
	echo "optional $so run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	look_anew "$out"
	cat "$out"
	grep -q 'task 0 runs on n2, node 1 of the step, not on its first node n1 that MASTER_ADDR names (SLURM_DISTRIBUTION=arbitrary): set --mad-run-dir' "$out"
	grep -q '^srun rc=[1-9]' "$out"
}

@test "26.05 topology order (partition ring): task 0 off the first node fails at once naming the fix; -m cyclic runs (real torch)" {
	if (($(release) < 2605)); then
		# no release before 26.05 orders tasks by topology: t/cluster/start makes
		# partition ring from 26.05 only
		run scontrol show partition ring
		assert_failure
		return 0
	fi
	require_torch
	export TORCH_ALLREDUCE_TIMEOUT=40
	out=$MAD_CLUSTER_SHARED/shapes-$BATS_TEST_NUMBER.out
	rm -f "$out"
	# on ring n1..n4 a job on n1 and n4 starts at n4: tasks 0-1 there, 2-3 on n1
	run "$AS_USER" timeout 150 sbatch --wait -p ring --nodes=2 --ntasks-per-node=2 -w n1,n4 --mad-model=m \
		--output="$out" --wrap 'srun -n4 bash -c "echo task \$SLURM_PROCID \$(hostname)"; echo "block rc=$?"
		srun -K -m cyclic -n4 ./torch-allreduce'
	look_anew "$out"
	cat "$out"
	assert_success
	grep -qx 'task 2 n1' "$out"
	grep -q 'task 0 runs on n4, node 1 of the step, not on its first node n1 that MASTER_ADDR names (SLURM_DISTRIBUTION=.*): SLURM ordered the nodes by topology; launch with -m cyclic' "$out"
	grep -q '^block rc=[1-9]' "$out"
	assert_allreduce 4 "$out"
	allreduce_lines "$out" | grep -q ' rank=0 .* host=n1 '
}
