#!/usr/bin/env python3
"""ctest `flop_counters_follow_their_rules`: on every config in configs/, the FLOP counters users
run (FlopCounterMode forward and backward, fvcore, ptflops, thop, torchinfo) each give exactly
the number its documented rule (scripts/peer/counters.py) predicts from convbench's own counts
(`convbench analyze --json`). It fails when a counter's release changes what it counts, or when
convbench's MACs change, naming the row and the counter.

The counters run real tensors through every block, which at a config's own batch takes minutes
(seed004-amp.yaml: ResNet-50's stages at batch 64). The test command runs every config at batch 2
(`--sweep batch=2` on both sides: each rule is linear in the batch, and ptflops' division by it
is still exercised); scripts/peer-check.sh sets CONVBENCH_PEER_FULL=1, which runs each config as
written.

Usage: flop_counters_test.py CONVBENCH_BINARY SOURCE_DIR   (in the peer environment)
"""
import glob
import os
import sys

try:
    import fvcore  # noqa: F401
    import ptflops  # noqa: F401
    import thop  # noqa: F401
    import torch  # noqa: F401
    import torchinfo  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch not importable with the FLOP counters by {sys.executable}: {e}")
    sys.exit(0)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(source, "scripts"))
    from peer.counters import side_by_side, table
    failures = 0
    full = os.environ.get("CONVBENCH_PEER_FULL") == "1"
    sweeps = () if full else ("batch=2",)
    print("configs as written (CONVBENCH_PEER_FULL=1)" if full else "configs at batch 2 (--sweep batch=2)")
    for config in sorted(glob.glob(os.path.join(source, "configs", "*.yaml"))):
        entries = side_by_side(config, binary, sweeps)
        print(f"== {os.path.basename(config)}")
        print(table(entries))
        bad = [e for e in entries if not e["agree"]]
        if not entries:
            # A config of networks only: the peer builds blocks' modules; the networks' counts
            # are checked against independent PyTorch modules by ctest network_peer.
            with open(config) as f:
                text = f.read()
            networks_only = "\nnetworks:" in text and "\nblocks:" not in text
            print("no block rows: a config of networks only (ctest network_peer checks those)" if networks_only
                  else "no rows")
            failures += 0 if networks_only else 1
        for e in bad:
            failures += 1
            wrong = {k: (v, e["predicted"].get(k)) for k, v in e["values"].items() if e["predicted"].get(k) != v}
            print(f"FAIL {e['block']}/{e['variant']} {e['point_label']}: (counted, predicted) {wrong} {e['errors']}")
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
