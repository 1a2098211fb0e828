#!/usr/bin/env python3
"""The FLOP counters users run, next to convbench's counts, for every block x variant x point of
a spec: FlopCounterMode (forward and backward), fvcore, ptflops, thop and torchinfo, each with the
rule that predicts its number from convbench's MACs (scripts/peer/counters.py says what each
counter counts and why it differs).

    scripts/peer-python.sh scripts/flop_counters.py SPEC [--convbench PATH] [--json OUT]

Runs in the peer environment (scripts/setup-peers.sh). Exit 0 when every counter equals its
rule's prediction, 1 when one does not (a counter's release changed what it counts), 2 on bad
input."""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer.counters import side_by_side, table  # noqa: E402
from peer.io import InputError, write_json  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec")
    p.add_argument("--convbench", metavar="PATH", help="convbench binary (default: $CONVBENCH, build/convbench, PATH)")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="also write the entries as JSON")
    opts = p.parse_args(argv)
    try:
        entries = side_by_side(opts.spec, opts.convbench)
    except (InputError, RuntimeError) as e:
        print(f"flop_counters: {e}", file=sys.stderr)
        return 2
    print(table(entries))
    if opts.json_out:
        write_json(opts.json_out, {"schema": "convbench.flop-counters/1", "entries": entries})
    bad = [e for e in entries if not e["agree"]]
    if bad:
        print(f"{len(bad)} of {len(entries)} rows: a counter differs from its rule", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
