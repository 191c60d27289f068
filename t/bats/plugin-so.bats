#!/usr/bin/env bats
# mad.so as a file: what it exports, what it links, what it needs from the host.

setup() {
	load ../lib.sh
	load_helpers
	so=$MAD_BUILDDIR/plugin/.libs/mad.so
	[[ -r $so ]] || { echo "no $so: build first"; false; }
}

@test "exports only plugin_* and slurm_spank_* symbols" {
	run bash -c "nm -D --defined-only '$so' | awk '{print \$3}' | sort"
	assert_success
	assert_output $'plugin_name\nplugin_type\nplugin_version\nslurm_spank_init\nslurm_spank_task_exit\nslurm_spank_task_init'
}

@test "links nothing but libc" {
	run bash -c "readelf -d '$so' | awk '/NEEDED/ {print \$5}'"
	assert_success
	assert_output '[libc.so.6]'
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
