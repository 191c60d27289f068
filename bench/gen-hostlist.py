#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a shuffled, messy list of host names, one per line, for bench/hostlist.

Three naming families, as in the "messy2" set of the research that chose
these benchmarks (bench/README.md):

  node000001 .. node050000          zero-padded, 3 % of hosts missing
  rack01-gpu0001 .. rack20-gpu2000  two numbers, 3 % of hosts missing
  cn1 .. cn10000                    not padded, 5 % of hosts missing

then shuffled.  The seed is fixed (default 7), so the output is the same on
every run and machine (Python's random is a Mersenne Twister whose output for
a given seed is stable across Python 3 versions).

--hosts N scales the three families by the same factor and keeps the first N
names of the shuffled list, so a list of 25k, 50k or 100k hosts has the same
mix.  Without it, the families have the sizes above (about 96,800 hosts).

Standard library only.
"""

import argparse
import random
import sys

# family sizes at scale 1, and the share of hosts missing from each
NODE_HOSTS = 50000
RACKS = 20
GPUS_PER_RACK = 2000
CN_HOSTS = 10000
NODE_GAP, RACK_GAP, CN_GAP = 0.03, 0.03, 0.05


def generate(rng, scale):
    """Return the host names of the three families at SCALE, in order."""
    nodes = max(1, round(NODE_HOSTS * scale))
    gpus = max(1, round(GPUS_PER_RACK * scale))
    cns = max(1, round(CN_HOSTS * scale))
    if nodes > 999999 or gpus > 9999:
        sys.exit("gen-hostlist: --hosts too large for the padded widths")
    hosts = []
    for i in range(1, nodes + 1):
        if rng.random() >= NODE_GAP:
            hosts.append("node%06d" % i)
    for r in range(1, RACKS + 1):
        for g in range(1, gpus + 1):
            if rng.random() >= RACK_GAP:
                hosts.append("rack%02d-gpu%04d" % (r, g))
    for i in range(1, cns + 1):
        if rng.random() >= CN_GAP:
            hosts.append("cn%d" % i)
    return hosts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    ap.add_argument("--hosts", type=int, metavar="N",
                    help="exactly N hosts (same mix, scaled)")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    if args.hosts is None:
        hosts = generate(rng, 1.0)
    else:
        if args.hosts < 1:
            ap.error("--hosts must be at least 1")
        expected = (NODE_HOSTS * (1 - NODE_GAP) +
                    RACKS * GPUS_PER_RACK * (1 - RACK_GAP) +
                    CN_HOSTS * (1 - CN_GAP))
        # a little more than needed, then cut: the cut is random (the list
        # is shuffled), so it only adds gaps
        scale = args.hosts / expected * 1.02 + 1e-6
        hosts = generate(rng, scale)
        while len(hosts) < args.hosts:  # unlucky gaps: grow and retry
            scale *= 1.01
            hosts = generate(random.Random(args.seed), scale)
    rng.shuffle(hosts)
    if args.hosts is not None:
        hosts = hosts[:args.hosts]
    out = sys.stdout
    out.write("\n".join(hosts))
    out.write("\n")


if __name__ == "__main__":
    main()
