# SPDX-License-Identifier: GPL-2.0-or-later
# t/env.sh: the defaults every test script, bench and the cluster share, in one place.
# Sourced (by t/lib.sh, t/cluster/config.sh, t/suite, t/prepare, t/demo, bench/*); sets
# only what the caller's environment leaves unset, and exports nothing by itself.
# shellcheck shell=bash

# Where t/prepare installs mad-spank, and where the tests take mad.so and the tools from.
: "${MAD_PREFIX:=/tmp/mad-spank/prefix}"
# Everything the local test cluster writes (t/cluster/).
: "${MAD_CLUSTER_DIR:=/tmp/mad-cluster}"
# The build folder t/prepare, t/suite and t/demo use when MAD_BUILD is unset (bats files keep
# MAD_BUILD unset under make check, where the build folder is the one running them).
# shellcheck disable=SC2034 # used by the scripts that source this file
mad_default_build=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-suite
# spur's source tarball, from which t/spur/host/build builds spur's real SPANK host (the
# shared folder next to this project; t/suite exports it for distcheck's copy of the tree).
: "${MAD_SPUR_TARBALL:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/spur/spur-4cc3da8.tar.xz}"
