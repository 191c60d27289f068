#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the .deb (MAD_DEB, as root; t/suite sets it) for the cluster tests
# that then run against it (MAD_INSTALLED=deb), and checks what dpkg put on
# the system. deb-remove.bats takes it off again. dpkg -L's list is kept in
# MAD_DEB_LIST for that file.
# shellcheck disable=SC2016 # single-quoted scripts: the bash under test expands them

setup() {
	load ../lib.sh
	load_helpers
	[[ -r ${MAD_DEB:-} && -n ${MAD_DEB_LIST:-} ]] ||
		{ echo "MAD_DEB and MAD_DEB_LIST must name the .deb and a list file (t/suite sets them)"; return 1; }
	[[ $(id -u) == 0 ]] || { echo "dpkg -i needs root"; return 1; }
}

@test "dpkg -i installs the .deb, with SLURM's plugins of its release already there" {
	run dpkg -i "$MAD_DEB"
	echo "$output"
	assert_success
	run dpkg-query -W -f '${Status}' mad-spank
	assert_output 'install ok installed'
	dpkg-query -L mad-spank >"$MAD_DEB_LIST"
}

@test "every file dpkg lists is on the system; the tools in /usr/bin say the package's version" {
	while read -r path; do
		[[ -e $path || -L $path ]] || { echo "$path listed but missing"; false; }
	done <"$MAD_DEB_LIST"
	version=$(dpkg-deb -f "$MAD_DEB" Version)
	for tool in "${mad_tools[@]}"; do
		run "/usr/bin/$tool" --version
		assert_success
		assert_output --regexp "^$tool \\(mad-spank\\) ${version%-*}, built for SLURM "
	done
	run mad_so_installed
	assert_success
}

mad_so_installed() { MAD_INSTALLED=deb mad_so | xargs -r test -r; }

@test "an interactive-style bash completes sbatch --mad-f from the installed files" {
	[[ -r /usr/share/bash-completion/bash_completion ]] || require bash-completion "Debian package bash-completion"
	so=$(MAD_INSTALLED=deb mad_so)
	echo "optional $so" >"$BATS_TEST_TMPDIR/plugstack.conf"
	printf 'ClusterName=x\nSlurmctldHost=localhost\nPlugStackConfig=%s\n' "$BATS_TEST_TMPDIR/plugstack.conf" \
		>"$BATS_TEST_TMPDIR/slurm.conf"
	# bash-completion sources /etc/bash_completion.d at start, as in a login shell
	run env SLURM_CONF="$BATS_TEST_TMPDIR/slurm.conf" bash -c '
		. /usr/share/bash-completion/bash_completion
		COMP_WORDS=(sbatch --mad-f) COMP_CWORD=1 COMP_LINE="sbatch --mad-f" COMP_POINT=14
		_mad_spank_slurm sbatch 2>/dev/null; echo "${COMPREPLY[*]}"
		COMP_WORDS=(mad-wait --j) COMP_CWORD=1 COMP_LINE="mad-wait --j" COMP_POINT=12
		__load_completion mad-wait && _mad_spank_tool mad-wait 2>/dev/null; echo "${COMPREPLY[*]}"'
	assert_success
	assert_output "$(printf '%s\n' --mad-fanout= --json)"
}
