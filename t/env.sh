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
# spur's source and SchedMD's releases are not defaults here: t/fetch-sources finds them
# (MAD_SPUR_TARBALL, MAD_SLURM_TARBALLS, the shared folder beside the tree, the cache) or
# fetches them, as t/sources pins them.
