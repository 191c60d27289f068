#!/usr/bin/env bats
# mad.so under spur's SPANK host (t/spur/spank-host, emulated from spur's
# source): loading, detection, options by env, never blocking, MAD_ERROR.

setup() {
	load ../lib.sh
	load_helpers
	host=$MAD_BUILDDIR/t/spur/spank-host
	plugstack=$BATS_TEST_TMPDIR/plugstack.conf
	echo "optional $MAD_BUILDDIR/plugin/.libs/mad.so" >"$plugstack"
	job=(MAD_MODEL=m SLURM_JOB_ID=7 SPUR_JOB_ID=7 SLURM_NODEID=2 SLURM_NNODES=4
		SLURM_JOB_NUM_NODES=4 'SLURM_JOB_NODELIST=localhost,n2,n3,n4'
		MASTER_ADDR=spur-set-this.example MASTER_PORT=29500 RANK=9)
}

@test "the host exports exactly spur's 15 SPANK symbols" {
	run bash -c "nm -D --defined-only '$host' | awk '\$3 ~ /^(spank_|slurm_)/ {print \$3}' | wc -l"
	assert_output 15
	run bash -c "nm -D --defined-only '$host' | grep -E 'spank_(option|context|remote|symbol|prepend)'"
	assert_failure
}

@test "mad.so loads lazily and with RTLD_NOW (no hard reference to a missing function)" {
	for mode in "" --now; do
		# shellcheck disable=SC2086
		run "$host" $mode "$plugstack" "${job[@]}"
		assert_success
		refute_output --partial 'failed to load'
		assert_line 'NODE_RANK=2'
	done
}

@test "spur: detected, rank from SLURM_NODEID, spur's own MASTER_ADDR and RANK overwritten" {
	run "$host" "$plugstack" "${job[@]}"
	assert_success
	assert_line 'MAD_SCHEDULER=spur'
	assert_line 'MAD_FANOUT=nodes'
	assert_line 'RANK=2'
	assert_line 'NNODES=4'
	assert_line 'MASTER_ADDR=127.0.0.1'
	assert_line 'MAD_ENV_FROM=spank'
}

@test "an explicit MAD_SCHEDULER=slurm wins over detection" {
	run "$host" "$plugstack" "${job[@]}" MAD_SCHEDULER=slurm
	assert_line 'MAD_SCHEDULER=slurm'
}

@test "array fan-out: a peer whose rank 0 has not published is pending at once, never blocks" {
	mkdir -p "$BATS_TEST_TMPDIR/run"
	start=$SECONDS
	run "$host" "$plugstack" MAD_MODEL=m SPUR_JOB_ID=8 SLURM_JOB_ID=9 SLURM_ARRAY_JOB_ID=8 \
		SLURM_ARRAY_TASK_ID=1 MAD_NNODES=2 MAD_RUN_DIR="$BATS_TEST_TMPDIR/run" MAD_TIMEOUT=600
	assert_success
	((SECONDS - start < 5))
	assert_line 'MAD_RENDEZVOUS=pending'
	assert_line 'MAD_FANOUT=array'
	refute_output --partial 'MASTER_ADDR='
}

@test "spur runs hooks as root in spurd: the plugin writes nothing, even as array rank 0" {
	run_dir=$BATS_TEST_TMPDIR/run
	mkdir -p "$run_dir"
	run "$host" "$plugstack" MAD_MODEL=m SPUR_JOB_ID=8 SLURM_JOB_ID=8 SLURM_ARRAY_JOB_ID=8 \
		SLURM_ARRAY_TASK_ID=0 MAD_NNODES=2 MAD_RUN_DIR="$run_dir" SLURM_JOB_NUM_NODES=1 \
		SLURM_JOB_NODELIST=localhost
	assert_success
	assert_line 'MAD_RENDEZVOUS=pending'
	assert_line 'NODE_RANK=0'
	[[ -z $(ls -A "$run_dir") ]] || { ls -laR "$run_dir"; false; }
	# and mad-env, as the user in the job, completes it
	run env -i PATH="$PATH" MAD_MODEL=m SPUR_JOB_ID=8 SLURM_JOB_ID=8 SLURM_ARRAY_JOB_ID=8 \
		SLURM_ARRAY_TASK_ID=0 MAD_NNODES=2 MAD_RUN_DIR="$run_dir" MAD_RENDEZVOUS=pending mad-env
	assert_success
	[[ -s $run_dir/8/rendezvous ]]
}

@test "a bad value cannot fail a job on spur: MAD_ERROR for mad-env, and the job still runs" {
	# shellcheck disable=SC2016 # the job's shell expands it
	run "$host" "$plugstack" "${job[@]}" MAD_NNODES=x -- sh -c 'echo "ran: $MAD_ERROR"'
	assert_success
	assert_output --partial "ran: --mad-nnodes: 'x' is not a number between 1 and 65536 (from MAD_NNODES)"
	# spur prints a log format verbatim: the plugin passes no live '%'
	assert_output --partial "spurd: error: mad: --mad-nnodes"
}

@test "no model: the job env is left as it was" {
	run "$host" "$plugstack" SLURM_JOB_ID=3 SPUR_JOB_ID=3 MASTER_ADDR=x
	assert_success
	assert_output $'MASTER_ADDR=x\nSLURM_JOB_ID=3\nSPUR_JOB_ID=3'
}

@test "64 concurrent launches of different jobs each get their own env" {
	run "$host" --threads 64 "$plugstack"
	assert_success
	assert_output '64 launches, 0 with a wrong env'
}
