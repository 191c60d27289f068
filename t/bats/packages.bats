#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The packages of one build ("make deb", "make rpm"), as files: what they
# hold, what they depend on, lintian, and that the RPM holds the same files
# as the .deb (paths mapped).  t/suite runs this with MAD_DEB, MAD_RPM (the
# package files) and MAD_BUILDDIR (the build they came from).

setup() {
	load ../lib.sh
	load_helpers
	[[ -r ${MAD_DEB:-} && -r ${MAD_RPM:-} && -r ${MAD_BUILDDIR:-}/config.h ]] ||
		{ echo "MAD_DEB, MAD_RPM and MAD_BUILDDIR must name a .deb, an .rpm and their build (t/suite sets them)"; return 1; }
	version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	slurm=$(sed -n 's/^#define MAD_SLURM_VERSION "\(.*\)"$/\1/p' "$MAD_BUILDDIR/config.h")
	major=${slurm%%.*} minor=${slurm#*.} minor=${minor%%.*}
	slurm_mm=$major.$minor next_mm=$major.$(printf '%02d' $((10#$minor + 1)))
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	# Debian's SLURM (libslurm-dev), else a source-built release: SchedMD's slurm-smd
	# packages (contrib/debian/rules says the same)
	if [[ -z $(sed -n 's/^SLURM_PREFIX = //p' "$MAD_BUILDDIR/Makefile") ]]; then
		deb_plugindir=/usr/lib/$multiarch/slurm-wlm slurm_package=slurm-wlm-basic-plugins
	else
		deb_plugindir=/usr/lib/$multiarch/slurm slurm_package=slurm-smd
	fi
}

# The files (not folders) of each package, one per line, sorted.
deb_files() { dpkg-deb --fsys-tarfile "$MAD_DEB" | tar -t | grep -v '/$' | sed 's|^\./|/|' | sort; }
rpm_files() {
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$MAD_RPM" | awk '$1 !~ /^d/ { print $2 }' | sort
}
# One file's content from the RPM.
rpm_cat() { rpm2archive - <"$MAD_RPM" | tar -xzO ".$1"; }

@test "make dist, the .deb and the .rpm are named with configure.ac's version" {
	[[ -n $version ]]
	[[ -r $MAD_BUILDDIR/mad-spank-$version.tar.gz ]]
	[[ ${MAD_DEB##*/} == mad-spank_"$version"-1_*.deb ]]
	[[ ${MAD_RPM##*/} == mad-spank-"$version"-1*.rpm ]]
	run dpkg-deb -f "$MAD_DEB" Version
	assert_output "$version-1"
	run rpm -qp --qf '%{VERSION}' "$MAD_RPM"
	assert_output "$version"
}

@test "the .deb holds mad.so in its SLURM's plugin folder, its marker writer, the tools, man pages, completion, templates and the plugstack line" {
	run deb_files
	assert_success
	for f in "$deb_plugindir/mad.so" /usr/libexec/mad-spank/mad-writer \
		/usr/bin/mad-env /usr/bin/mad-mark /usr/bin/mad-wait /usr/bin/mad-render /usr/bin/mad-hostlist \
		/usr/share/man/man1/mad-env.1.gz /usr/share/man/man1/mad-mark.1.gz /usr/share/man/man1/mad-wait.1.gz \
		/usr/share/man/man1/mad-render.1.gz /usr/share/man/man1/mad-hostlist.1.gz /usr/share/man/man8/mad.8.gz \
		/usr/share/bash-completion/completions/mad-spank /usr/share/bash-completion/completions/mad-env \
		/usr/share/bash-completion/completions/mad-wait /usr/share/bash-completion/completions/mad-hostlist \
		/usr/share/bash-completion/completions/mad-render /usr/share/bash-completion/completions/mad-mark \
		/etc/bash_completion.d/mad-spank \
		/usr/share/mad-spank/job.sh.j2 /usr/share/mad-spank/example.yaml \
		/usr/share/mad-spank/plugstack.conf.d/mad.conf /usr/share/mad-spank/plugstack.conf.d/README \
		/usr/share/doc/mad-spank/copyright; do
		assert_line "$f"
	done
	# libtool's file is of no use to SLURM; nothing goes where only the admin writes
	refute_line --regexp '\.la$'
	refute_line --regexp '^/etc/slurm'
	# the completion file of SLURM's clients stays SLURM's
	refute_line --regexp '/completions/(sbatch|srun|salloc)$'
}

@test "each package's mad.so starts the mad-writer that package holds, by its path alone" {
	run bash -c "dpkg-deb --fsys-tarfile '$MAD_DEB' | tar -xO .$deb_plugindir/mad.so | grep -ao '/[[:print:]]*/mad-writer'"
	assert_output /usr/libexec/mad-spank/mad-writer
	run bash -c "rpm2archive - <'$MAD_RPM' | tar -xzO ./usr/lib64/slurm/mad.so | grep -ao '/[[:print:]]*/mad-writer'"
	assert_output /usr/libexec/mad-spank/mad-writer
	run rpm_files
	assert_line /usr/libexec/mad-spank/mad-writer
}

@test "the .deb depends on the SLURM major.minor it was built for, through its plugin package" {
	[[ $slurm =~ ^[0-9]+\.[0-9]{2}\.[0-9]+$ ]]
	run dpkg-deb -f "$MAD_DEB" Depends
	assert_output --partial "$slurm_package (>= $slurm_mm), $slurm_package (<< $next_mm)"
}

@test "the plugstack line of each package names its own mad.so, and only under /usr/share" {
	run bash -c "dpkg-deb --fsys-tarfile '$MAD_DEB' | tar -xO ./usr/share/mad-spank/plugstack.conf.d/mad.conf"
	assert_success
	assert_line "optional $deb_plugindir/mad.so"
	run rpm_cat /usr/share/mad-spank/plugstack.conf.d/mad.conf
	assert_success
	assert_line "optional /usr/lib64/slurm/mad.so"
	# the package does not turn mad on: its README says where to copy the line
	run bash -c "dpkg-deb --fsys-tarfile '$MAD_DEB' | tar -xO ./usr/share/mad-spank/plugstack.conf.d/README"
	assert_output --partial "cp mad.conf /etc/slurm/plugstack.conf.d/"
}

@test "lintian finds no error or warning in the .deb (overrides say why in their file)" {
	require lintian "Debian package lintian"
	run lintian --fail-on error,warning --display-info "$MAD_DEB"
	echo "$output"
	assert_success
	refute_output --regexp '^[EW]: '
}

@test "the .rpm holds the same files as the .deb, EL's paths for Debian's" {
	# Debian's plugin folder is EL's %{_libdir}/slurm; each package has its own
	# documentation and license files (and the .deb lintian's overrides); rpmbuild adds
	# build-id links of the ELF files, and
	# compresses man pages only where its configuration says so (EL does,
	# Debian's rpm does not).
	run diff <(deb_files | grep -vE '^/usr/share/(doc|lintian)/' |
		sed -e "s|^$deb_plugindir/|/usr/lib64/slurm/|" -e 's|^\(/usr/share/man/.*\)\.gz$|\1|') \
		<(rpm_files | grep -vE '^/usr/share/(doc|licenses)/|^/usr/lib/\.build-id/' |
			sed 's|^\(/usr/share/man/.*\)\.gz$|\1|')
	echo "$output"
	assert_success
	# %doc: the docdir is versioned where rpm's configuration says so
	run rpm_files
	assert_line --regexp '^/usr/share/doc/mad-spank(-[0-9.]+)?/README\.md$'
	assert_line --regexp '^/usr/share/(licenses|doc)/mad-spank(-[0-9.]+)?/LICENSE$'
}

@test "the .rpm requires SLURM's major.minor it was built for, and marks /etc files as the admin's" {
	run rpm -qp --requires "$MAD_RPM"
	assert_line "slurm >= $slurm_mm"
	assert_line "slurm < $next_mm"
	run rpm -qp --configfiles "$MAD_RPM"
	assert_output /etc/bash_completion.d/mad-spank
	run rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms} %{FILELINKTOS}\n]' "$MAD_RPM"
	assert_line '/usr/share/bash-completion/completions/mad-wait lrwxrwxrwx mad-spank'
	assert_line --regexp '^/usr/lib64/slurm/mad.so -rwxr-xr-x $'
}
