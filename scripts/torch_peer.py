#!/usr/bin/python3
"""PyTorch as the independent peer for every number convbench prints: see peer/cli.py (or
--help) for what it does and the conventions of its rows.

The peer is split by concern under scripts/peer/: io.py (the resolved spec it builds from, the
JSON it writes), modules.py (variants as torch.nn modules), counts.py (parameters, buffers,
MACs, FlopCounterMode), measure.py (timing, memory, result rows), dumps.py (float64 tensor
dumps for `convbench verify`), cli.py (the command line). This file is the entry point, and
names the pieces the tests use."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer.cli import main  # noqa: E402
from peer.counts import (conv_macs, count_row, make_conv_backward_recorder,  # noqa: E402,F401
                         named_stat_buffers, split_conv_backward)
from peer.dumps import dump_scaled  # noqa: E402,F401
from peer.io import InputError, load_spec  # noqa: E402,F401
from peer.modules import build_block, input_shape  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(main())
