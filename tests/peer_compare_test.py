#!/usr/bin/python3
"""`convbench compare SPEC --peer torch --per-op N` end to end: convbench and PyTorch eager take
turns on a tiny block (four variants: two kinds, and the memory policies whose ops PyTorch hooks
in other ways: an in-place ReLU, a checkpointed block), the comparison follows convbench's table
with the ranking and its verdict, and the peer's op_times carry the same op names, with the same
phases, as convbench's.

    peer_compare_test.py PATH/TO/convbench

Run in the peer environment (scripts/peer-python.sh --no-setup); exits 0 with "SKIP: torch not
importable" where PyTorch is missing. convbench finds the peer itself (scripts/peer-python.sh), or
this Python through CONVBENCH_PEER_PYTHON where this is not the peer environment (a GPU machine's).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch not importable by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONVBENCH = None  # argv[1]

SPEC = """\
name: peer-compare
blocks:
  - name: tiny
    dims: 2
    batch: 2
    in_channels: 8
    out_channels: 16
    size: 8
    residual: true
    variants:
      - standard
      - separable
      - {kind: standard, name: inplace, memory_policy: inplace_act}
      - {kind: standard, name: checkpointed, memory_policy: recompute}
"""
QUICK = ["--device", "cpu", "--min-time", "0", "--min-samples", "2", "--max-noise", "1", "--timeout", "2"]


def peer_env():
    env = dict(os.environ)
    in_peer_venv = os.path.realpath(sys.prefix).startswith(os.path.realpath(os.path.join(ROOT, ".venv-peers")))
    if not in_peer_venv:
        env["CONVBENCH_PEER_PYTHON"] = sys.executable
    return env


class ComparePeerEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = cls.dir.name
        spec = os.path.join(d, "spec.yaml")
        with open(spec, "w") as f:
            f.write(SPEC)
        cls.ours_path, cls.peer_path = os.path.join(d, "ours.json"), os.path.join(d, "peer.json")
        cls.html_path = os.path.join(d, "report.html")
        cls.result = subprocess.run([CONVBENCH, "compare", spec, *QUICK, "--per-op", "2", "--peer", "torch", "--json",
                                     cls.ours_path, "--peer-json", cls.peer_path, "--html", cls.html_path, "-q"],
                                    capture_output=True, text=True, env=peer_env(), timeout=500)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_exit_code_and_no_peer_failure(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertNotIn("PyTorch peer on", self.result.stderr)

    def test_tables_then_comparison_with_the_verdict(self):
        out = self.result.stdout
        table = out.find("tiny: input 2x8x8x8, float32, channels_first, train, device cpu")
        comparison = out.find("tiny: convbench ")
        self.assertGreaterEqual(table, 0, out)
        self.assertGreater(comparison, table, out)
        self.assertIn("ranking by step time (rank 1 = fastest", out)
        verdicts = [line for line in out.splitlines() if line.startswith("verdict: ")]
        self.assertEqual(len(verdicts), 1, out)
        # Which verdict depends on the machine's load and the runtimes; that there is one does not.
        self.assertRegex(verdicts[0], r"^verdict: (convbench and PyTorch (agree|disagree)|not concluded|nothing)")
        self.assertRegex(out, r"\nRankings by time: \d of 1 block points agree, \d disagree.*, \d not concluded\.\n")
        self.assertIn("Counts agree on all 4 compared rows.", out)
        self.assertIn("op names: all 27 ops of 4 variants are timed by both runtimes under the same names.", out)

    def test_html_report_ends_with_the_comparison(self):
        with open(self.html_path) as f:
            html = f.read()
        self.assertIn('<section class="against" id="against">', html)
        self.assertIn("<h4>Ranking</h4>", html)
        self.assertIn('<ul class="verdict">', html)

    def test_peer_op_times_have_convbench_names_and_phases(self):
        with open(self.ours_path) as f:
            ours = json.load(f)["results"]
        with open(self.peer_path) as f:
            peer_doc = json.load(f)
        peer = peer_doc["results"]
        self.assertEqual(peer_doc["engine"], f"pytorch {torch.__version__}")
        self.assertIn("run_by", peer_doc["provenance"])
        self.assertEqual([r["variant"] for r in ours], [r["variant"] for r in peer])
        for o, p in zip(ours, peer):
            with self.subTest(variant=o["variant"]):
                self.assertEqual(p["status"], "ok", p["message"])
                self.assertEqual(sorted(o["op_times"]), sorted(p["op_times"]))
                for name, t in o["op_times"].items():
                    q = p["op_times"][name]
                    self.assertGreater(q["forward_ms"], 0, name)
                    self.assertEqual("backward_ms" in t, "backward_ms" in q, name)
        # The checkpointed block's forward runs again in backward, in both runtimes.
        checkpointed = next(r for r in peer if r["variant"] == "checkpointed")
        self.assertTrue(any("recompute_ms" in t for t in checkpointed["op_times"].values()))
        # The first conv reads the block input, which needs no gradient: its backward (the weight
        # gradient) is still timed, not cut short when autograd reaches its output.
        standard = next(r for r in peer if r["variant"] == "standard")
        self.assertGreater(standard["op_times"]["conv"]["backward_ms"], 0)


if __name__ == "__main__":
    CONVBENCH = sys.argv.pop(1)
    unittest.main()
