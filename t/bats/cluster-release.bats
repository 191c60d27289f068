#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad.so and the SLURM release it was built for, on the real cluster: the
# build for this cluster's release says so when it loads; a build for another
# release ($MAD_FOREIGN_SO, e.g. Debian's 22.05 build on a 24.11 cluster) is
# refused by SLURM, and mad-env --explain in the job says why.
# shellcheck disable=SC2016 # job scripts are single-quoted: the job expands them

setup_file() {
	load ../lib.sh
	[[ -r $MAD_CLUSTER_DIR/env.sh ]] || return 0
	use_cluster
	plugstack_save
}

teardown_file() {
	load ../lib.sh
	plugstack_restore
}

setup() {
	load ../lib.sh
	cluster_test
	running=$(sinfo --version | awk '{print $2}')
	[[ $running =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
}

# The foreign build: a mad.so built for another major.minor than the cluster's.
foreign_so() {
	if [[ -z ${MAD_FOREIGN_SO:-} ]]; then
		[[ ${CI:-} != true ]] || { echo "MAD_FOREIGN_SO is not set and CI=true: failing" >&2; return 1; }
		skip "MAD_FOREIGN_SO (a mad.so built for another release) is not set"
	fi
	[[ -r $MAD_FOREIGN_SO ]] || { echo "no $MAD_FOREIGN_SO"; return 1; }
	foreign=$(grep -aoE 'built for SLURM [0-9]+\.[0-9]+\.[0-9]+' "$MAD_FOREIGN_SO" | awk '{print $4}')
	[[ ${foreign%.*} != "${running%.*}" ]] ||
		{ echo "$MAD_FOREIGN_SO is built for $foreign, the cluster's own release"; return 1; }
}

# Lines node n1's slurmd logged since the mark taken by log_mark.
log_mark() { mark=$(wc -l <"$MAD_CLUSTER_DIR/log/slurmd-n1.log"); }
log_since() { tail -n +"$((mark + 1))" "$MAD_CLUSTER_DIR/log/slurmd-n1.log"; }

@test "mad.so built for this release logs its version and the release when it loads" {
	use_plugin run-release
	version=$(mad-env --version | awk '{print $3}')
	log_mark
	run "$AS_USER" timeout 120 sbatch --wait --nodes=1 --nodelist=n1 --mad-model=m \
		--output="$MAD_CLUSTER_SHARED/release-own.out" --wrap 'echo "from=$MAD_ENV_FROM"; mad-env --explain'
	assert_success
	run log_since
	assert_output --partial "mad: mad-spank ${version%,}, built for SLURM $running"
	look_anew "$MAD_CLUSTER_SHARED/release-own.out"
	run cat "$MAD_CLUSTER_SHARED/release-own.out"
	assert_line 'from=spank'
	refute_output --partial 'did not run'
}

@test "a mad.so built for another release is refused, and mad-env --explain says why" {
	foreign_so
	run_dir=$MAD_CLUSTER_SHARED/run-foreign
	fresh_run_dir "$run_dir"
	echo "optional $MAD_FOREIGN_SO run-dir=$run_dir" >"$MAD_CLUSTER_PLUGSTACK"
	# sbatch skips it too: its options do not exist
	run "$AS_USER" sbatch --mad-model=m --wrap true
	assert_failure
	assert_output --partial 'unrecognized option'
	log_mark
	out=$MAD_CLUSTER_SHARED/release-foreign.out
	MAD_MODEL=m run "$AS_USER" timeout 120 sbatch --wait --nodes=1 --nodelist=n1 \
		--output="$out" --wrap 'echo "from=$MAD_ENV_FROM"; mad-env --explain'
	assert_success
	run log_since
	assert_output --partial "Incompatible Slurm plugin $MAD_FOREIGN_SO version ($foreign)"
	refute_output --partial 'mad: mad-spank'
	look_anew "$out"
	run cat "$out"
	assert_line 'from='
	assert_output --partial "# mad.so did not run in this job"
	assert_output --partial "'$MAD_FOREIGN_SO' ($MAD_CLUSTER_PLUGSTACK:1) was built for SLURM $foreign, and this job runs under SLURM $running"
}
