#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad-env and mad-mark in real jobs, as the test user: without the plugin
# (what spur does), and against the plugin on the same allocation.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	plugstack_save
	run_dir=$MAD_CLUSTER_SHARED/run-env
	fresh_run_dir "$run_dir"
	export run_dir
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	command -v mad-env >/dev/null || { echo "mad-env is not on PATH"; false; }
}

@test "no plugin: eval \"\$(mad-env)\" in each task of a 4-node job, TCP exchange" {
	: >"$MAD_CLUSTER_PLUGSTACK"
	out=$MAD_CLUSTER_SHARED/env-$BATS_TEST_NUMBER.out
	MAD_MODEL=m run "$AS_USER" timeout 120 sbatch --wait --nodes=4 --output="$out" \
		--wrap 'srun --nodes=4 bash -c "eval \"\$(mad-env)\" && ./tcp-exchange"'
	look_anew "$out"
	cat "$out"
	assert_success
	grep -qx 'exchange ok: ranks 1..3' "$out"
	[[ $(grep -c '^contract .* from=mad-env$' "$out") -eq 4 ]]
}

@test "no plugin: srun -E -N1 in a 4-node job: mad-env gives the step's node count, not the job's" {
	: >"$MAD_CLUSTER_PLUGSTACK"
	out=$MAD_CLUSTER_SHARED/env-$BATS_TEST_NUMBER.out
	MAD_MODEL=m run "$AS_USER" timeout 120 sbatch --wait --nodes=4 --output="$out" \
		--wrap 'srun -E --nodes=1 --ntasks=1 bash -c "eval \"\$(mad-env)\" && echo \"step SLURM_NNODES=\$SLURM_NNODES NNODES=\$NNODES WORLD_SIZE=\$WORLD_SIZE\""'
	look_anew "$out"
	cat "$out"
	assert_success
	# -E kept the job's value; mad-env takes the step's
	grep -qx 'step SLURM_NNODES=4 NNODES=1 WORLD_SIZE=1' "$out"
}

@test "no plugin, array fan-out: mad-env completes the rendezvous, mad-mark leaves every marker" {
	: >"$MAD_CLUSTER_PLUGSTACK"
	MAD_MODEL=m MAD_FANOUT=array MAD_RUN_DIR=$run_dir run "$AS_USER" timeout 120 sbatch \
		--wait --parsable --array=0-3 --exclusive --nodes=1 --output='env-arr-%A_%a.out' \
		--wrap 'eval "$(mad-env)" && ./tcp-exchange; mad-mark $?'
	assert_success
	jobid=${output%%;*}
	cat "$MAD_CLUSTER_SHARED"/env-arr-"$jobid"_*.out
	grep -q 'exchange ok: ranks 1..3' "$MAD_CLUSTER_SHARED/env-arr-${jobid}_0.out"
	for r in 0 1 2 3; do
		[[ $(head -1 "$run_dir/$jobid/done_rank$r") == 0 ]]
		[[ $(stat -c %U "$run_dir/$jobid/done_rank$r") == "$MAD_CLUSTER_USER" ]]
	done
}

@test "mad-env computes the same contract as the plugin on the same allocation" {
	echo "optional $(mad_so) run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	out=$MAD_CLUSTER_SHARED/env-$BATS_TEST_NUMBER.out
	show='echo \$MAD_ENV_FROM \$NODE_RANK \$MAD_NODE_RANK \$RANK \$NNODES \$WORLD_SIZE \$MASTER_ADDR \$MASTER_PORT \$MAD_COLLECT_JOB_ID \$MAD_JOB_DIR \$MAD_FANOUT \$MAD_SCHEDULER'
	run "$AS_USER" timeout 120 sbatch --wait --nodes=4 --mad-model=m --mad-master-port=auto \
		--output="$out" --wrap "srun --nodes=4 bash -c \"echo plugin \$(hostname) \$($show); eval \\\"\\\$(mad-env)\\\"; echo mad-env \$(hostname) \$($show)\""
	look_anew "$out"
	cat "$out"
	assert_success
	# each line says who computed it: the plugin, then mad-env itself
	[[ $(grep -c '^plugin n[0-9] spank [0-3] ' "$out") -eq 4 ]]
	[[ $(grep -c '^mad-env n[0-9] mad-env [0-3] ' "$out") -eq 4 ]]
	diff <(grep '^plugin ' "$out" | cut -d' ' -f4- | sort) \
		<(grep '^mad-env ' "$out" | cut -d' ' -f4- | sort)
}
