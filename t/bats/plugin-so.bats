#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# mad.so as a file: what it exports, what it links, what it needs from the host.

setup() {
	load ../lib.sh
	load_helpers
	so=$MAD_BUILDDIR/plugin/.libs/mad.so
	[[ -r $so ]] || { echo "no $so: build first"; false; }
}

@test "exports only plugin_* and slurm_spank_* symbols" {
	expected=$'plugin_name\nplugin_type\nplugin_version\nslurm_spank_exit\nslurm_spank_init'
	# SLURM 25.05+ declares slurm_spank_init_failure_mode in spank.h (configure
	# finds ESPANK_JOB_FAILURE there): mad.so defines it on those releases.
	if grep -qx '#define HAVE_DECL_ESPANK_JOB_FAILURE 1' "$MAD_BUILDDIR/config.h"; then
		expected+=$'\nslurm_spank_init_failure_mode'
	fi
	expected+=$'\nslurm_spank_task_exit\nslurm_spank_task_init'
	run bash -c "nm -D --defined-only '$so' | awk '{print \$3}' | sort"
	assert_success
	assert_output "$expected"
}

@test "says which mad-spank and which SLURM release it was built for" {
	version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	slurm=$(sed -n 's/^#define MAD_SLURM_VERSION "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	[[ -n $version && $slurm =~ ^[0-9]+\.[0-9]{2}\.[0-9]+$ ]]
	run grep -c -aF "mad: mad-spank $version, built for SLURM $slurm" "$so"
	assert_output 1
}

@test "links nothing but libc" {
	run bash -c "readelf -d '$so' | awk '/NEEDED/ {print \$5}'"
	assert_success
	assert_output '[libc.so.6]'
}

@test "stays mapped after dlclose (-z nodelete): a late resolver answer runs its code" {
	readelf -d "$so" | grep -qE 'FLAGS_1.*NODELETE'
}

@test "is bound at load (-z now) and needs from the host only what spur also exports" {
	readelf -d "$so" | grep -qE 'FLAGS.*BIND_NOW|FLAGS_1.*NOW'
	# spur's SPANK host exports these (its spur-spank crate); anything else
	# from SLURM must be a weak reference, tested before use
	spur='^(spank_get_item|spank_getenv|spank_setenv|spank_unsetenv|slurm_error|slurm_info|slurm_verbose|slurm_debug|slurm_debug2|slurm_debug3|slurm_spank_log)$'
	run bash -c "nm -D --undefined-only '$so' | awk '\$1 == \"U\" {print \$2}' | grep -E '^(spank_|slurm_)' | grep -vE '$spur'"
	assert_output ''
	run bash -c "nm -D --undefined-only '$so' | awk '\$1 == \"w\" {print \$2}' | grep -E '^spank_' | sort"
	assert_output $'spank_context\nspank_option_getopt\nspank_option_register'
}
