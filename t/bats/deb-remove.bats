#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Takes off the .deb that deb-install.bats installed: dpkg -r leaves nothing
# of dpkg -L's list but the conffile (Debian keeps those until a purge), and
# dpkg -P takes that too.

setup() {
	load ../lib.sh
	load_helpers
	[[ -r ${MAD_DEB_LIST:-} ]] || { echo "MAD_DEB_LIST must name deb-install.bats's list (t/suite sets it)"; return 1; }
	[[ $(id -u) == 0 ]] || { echo "dpkg -r needs root"; return 1; }
}

# What of the list is still there: files and links, and the package's own
# folders (the others, /usr/bin and the like, belong to the system).
left() {
	local path
	while read -r path; do
		if [[ -L $path || (-e $path && ! -d $path) ]]; then
			echo "$path"
		elif [[ -d $path && $path == */mad-spank* ]]; then
			echo "$path/"
		fi
	done <"$MAD_DEB_LIST"
}

@test "dpkg -r leaves nothing of the package but its conffile" {
	conffiles=$(dpkg-query -W -f '${Conffiles}\n' mad-spank | awk 'NF { print $1 }')
	assert_equal "$conffiles" /etc/bash_completion.d/mad-spank
	run dpkg -r mad-spank
	echo "$output"
	assert_success
	run left
	assert_output /etc/bash_completion.d/mad-spank
	# the conffile left behind does nothing without the package
	run bash -c '. /etc/bash_completion.d/mad-spank; declare -F _mad_spank_slurm'
	assert_output ''
}

@test "dpkg -P then leaves nothing at all" {
	run dpkg -P mad-spank
	echo "$output"
	assert_success
	run left
	assert_output ''
	run dpkg-query -W mad-spank
	assert_failure
}
