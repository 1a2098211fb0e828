#!/usr/bin/python3
"""Tests of scripts/torch_peer.py, the PyTorch peer.

    /usr/bin/python3 tests/torch_peer_test.py PATH/TO/convbench [unittest options]

- Philox: the NumPy port against values printed by lib/runtime/philox.hpp itself.
- Counts: the seed-000 block (params and forward MACs given by PyTorch users in the seed) and a
  mixed spec (grouped, custom multi-branch, transposed conv, pools, residual, sweep) against
  hand arithmetic; module and parameter names.
- Dumps: the float64 training-step files are self-consistent (finite differences of <y, dy>,
  BN running statistics, Philox dropout masks against C++ bits).
- Measurement: time and saved-memory fields on a tiny block, saved bytes against hand arithmetic,
  an unsupported row that does not stop the others.
- Every config in configs/: params, buffers and MACs equal `convbench analyze --json`.

Exits 0 with "SKIP: torch not importable" where PyTorch is missing.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import torch
    import yaml
except ImportError as e:
    # ctest reports this as a skip; scripts/gpu-check.sh counts it as a failure on a GPU machine.
    print(f"SKIP: torch not importable by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import philox  # noqa: E402
import torch_peer  # noqa: E402
from peer_in_process import run_torch_peer  # noqa: E402

CONVBENCH = None  # argv[1]

# Printed by this program against lib/runtime/philox.hpp (g++ -std=c++20 -I lib):
#   for seed in {0, 0x5eed, 0xDEADBEEFCAFEF00D}, index in {0, 1, 2, 7, 1000, 123456789, 2^32, 2^64-1}:
#     Philox4 r = philox4x32_10(index, seed);
#     printf("(%lluu, 0x%llxu, [%u, %u, %u, %u], %.9g),\n", index, seed, r.v[0..3], philox_uniform(index, seed));
#   for i in 0..63: putchar(dropout_keep(i, 0x5eed, 0.3f) ? '1' : '0');
# (index 0 / seed 0 is also Random123's published known answer 0x6627e8d5 0xe169c58d ...)
PHILOX_CASES = [
    (0, 0x0, [1713891541, 3781805453, 3159862348, 2600524760], 0.399046421),
    (1, 0x0, [4175744164, 1555169499, 2980410603, 159317863], 0.972241163),
    (2, 0x0, [83534633, 1372009126, 605361069, 1167144420], 0.0194494128),
    (7, 0x0, [2830310705, 182738035, 3092701944, 1943925342], 0.658983052),
    (1000, 0x0, [179166088, 891393431, 4283292538, 4116543835], 0.0417153239),
    (123456789, 0x0, [3312208130, 3064327959, 1729284979, 4013493118], 0.77118355),
    (4294967296, 0x0, [1792067052, 3928187465, 1940150773, 122242227], 0.41724807),
    (18446744073709551615, 0x0, [4090393677, 3753482255, 1518119633, 634470994], 0.952368975),
    (0, 0x5eed, [3994824652, 1867967801, 3801767988, 348386263], 0.930117548),
    (1, 0x5eed, [3885928164, 2831611883, 4274903188, 1690089187], 0.904763103),
    (2, 0x5eed, [2528742016, 2503332764, 1869814637, 3216502535], 0.588768601),
    (7, 0x5eed, [2843388748, 2804146133, 386269578, 3866223187], 0.662028015),
    (1000, 0x5eed, [1690197889, 141490928, 2908174283, 886093891], 0.393529832),
    (123456789, 0x5eed, [799402288, 2922436737, 1466401652, 212033014], 0.186125338),
    (4294967296, 0x5eed, [3052330739, 2112779748, 644258393, 1056436011], 0.710676074),
    (18446744073709551615, 0x5eed, [2033560177, 3779914134, 3960377107, 2659275789], 0.473475099),
    (0, 0xdeadbeefcafef00d, [291949870, 2769672014, 1306204098, 749084824], 0.0679748654),
    (1, 0xdeadbeefcafef00d, [3468058047, 870252104, 1778635972, 3532029909], 0.807470143),
    (2, 0xdeadbeefcafef00d, [3140028625, 2088172519, 3909295494, 1128710552], 0.731094837),
    (7, 0xdeadbeefcafef00d, [942431212, 1767290400, 3625344251, 2997203330], 0.219426811),
    (1000, 0xdeadbeefcafef00d, [3198835140, 1732291759, 3225545654, 3517212546], 0.744786799),
    (123456789, 0xdeadbeefcafef00d, [3704387266, 1139876757, 301415066, 3714575325], 0.862494826),
    (4294967296, 0xdeadbeefcafef00d, [55498823, 1720042572, 855971586, 3637158712], 0.0129218102),
    (18446744073709551615, 0xdeadbeefcafef00d, [3514661854, 2283420637, 3785817473, 3391989882], 0.81832093),
]
KEEP_BITS_P03_SEED5EED = "1110101110100011000111100110100110100101110111111100110110011101"

SEED_SPEC = """\
name: seed-000
blocks:
  - name: seed000
    dims: 3
    batch: 6
    in_channels: 16
    out_channels: 32
    size: 32
    variants:
      - standard
      - {kind: bottleneck, ratio: 2}
      - separable
"""

MIXED_SPEC = """\
defaults: {batch: 2, size: [12, 12]}
sweep:
  layout: [channels_first, channels_last]
  batch: [2, 3]
blocks:
  - name: sub
    in_channels: 8
    out_channels: 16
    bias: false
    residual: true
    dropout: 0.25
    variants:
      - standard
      - {kind: grouped, groups: 4}
      - kind: custom
        name: subtracted
        ops:
          - {op: conv, name: p, inputs: input, out_channels: 8, kernel: 1}
          - {op: conv, name: d, inputs: p, groups: depthwise}
          - {op: sub, name: dp, inputs: [d, p]}
          - {op: conv, name: l, inputs: p}
          - {op: concat, name: cat, inputs: [dp, l]}
  - name: odd
    dims: 3
    in_channels: 4
    out_channels: 4
    size: 8
    norm: group
    norm_groups: 2
    act: leaky_relu
    negative_slope: 0.2
    stride: 2
    residual: true
    variants:
      - {kind: bottleneck, ratio: 2, groups: 2}
      - kind: custom
        ops:
          - {op: max_pool, name: mp, inputs: input, kernel: 2}
          - {op: conv_transpose, name: up, inputs: mp, out_channels: 6, kernel: 3, stride: 2,
             padding: 1, output_padding: 1, groups: 2}
          - {op: avg_pool, name: ap, inputs: up, kernel: 3, stride: 2, padding: 1}
          - {op: batch_norm, name: bn}             # unary ops read the previous op by default
          - {op: dropout, name: dr, p: 0.5}
          - {op: upsample, name: us, inputs: dr, scale: 1}
          - {op: conv, name: out, inputs: us, out_channels: 4, kernel: 1}
"""


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run_peer(args):
    # In this process (tests/peer_in_process.py): the same main() without a PyTorch import per call.
    return run_torch_peer(args + ["--convbench", CONVBENCH])


def resolved_blocks(spec_text):
    """The blocks of a YAML spec as convbench resolves them (what the peer builds from)."""
    with tempfile.TemporaryDirectory() as tmp:
        return torch_peer.load_spec(write(tmp, "spec.yaml", spec_text), CONVBENCH)[1]


def peer_rows(spec_path, directory, *extra):
    out = os.path.join(directory, "peer.json")
    run_peer([spec_path, "--json", out] + list(extra))
    with open(out) as f:
        doc = json.load(f)
    assert doc["schema"] == "convbench.results/1", doc["schema"]
    return {(r["block"], r["variant"], r["point_label"]): r for r in doc["results"]}


class PhiloxTest(unittest.TestCase):
    def test_words_and_uniforms_match_cpp(self):
        for index, seed, words, uniform in PHILOX_CASES:
            got = [int(w[0]) for w in philox.philox4x32_10([index], seed)]
            self.assertEqual(got, words, f"index {index} seed {seed:#x}")
            self.assertAlmostEqual(float(philox.philox_uniform(np.array([index], np.uint64), seed)[0]),
                                   uniform, delta=1e-9)

    def test_dropout_mask_matches_cpp(self):
        bits = "".join("1" if k else "0" for k in philox.dropout_mask(64, 0x5EED, 0.3))
        self.assertEqual(bits, KEEP_BITS_P03_SEED5EED)

    def test_keep_rule_is_u_at_least_p(self):
        u = float(philox.philox_uniform(np.array([5], np.uint64), 0x5EED)[0])
        self.assertTrue(philox.dropout_keep(np.array([5], np.uint64), 0x5EED, u)[0])
        self.assertFalse(philox.dropout_keep(np.array([5], np.uint64), 0x5EED,
                                             np.nextafter(np.float32(u), np.float32(1)))[0])


class CountsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.seed = peer_rows(write(cls.tmp.name, "seed.yaml", SEED_SPEC), cls.tmp.name, "--counts-only")
        cls.mixed = peer_rows(write(cls.tmp.name, "mixed.yaml", MIXED_SPEC), cls.tmp.name, "--counts-only")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_seed_block_matches_pytorch_users(self):
        # Seed 000: 13,920 / 7,872 / 1,088 params; 2.75 / 1.56 / 0.23 GFLOPs (reported as 2*MACs
        # with bias work, so we check MACs computed by hand: N=6, P=32^3).
        n, p = 6, 32 ** 3
        expected = {
            "standard": (13920, 2 * 32, 6 * 32 * 16 * 27 * p, 0),
            "bottleneck": (7872, 2 * (16 + 16 + 32), n * p * (16 * 16 + 16 * 16 * 27 + 32 * 16),
                           n * p * (16 * 16 * 27 + 32 * 16)),
            "separable": (1088, 2 * (16 + 32), n * p * (16 * 27 + 32 * 16), n * p * 32 * 16),
        }
        self.assertEqual(expected["standard"][2], 2717908992)
        self.assertEqual(expected["bottleneck"][2], 1509949440)
        self.assertEqual(expected["separable"][2], 185597952)
        for variant, (params, buffers, fwd, bwd_data) in expected.items():
            row = self.seed[("seed000", variant, "")]
            self.assertEqual(row["status"], "ok")
            self.assertEqual(row["params"], params, variant)
            self.assertEqual(row["buffers"], buffers, variant)
            self.assertEqual(row["macs"], {"forward": fwd, "backward_data": bwd_data,
                                           "backward_weight": fwd}, variant)
            self.assertEqual(row["flops"], {k: 2 * v for k, v in row["macs"].items()})
            self.assertEqual(row["output_shape"], [6, 32, 32, 32, 32])

    def test_mixed_spec_rows_in_sweep_order(self):
        # Block-major, then sweep points with the first sweep key slowest, then variants.
        labels = [f"layout={lay},batch={b}" for lay in ("channels_first", "channels_last") for b in (2, 3)]
        expected = [(block, variant, label)
                    for block, variants in (("sub", ("standard", "grouped", "subtracted")),
                                            ("odd", ("bottleneck", "custom")))
                    for label in labels for variant in variants]
        self.assertEqual(list(self.mixed), expected)

    def test_mixed_spec_counts_by_hand(self):
        q = 12 * 12  # 2D, stride 1, same padding
        shortcut = 16 * 8 * q  # 1x1 8->16 (per sample)
        sub = {  # params, buffers, forward MACs per sample, backward-data MACs per sample
            "standard": (16 * 8 * 9 + 32 + 16 * 8 + 32, 64, 16 * 8 * 9 * q + shortcut, 0),
            "grouped": (16 * 2 * 9 + 32 + 16 * 8 + 32, 64, 16 * 2 * 9 * q + shortcut, 0),
            # p: 1x1 8->8, d: depthwise 3x3, l: 3x3 8->8. A custom variant is the whole block:
            # no block dropout, norm or residual shortcut. p reads the input, so only d and l
            # need grad-input.
            "subtracted": (8 * 8 + 8 * 9 + 8 * 8 * 9, 0,
                           8 * 8 * q + 8 * 9 * q + 8 * 8 * 9 * q, 8 * 9 * q + 8 * 8 * 9 * q),
        }
        # odd (3D, 8^3, stride 2): max_pool -> 4^3; conv_transpose 4->6 groups 2 (weight 4x3x27)
        # over the 4^3 input -> 8^3; avg_pool -> 4^3; BN; dropout; upsample x1; 1x1 6->4. The
        # bottleneck adds a stride-2 shortcut conv 4->4 with bias and GN; the custom one does not.
        odd = {
            "custom": (4 * 3 * 27 + 6 + 12 + 6 * 4 + 4, 12,
                       4 * 3 * 27 * 64 + 4 * 6 * 64, 4 * 6 * 64),
            "bottleneck": ((8 + 2) + 4 + (2 * 27 + 2) + 4 + (8 + 4) + 8 + (16 + 4) + 8, 0,
                           2 * 4 * 512 + 2 * 1 * 27 * 64 + 4 * 2 * 64 + 4 * 4 * 64,
                           2 * 1 * 27 * 64 + 4 * 2 * 64),
        }
        for layout in ("channels_first", "channels_last"):
            for batch in (2, 3):
                label = f"layout={layout},batch={batch}"
                for block, table in (("sub", sub), ("odd", odd)):
                    for variant, (params, buffers, fwd, bwd) in table.items():
                        row = self.mixed[(block, variant, label)]
                        what = f"{block}/{variant} {label}"
                        self.assertEqual(row["status"], "ok", what)
                        self.assertEqual(row["params"], params, what)
                        self.assertEqual(row["buffers"], buffers, what)
                        self.assertEqual(row["macs"], {"forward": batch * fwd, "backward_data": batch * bwd,
                                                       "backward_weight": batch * fwd}, what)
                        self.assertEqual(row["layout"], layout)
                        self.assertEqual(row["point"], {"layout": layout, "batch": batch})

    def test_json_spec_gives_the_same_rows(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = peer_rows(write(tmp, "seed.json", json.dumps(yaml.safe_load(SEED_SPEC))), tmp,
                             "--counts-only")
        self.assertEqual(list(rows), list(self.seed))
        for key, row in rows.items():
            for field in ("params", "buffers", "macs", "flops", "output_shape", "input_shape"):
                self.assertEqual(row[field], self.seed[key][field], (key, field))

    def test_seed_block_flop_counter_agrees_where_available(self):
        for variant in ("standard", "bottleneck", "separable"):
            row = self.seed[("seed000", variant, "")]
            fc = row["flop_counter"]
            if not fc["available"]:
                self.assertIn("reason", fc)
                continue
            self.assertNotIn("error", fc)
            self.assertEqual(fc["forward"], row["flops"]["forward"])
            self.assertEqual(fc["backward_data"], row["flops"]["backward_data"])
            self.assertEqual(fc["backward_weight_corrected"], row["flops"]["backward_weight"])
            self.assertTrue(fc["split_consistent"])

    def test_grouped_grad_weight_correction(self):
        # A stand-in for FlopCounterMode's convolution_backward formula as it behaves before
        # PyTorch PR #183405: grad-input right, grad-weight `groups` times too large. The recorder
        # must find every backward conv call, and the correction must give our counts back.
        def old_formula(grad_out, x, w, bias, stride, padding, dilation, transposed, output_padding,
                        groups, mask, out_val=None):
            exact = 2 * torch_peer.conv_macs(x, w, grad_out, transposed)
            return (exact if mask[0] else 0) + (groups * exact if mask[1] else 0)

        blocks = resolved_blocks(MIXED_SPEC)
        for block in (blocks[0], blocks[4]):
            for variant in block["variants"]:
                module = torch_peer.build_block(block, variant).train()
                recorder = torch_peer.make_conv_backward_recorder()
                with recorder:
                    y = module(torch.randn(torch_peer.input_shape(block)))
                    y.backward(torch.ones_like(y))
                split = torch_peer.split_conv_backward(recorder.calls, old_formula)
                counts = torch_peer.count_row(block, variant)
                what = f"{block['name']}/{variant['name']}"
                self.assertEqual(len(recorder.calls), len(counts["convs"]), what)
                self.assertEqual(split["backward_data"], 2 * counts["macs"]["backward_data"], what)
                self.assertEqual(split["backward_weight_corrected"], 2 * counts["macs"]["backward_weight"], what)
                grouped = any(r["groups"] > 1 for r in counts["convs"])
                self.assertEqual(split["grouped_overcount_corrected"], grouped, what)
                self.assertTrue(split["grad_weight_matches_formula"], what)

    def test_infer_mode_has_no_backward_work(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = peer_rows(write(tmp, "s.yaml", SEED_SPEC.replace("    dims: 3", "    dims: 3\n    mode: infer")),
                             tmp, "--counts-only")
        for (_, variant, _), row in rows.items():
            self.assertEqual(row["macs"]["forward"], self.seed[("seed000", variant, "")]["macs"]["forward"])
            self.assertEqual(row["macs"]["backward_data"], 0)
            self.assertEqual(row["macs"]["backward_weight"], 0)

    def test_module_names_are_convbench_op_names(self):
        blocks = resolved_blocks(MIXED_SPEC)
        block = blocks[0]  # sub at the first sweep point
        names = {v["name"]: [n for n, _ in torch_peer.build_block(block, v).named_parameters()]
                 for v in block["variants"]}
        self.assertEqual(names["standard"], ["conv.weight", "norm.weight", "norm.bias",
                                             "shortcut.conv.weight", "shortcut.norm.weight",
                                             "shortcut.norm.bias"])
        self.assertEqual(names["subtracted"][:3], ["p.weight", "d.weight", "l.weight"])
        odd = blocks[4]
        bottleneck = torch_peer.build_block(odd, odd["variants"][0])
        self.assertEqual([n for n, _ in bottleneck.named_parameters()][:6],
                         ["reduce.conv.weight", "reduce.conv.bias", "reduce.norm.weight",
                          "reduce.norm.bias", "spatial.conv.weight", "spatial.conv.bias"])
        custom = torch_peer.build_block(odd, odd["variants"][1])
        self.assertEqual([n for n, _ in torch_peer.named_stat_buffers(custom)],
                         ["bn.running_mean", "bn.running_var"])


class DumpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.spec = write(cls.tmp.name, "mixed.yaml", MIXED_SPEC)
        cls.dir = os.path.join(cls.tmp.name, "dumps")
        run_peer([cls.spec, "--dump-tensors", cls.dir, "--dump-scale"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def load(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return json.load(f)

    @staticmethod
    def tensor(t):
        return torch.tensor(t["data"], dtype=torch.float64).reshape(t["shape"])

    def rebuild(self, dump):
        """The dumped variant rebuilt from the spec, loaded with the dumped parameters."""
        blocks = torch_peer.load_spec(self.spec, CONVBENCH)[1]
        block = next(b for b in blocks if b["name"] == dump["block"] and b["point_label"] == dump["point_label"])
        variant = next(v for v in block["variants"] if v["name"] == dump["variant"])
        scaled = torch_peer.dump_scaled(block)
        module = torch_peer.build_block(scaled, variant, dropout_seed=dump["dropout_seed"]).double()
        with torch.no_grad():
            for name, p in module.named_parameters():
                p.copy_(self.tensor(dump["params"][name]))
        return module.train()

    def test_one_file_per_train_row(self):
        files = sorted(os.listdir(self.dir))
        self.assertEqual(len(files), 4 * 5)
        self.assertIn("sub__subtracted__layout=channels_last,batch=3.json", files)

    def test_scaled_shapes(self):
        dump = self.load("odd__custom__layout=channels_first,batch=3.json")
        self.assertEqual(dump["input"]["shape"], [2, 4, 8, 8, 8])
        dump = self.load("sub__standard__layout=channels_last,batch=2.json")
        self.assertEqual(dump["input"]["shape"], [2, 8, 8, 8])
        self.assertEqual(dump["output"]["shape"], [2, 16, 8, 8])
        self.assertEqual(len(dump["input"]["data"]), 2 * 8 * 8 * 8)

    def test_gradients_match_finite_differences(self):
        # <y, dy> as a function of each parameter: its derivative is the dumped gradient. Dropout
        # masks are Philox constants and BN uses batch statistics, so the step is deterministic.
        for name in ("sub__subtracted__layout=channels_last,batch=2.json",
                     "odd__custom__layout=channels_first,batch=2.json",
                     "odd__bottleneck__layout=channels_last,batch=3.json"):
            dump = self.load(name)
            module = self.rebuild(dump)
            fmt = torch.channels_last if len(dump["input"]["shape"]) == 4 else torch.channels_last_3d
            x = self.tensor(dump["input"])
            if dump["layout"] == "channels_last":
                x = x.contiguous(memory_format=fmt)
                module = module.to(memory_format=fmt)
            dy = self.tensor(dump["grad_output"])
            with torch.no_grad():
                y = module(x)
            self.assertTrue(torch.allclose(y, self.tensor(dump["output"]), rtol=0, atol=1e-12), name)
            params = dict(module.named_parameters())
            rng = np.random.default_rng(1)
            for pname, grad in dump["param_grads"].items():
                g = self.tensor(grad).reshape(-1)
                for i in rng.choice(g.numel(), size=min(3, g.numel()), replace=False):
                    h = 1e-6
                    with torch.no_grad():
                        p = params[pname]
                        idx = np.unravel_index(int(i), tuple(p.shape))
                        old = p[idx].item()
                        p[idx] = old + h
                        up = (module(x) * dy).sum().item()
                        p[idx] = old - h
                        down = (module(x) * dy).sum().item()
                        p[idx] = old
                    fd = (up - down) / (2 * h)
                    self.assertAlmostEqual(fd, g[int(i)].item(), delta=1e-5 * max(1.0, abs(fd)),
                                           msg=f"{name} {pname}[{i}]")

    def test_batch_norm_running_statistics(self):
        # running = 0.9 * before + 0.1 * batch statistic (variance unbiased), as PyTorch.
        dump = self.load("sub__standard__layout=channels_first,batch=2.json")
        module = self.rebuild(dump)
        seen = {}
        module.shortcut.norm.register_forward_hook(lambda m, i, o: seen.setdefault("x", i[0].detach()))
        with torch.no_grad():
            module(self.tensor(dump["input"]))
        z = seen["x"].transpose(0, 1).reshape(16, -1)
        mean = self.tensor(dump["buffers_after"]["shortcut.norm.running_mean"])
        var = self.tensor(dump["buffers_after"]["shortcut.norm.running_var"])
        self.assertTrue(torch.allclose(mean, 0.1 * z.mean(1), atol=1e-12))
        self.assertTrue(torch.allclose(var, 0.9 + 0.1 * z.var(1, unbiased=True), atol=1e-12))
        self.assertEqual(dump["buffers_before"]["shortcut.norm.running_var"]["data"], [1.0] * 16)

    def test_dropout_mask_is_convbench_philox(self):
        spec = ("blocks:\n  - {name: drop, batch: 1, in_channels: 1, out_channels: 1, size: 8, kernel: 1,\n"
                "     bias: false, norm: none, act: none, dropout: 0.3, variants: [standard]}\n")
        with tempfile.TemporaryDirectory() as tmp:
            run_peer([write(tmp, "d.yaml", spec), "--dump-tensors", tmp])
            with open(os.path.join(tmp, "drop__standard__default.json")) as f:
                dump = json.load(f)
        w = dump["params"]["conv.weight"]["data"][0]
        for i, (x, y) in enumerate(zip(dump["input"]["data"], dump["output"]["data"])):
            expected = x * w / 0.7 if KEEP_BITS_P03_SEED5EED[i] == "1" else 0.0
            self.assertAlmostEqual(y, expected, delta=1e-12, msg=f"element {i}")


class MeasureTest(unittest.TestCase):
    def test_times_memory_and_statuses(self):
        spec = """\
defaults: {batch: 2, size: [12, 12], in_channels: 8, out_channels: 16, bias: false}
blocks:
  - {name: plain, variants: [standard, {kind: grouped, groups: 4}]}
  - {name: infer, mode: infer, variants: [standard]}
  - {name: half, dtype: float16, variants: [standard]}
"""
        with tempfile.TemporaryDirectory() as tmp:
            rows = peer_rows(write(tmp, "m.yaml", spec), tmp, "--min-time", "0.001", "--min-samples", "3",
                             "--timeout", "0.3", "--warmup", "1")
        for key in (("plain", "standard", ""), ("plain", "grouped", ""), ("infer", "standard", "")):
            row = rows[key]
            self.assertEqual(row["status"], "ok", key)
            phases = ("forward",) if key[0] == "infer" else ("forward", "backward", "step")
            for phase in phases:
                t = row["time_ms"][phase]
                self.assertEqual(t["samples"], len(t["raw_ms"]))
                self.assertTrue(t["samples"] >= 3 or t["stop"] == "timeout", (key, phase, t["samples"]))
                self.assertTrue(0 < t["min"] <= t["q1"] <= t["median"] <= t["q3"] <= t["max"], (key, phase))
            if key[0] == "infer":
                self.assertIsNone(row["time_ms"]["backward"])
                self.assertEqual(row["memory"]["saved_bytes"], 0)
        # conv saves its input (the block input, excluded) and weight (a parameter); BN saves its
        # input (N*C*P floats) and per-channel mean and inverse std; ReLU saves its output.
        n, c, p = 2, 16, 144
        memory = rows[("plain", "standard", "")]["memory"]
        self.assertEqual(memory["saved_bytes"], 4 * (2 * n * c * p + 2 * c))
        self.assertEqual(memory["saved_bytes_including_input"], 4 * (2 * n * c * p + 2 * c + n * 8 * p))
        self.assertNotIn("peak_bytes", memory)
        half = rows[("half", "standard", "")]
        if torch.__version__.startswith("1."):  # 1.13 has no CPU half conv: a status, not a crash
            self.assertEqual(half["status"], "unsupported")
            self.assertIn("Half", half["message"])
        else:
            self.assertIn(half["status"], ("ok", "unsupported"))
        self.assertEqual(rows[("half", "standard", "")]["params"], 16 * 8 * 9 + 32)


class TimingSpanTest(unittest.TestCase):
    """Where a CUDA timing of the peer starts (Runner.timed): at the first leaf module's call in
    forward and step, when autograd reaches the output in backward, as convbench's first launch.
    The arrangements are checked on the CPU: each fires once, at that point, and leaves nothing
    registered behind."""

    def runner(self):
        from peer.measure import Runner
        spec = ("blocks:\n  - {name: t, batch: 2, in_channels: 4, out_channels: 8, size: 6, norm: batch, "
                "act: relu, variants: [standard, separable]}\n")
        block = resolved_blocks(spec)[0]
        return Runner(block, block["variants"][1], torch.device("cpu"))

    def test_forward_starts_at_the_first_leaf_module_once(self):
        runner = self.runner()
        hooks = torch.nn.modules.module._global_forward_pre_hooks
        before = len(hooks)
        fired, leaves = [], []
        first_leaf = next(m for m in runner.module.modules() if next(m.children(), None) is None)
        watch = first_leaf.register_forward_pre_hook(lambda m, a: leaves.append(len(fired)))
        disarm = runner.at_first_leaf_module(lambda: fired.append(True))
        runner.forward()
        disarm()
        watch.remove()
        self.assertEqual(fired, [True])  # once, though the block has several leaf modules
        self.assertEqual(leaves, [1])    # before the first leaf module ran
        self.assertEqual(len(hooks), before)

    def test_backward_starts_when_autograd_reaches_the_output(self):
        runner = self.runner()
        runner.clear_grads()
        y = runner.forward()
        order = []
        weight = next(p for p in runner.module.parameters())
        weight.register_hook(lambda g: order.append("first parameter gradient"))
        handle = y.register_hook(lambda g: order.append("start"))
        y.backward(runner.dy)
        handle.remove()
        self.assertEqual(order[0], "start")
        # Runner.timed on the CPU ignores the arrangement: the host clock around the call.
        self.assertGreater(runner.sample_backward(), 0.0)
        self.assertEqual(runner.time_span, "first_launch")


class AnalyzeAgreementTest(unittest.TestCase):
    def compare_with_analyze(self, spec):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "analyze.json")
            proc = subprocess.run([CONVBENCH, "analyze", spec, "--json", out],
                                  capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, f"convbench analyze {spec}:\n{proc.stderr}")
            with open(out) as f:
                ours = {(r["block"], r["variant"], r["point_label"]): r for r in json.load(f)["results"]}
            theirs = peer_rows(spec, tmp, "--counts-only")
        self.assertEqual(list(ours), list(theirs))  # same rows in the same order
        for key, row in ours.items():
            peer = theirs[key]
            self.assertEqual(peer["status"], "ok", (key, peer["message"]))
            for field in ("kind", "params", "buffers", "output_shape"):
                self.assertEqual(row[field], peer[field], (key, field))
            # PyTorch's own count of the module's buffers: the running statistics plus one
            # num_batches_tracked per batch norm, which convbench counts apart (buffer_counters).
            self.assertEqual(row.get("buffer_counters", 0), peer["buffer_counters"], (key, "buffer_counters"))
            for direction in ("forward", "backward_data", "backward_weight"):
                self.assertEqual(row["macs"][direction], peer["macs"][direction], (key, direction))
            # Memory policy recompute: the convs run again in backward, which the peer counts with
            # forward hooks firing inside torch.utils.checkpoint's recomputation.
            self.assertEqual(row["macs"].get("recompute", 0), peer["macs"].get("recompute", 0), (key, "recompute"))

    def setUp(self):
        self.assertTrue(CONVBENCH and os.access(CONVBENCH, os.X_OK), f"convbench binary: {CONVBENCH}")

    def test_every_config_matches_convbench_analyze(self):
        configs = sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml"))
                         + glob.glob(os.path.join(ROOT, "configs", "*.json")))
        self.assertTrue(configs, "no configs in configs/")
        for config in configs:
            # The peer builds blocks; networks (configs/vbnet.yaml, resnet50.yaml) are checked
            # against their own PyTorch definitions by tests/network_peer_test.py.
            with open(config) as f:
                if "networks" in (yaml.safe_load(f) or {}):
                    print(f"skipping {os.path.basename(config)}: a network spec (tests/network_peer_test.py)")
                    continue
            with self.subTest(config=os.path.basename(config)):
                self.compare_with_analyze(config)

    def test_custom_ops_and_sweeps_match_convbench_analyze(self):
        # Transposed and grouped convs, pools, upsampling, residual shortcuts, dropout, sweeps.
        with tempfile.TemporaryDirectory() as tmp:
            self.compare_with_analyze(write(tmp, "mixed.yaml", MIXED_SPEC))
            infer = SEED_SPEC.replace("    dims: 3", "    dims: 3\n    mode: infer")
            self.compare_with_analyze(write(tmp, "infer.yaml", infer))

    def test_custom_op_defaults_match_convbench_analyze(self):
        # Every optional field of a custom op left out: the peer builds from the values convbench
        # resolved (its own parser once took a pool's kernel from the block: 3, not 2).
        spec = """
name: defaults
blocks:
  - name: all-defaults
    batch: 2
    in_channels: 8
    out_channels: 8
    size: 12
    kernel: 3
    bias: false
    variants:
      - kind: custom
        name: defaults
        ops:
          - {op: conv, name: c}
          - {op: group_norm, name: g, norm_groups: 4}
          - {op: leaky_relu, name: l}
          - {op: max_pool, name: mp}
          - {op: avg_pool, name: ap}
          - {op: conv_transpose, name: t}
          - {op: conv, name: dw, groups: depthwise}
          - {op: dropout, name: d}
          - {op: upsample, name: u}
          - {op: sigmoid, name: s}
"""
        with tempfile.TemporaryDirectory() as tmp:
            self.compare_with_analyze(write(tmp, "defaults.yaml", spec))

    def test_sigmoid_matches_pytorch_numerically(self):
        # The op added through CONTRIBUTING.md's recipe: PyTorch's nn.Sigmoid dumps one training
        # step (float64) and `convbench verify` replays it on the reference and cpu backends.
        spec = """
name: sigmoid
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: gate
    batch: 2
    in_channels: 4
    out_channels: 8
    size: 6
    variants:
      - kind: custom
        name: sigmoid-branch
        ops:
          - {op: conv, name: c, out_channels: 8}
          - {op: batch_norm, name: bn}
          - {op: sigmoid, name: s}
          - {op: conv, name: o, inputs: c, kernel: 1}
          - {op: add, name: out, inputs: [s, o]}
  - name: volume
    dims: 3
    batch: 1
    in_channels: 2
    out_channels: 2
    size: 4
    variants:
      - kind: custom
        ops:
          - {op: sigmoid, name: s}
          - {op: conv, name: out, kernel: 3}
"""
        with tempfile.TemporaryDirectory() as tmp:
            # one dump per train row: 2 blocks x 2 layouts
            self.dump_and_verify(tmp, write(tmp, "sigmoid.yaml", spec), expected_dumps=4)

    def test_efficient_block_activations_match_pytorch(self):
        # nn.SiLU, nn.Hardswish, nn.Hardsigmoid, nn.ReLU6 and nn.GELU (both forms), as custom ops
        # and as a block's act: the same counts, the same saved bytes (each keeps its input, as
        # PyTorch's autograd does), and one float64 training step replayed by verify. The inputs
        # are scaled up (x + x, three times) so that every piece of the hard activations is crossed.
        spec = """
name: activations
sweep:
  layout: [channels_first, channels_last]
defaults: {batch: 2, in_channels: 4, out_channels: 8, size: 6}
blocks:
  - name: ops
    variants:
      - kind: custom
        name: mbconv-like
        ops:
          - {op: conv, name: c, out_channels: 8}
          - {op: add, name: x2, inputs: [c, c]}
          - {op: add, name: x4, inputs: [x2, x2]}
          - {op: add, name: x8, inputs: [x4, x4]}
          - {op: silu, name: silu, inputs: x8}
          - {op: hardswish, name: hswish, inputs: x8}
          - {op: hardsigmoid, name: hsigmoid, inputs: x8}
          - {op: relu6, name: relu6, inputs: x8}
          - {op: gelu, name: gelu, inputs: x8}
          - {op: gelu, name: gelu_tanh, inputs: x8, approximate: tanh}
          - {op: add, name: m1, inputs: [silu, hswish]}
          - {op: add, name: m2, inputs: [hsigmoid, relu6]}
          - {op: add, name: m3, inputs: [gelu, gelu_tanh]}
          - {op: add, name: s1, inputs: [m1, m2]}
          - {op: add, name: out, inputs: [s1, m3]}
  - name: relu6-block
    act: relu6
    variants: [standard, {kind: bottleneck, ratio: 2}]
  - name: silu-block
    act: silu
    variants: [{kind: separable}]
  - name: hardswish-block
    act: hardswish
    variants: [standard]
  - name: gelu-block
    act: gelu
    norm: group
    norm_groups: 2
    variants: [standard]
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "activations.yaml", spec)
            self.compare_with_analyze(path)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 12)

    def dump_and_verify(self, tmp, path, expected_dumps):
        """The peer agrees with analyze on the spec's counts, dumps one float64 training step per
        train row, and `convbench verify` replays every dump on the reference and cpu backends."""
        self.compare_with_analyze(path)
        dumps = os.path.join(tmp, "dumps")
        os.mkdir(dumps)
        proc = run_peer([path, "--dump-tensors", dumps, "--counts-only", "--json", os.path.join(tmp, "p.json")])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(os.listdir(dumps)), expected_dumps)
        for device in ("reference", "cpu"):
            run = subprocess.run([CONVBENCH, "verify", path, dumps, "--device", device],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn(" 0 failed", run.stdout)
            self.assertNotIn("missing", run.stdout)

    def saved_bytes_of_both(self, spec, tmp):
        """{row key: (analyze's predicted saved bytes, the bytes the peer's autograd saves)}."""
        out = os.path.join(tmp, "analyze-memory.json")
        proc = subprocess.run([CONVBENCH, "analyze", spec, "--json", out], capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            ours = {(r["block"], r["variant"], r["point_label"]): r for r in json.load(f)["results"]}
        theirs = peer_rows(spec, tmp, "--min-time", "0.001", "--min-samples", "1", "--timeout", "0.2",
                           "--warmup", "0")
        return {key: (row["memory"]["predicted"]["saved_bytes"], theirs[key]["memory"]["saved_bytes"])
                for key, row in ours.items()}

    def test_mul_slice_space_to_depth_and_frozen_conv_match_pytorch(self):
        # Issue 19's ops through the peer: squeeze-and-excitation's x * s (a per-channel operand
        # broadcast over space) and a same-shape mul; a channel split into slices; TResNet's
        # space_to_depth stem in both channel orders; depth_to_space (pixel_shuffle) in both
        # orders, 2-D and 3-D; the anti-alias blur as a frozen depthwise conv.
        # The peer agrees with analyze on the counts, PyTorch's float64 step replays on the
        # reference and cpu backends, and the saved bytes agree (the one slice rule below).
        spec = """
name: ops-b
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: se
    batch: 2
    in_channels: 4
    out_channels: 8
    size: 6
    variants:
      - kind: custom
        name: squeeze-excite
        ops:
          - {op: conv, name: c, out_channels: 8}
          - {op: avg_pool, name: squeeze, kernel: 6}
          - {op: conv, name: reduce, kernel: 1, out_channels: 2}
          - {op: relu, name: r}
          - {op: conv, name: expand, kernel: 1, out_channels: 8}
          - {op: sigmoid, name: gate}
          - {op: mul, name: scaled, inputs: [c, gate]}
          - {op: conv, name: o, inputs: c, kernel: 1}
          - {op: mul, name: out, inputs: [scaled, o]}
  - name: split
    batch: 2
    in_channels: 6
    out_channels: 6
    size: 4
    variants:
      - kind: custom
        name: channel-split
        ops:
          - {op: conv, name: c, kernel: 1}
          - {op: relu, name: r}
          - {op: slice, name: a, inputs: r, length: 2}
          - {op: slice, name: b, inputs: r, start: 2, length: 4}
          - {op: conv, name: ca, inputs: a, kernel: 3, out_channels: 2}
          - {op: concat, name: out, inputs: [ca, b]}
  - name: stem
    batch: 2
    in_channels: 3
    out_channels: 8
    size: 8
    variants:
      - kind: custom
        name: s2d-channel-major
        ops:
          - {op: space_to_depth, name: s}
          - {op: conv, name: out, out_channels: 8, kernel: 3}
      - kind: custom
        name: s2d-block-major
        ops:
          - {op: conv, name: c, kernel: 1, out_channels: 4}
          - {op: space_to_depth, name: s, order: block_major}
          - {op: conv, name: out, out_channels: 8, kernel: 1}
      - kind: custom
        name: pixel-shuffle
        ops:
          - {op: conv, name: c, kernel: 1, out_channels: 12}
          - {op: depth_to_space, name: d}
          - {op: space_to_depth, name: s, order: block_major}
          - {op: depth_to_space, name: d2, order: block_major}
          - {op: conv, name: out, out_channels: 8, kernel: 3, stride: 2}
  - name: volume
    dims: 3
    batch: 1
    in_channels: 2
    out_channels: 16
    size: 4
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c, kernel: 1}
          - {op: avg_pool, name: squeeze, kernel: 4}
          - {op: mul, name: m, inputs: [c, squeeze]}
          - {op: space_to_depth, name: s, order: block_major}
          - {op: conv, name: out, kernel: 1}
      - kind: custom
        name: shuffle-3d
        ops:
          - {op: conv, name: c, kernel: 1, out_channels: 16}
          - {op: depth_to_space, name: d}
          - {op: conv, name: out, kernel: 2, stride: 2, out_channels: 16}
  - name: anti-alias
    batch: 2
    in_channels: 4
    out_channels: 4
    size: 8
    variants:
      - kind: custom
        name: blur-after
        ops:
          - {op: conv, name: c, kernel: 3}
          - {op: conv, name: blur, kernel: 3, stride: 2, groups: depthwise, bias: false, frozen: true,
             init: blur}
      - kind: custom
        name: blur-first
        ops:
          - {op: conv, name: blur, kernel: 3, stride: 2, groups: depthwise, frozen: true, init: blur}
          - {op: conv, name: out, kernel: 3}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "ops-b.yaml", spec)
            # one dump per train row: 9 variants x 2 layouts
            self.dump_and_verify(tmp, path, expected_dumps=18)
            saved = self.saved_bytes_of_both(path, tmp)
        self.assertEqual(len(saved), 18)
        for key, (ours, peer) in saved.items():
            expected = peer
            if key[0] == "split":
                # convbench copies a slice; PyTorch's x[:, 0:2] is a view. The conv `ca` saves its
                # input: convbench the 2-channel copy (N x 2 x 16 floats), PyTorch the view, whose
                # storage is relu's output, which relu saves anyway (counted once).
                expected = peer + 4 * 2 * 2 * 16
            self.assertEqual(ours, expected, key)

    def test_boundary_layout_conversion_matches_pytorch(self):
        # layout_conversion: boundary: PyTorch's block takes a channels-first input, converts it
        # with x.contiguous(memory_format=torch.channels_last), runs channels-last and converts its
        # output back; `convbench verify` replays that step (float64) with convbench's two
        # convert_layout ops, and the counts agree with analyze.
        spec = """
name: boundary
sweep:
  layout_conversion: [none, boundary]
blocks:
  - name: unit
    batch: 2
    in_channels: 8
    out_channels: 8
    size: 6
    layout: channels_last
    residual: true
    variants:
      - {kind: bottleneck, ratio: 2}
      - kind: custom
        name: branches
        ops:
          - {op: conv, name: a, kernel: 1}
          - {op: conv, name: b, inputs: input, groups: depthwise}
          - {op: concat, name: out, inputs: [a, b]}
          - {op: conv, name: o, inputs: out, kernel: 1, out_channels: 8}
  - name: volume
    dims: 3
    batch: 1
    in_channels: 2
    out_channels: 4
    size: 4
    layout: channels_last
    variants: [standard]
"""
        with tempfile.TemporaryDirectory() as tmp:
            # unit: 2 variants x 2 points; volume: 2 points
            self.dump_and_verify(tmp, write(tmp, "boundary.yaml", spec), expected_dumps=6)

    def compare_saved_bytes(self, spec, tmp):
        """What autograd saves in one training forward: analyze's prediction against the peer's
        saved-tensor accounting (both without parameters and the block input)."""
        out = os.path.join(tmp, "analyze-memory.json")
        proc = subprocess.run([CONVBENCH, "analyze", spec, "--json", out], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            ours = {(r["block"], r["variant"], r["point_label"]): r for r in json.load(f)["results"]}
        theirs = peer_rows(spec, tmp, "--min-time", "0.001", "--min-samples", "1", "--warmup", "0", "--timeout", "0.3")
        self.assertEqual(list(ours), list(theirs))
        for key, row in ours.items():
            self.assertEqual(theirs[key]["status"], "ok", (key, theirs[key]["message"]))
            self.assertEqual(row["memory"]["predicted"]["saved_bytes"], theirs[key]["memory"]["saved_bytes"], key)

    def replay_with_verify(self, path, tmp, rows):
        """PyTorch's step dumped (float64, convbench's Philox masks) and replayed by `convbench
        verify` on the reference and cpu backends."""
        dumps = os.path.join(tmp, "dumps")
        os.mkdir(dumps)
        proc = run_peer([path, "--dump-tensors", dumps, "--counts-only", "--json", os.path.join(tmp, "p.json")])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(os.listdir(dumps)), rows)
        for device in ("reference", "cpu"):
            run = subprocess.run([CONVBENCH, "verify", path, dumps, "--device", device],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn(" 0 failed", run.stdout)
            self.assertNotIn("missing", run.stdout)

    def test_channel_dropout_matches_pytorch(self):
        # nn.Dropout2d / nn.Dropout3d: counts, the saved noise (N x C values, as PyTorch's feature
        # dropout keeps), and one training step replayed with the same Philox channel masks.
        spec = """
name: channel-dropout
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: planes
    batch: 3
    in_channels: 4
    out_channels: 6
    size: 5
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c, out_channels: 6}
          - {op: channel_dropout, name: d, p: 0.3}
          - {op: conv, name: out, kernel: 1}
  - name: volume
    dims: 3
    batch: 2
    in_channels: 3
    out_channels: 3
    size: 3
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c}
          - {op: channel_dropout, name: d}
          - {op: conv, name: out, kernel: 1}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "channel_dropout.yaml", spec)
            self.compare_with_analyze(path)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 4)

    def test_drop_path_and_norm_constants_match_pytorch(self):
        # torchvision's StochasticDepth(p, "row") (drop_path: the saved noise is N values) and batch
        # and group norms with eps and momentum other than PyTorch's defaults (MobileNetV3's 1e-3
        # and 0.01): counts, saved bytes, and one training step replayed with the same Philox
        # sample masks, the running statistics updated by the given momentum.
        spec = """
name: drop-path
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: planes
    batch: 6
    in_channels: 4
    out_channels: 6
    size: 5
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c, out_channels: 6}
          - {op: batch_norm, name: bn, eps: 0.001, momentum: 0.01}
          - {op: drop_path, name: d, p: 0.4}
          - {op: add, name: sum, inputs: [d, c]}
          - {op: group_norm, name: gn, norm_groups: 3, eps: 0.001}
          - {op: conv, name: out, kernel: 1}
  - name: volume
    dims: 3
    batch: 4
    in_channels: 3
    out_channels: 3
    size: 3
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c}
          - {op: drop_path, name: d, p: 0.5}
          - {op: conv, name: out, kernel: 1}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "drop_path.yaml", spec)
            self.compare_with_analyze(path)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 4)

    def test_convnext_and_shufflenet_ops_match_pytorch(self):
        # ConvNeXt's block (layer norm over channels with eps 1e-6, GELU, layer scale, drop path)
        # and ShuffleNetV2's channel shuffle, in both layouts and 3-D: counts, saved bytes (layer
        # norm keeps its input and a float32 mean and rstd per position, layer scale its input, the
        # shuffle nothing), and one training step replayed by verify.
        spec = """
name: convnext-ops
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: cnblock
    batch: 3
    in_channels: 8
    out_channels: 8
    size: 6
    variants:
      - kind: custom
        ops:
          - {op: conv, name: dwconv, kernel: 7, padding: 3, groups: depthwise, bias: true}
          - {op: layer_norm, name: norm, eps: 1.0e-6}
          - {op: conv, name: pwconv1, out_channels: 32, kernel: 1, padding: 0, bias: true}
          - {op: gelu, name: act}
          - {op: conv, name: pwconv2, out_channels: 8, kernel: 1, padding: 0, bias: true}
          - {op: layer_scale, name: layer_scale}
          - {op: drop_path, name: drop, p: 0.3}
          - {op: add, name: sum, inputs: [drop, input]}
          - {op: channel_shuffle, name: shuffle, groups: 2}
          - {op: conv, name: out, kernel: 1, padding: 0}
  - name: volume
    dims: 3
    batch: 2
    in_channels: 6
    out_channels: 6
    size: 3
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c}
          - {op: layer_norm, name: norm}
          - {op: layer_scale, name: scale}
          - {op: channel_shuffle, name: shuffle, groups: 3}
          - {op: conv, name: out, kernel: 1}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "convnext_ops.yaml", spec)
            self.compare_with_analyze(path)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 4)

    def test_linear_upsampling_matches_pytorch(self):
        # upsample mode linear (nn.Upsample bilinear / trilinear) by a scale and to a size, with and
        # without align_corners: counts, nothing saved, one step replayed by verify.
        spec = """
name: linear-upsample
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: plane
    batch: 2
    in_channels: 3
    out_channels: 4
    size: [5, 4]
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c, out_channels: 4}
          - {op: upsample, name: up, mode: linear}
          - {op: upsample, name: size, mode: linear, size: [7, 3], align_corners: true}
          - {op: conv, name: out, kernel: 1}
  - name: volume
    dims: 3
    batch: 1
    in_channels: 2
    out_channels: 2
    size: [2, 3, 4]
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c}
          - {op: upsample, name: up, mode: linear, size: [3, 5, 2]}
          - {op: upsample, name: corners, mode: linear, scale: 2, align_corners: true}
          - {op: conv, name: out, kernel: 1}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "upsample.yaml", spec)
            self.compare_with_analyze(path)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 4)

    def test_classifier_head_matches_pytorch(self):
        # global_avg_pool (nn.AdaptiveAvgPool2d/3d(1)) and linear (nn.Linear on the flattened
        # channels): parameters, MACs, saved bytes and one step replayed by verify. The pool reads
        # a relu's output, which is saved anyway (PyTorch 1.13's mean keeps its input alive).
        spec = """
name: head
sweep:
  layout: [channels_first, channels_last]
blocks:
  - name: plane
    batch: 3
    in_channels: 4
    out_channels: 5
    size: 6
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c, out_channels: 8}
          - {op: relu, name: r}
          - {op: global_avg_pool, name: gap}
          - {op: linear, name: fc, out_features: 6}
          - {op: linear, name: out, out_features: 5, bias: false}
  - name: volume
    dims: 3
    batch: 2
    in_channels: 3
    out_channels: 4
    size: 3
    variants:
      - kind: custom
        ops:
          - {op: conv, name: c}
          - {op: relu, name: r}
          - {op: global_avg_pool, name: gap}
          - {op: linear, name: fc, out_features: 4}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "head.yaml", spec)
            self.compare_with_analyze(path)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 4)

    def test_memory_policies_match_pytorch(self):
        # recompute = torch.utils.checkpoint(use_reentrant=False) over the block, inplace_act =
        # nn.ReLU/LeakyReLU(inplace=True) and an in-place sigmoid, inplace_abn = the peer's own
        # InPlaceABNFunction: the same counts (the recomputed convs included: a block ending in a
        # conv, which saves only its input, stops its recomputation before it, as PyTorch's early
        # stop does), the same saved bytes, and one training step replayed by verify.
        spec = """
name: policies
sweep:
  layout: [channels_first, channels_last]
defaults: {batch: 2, in_channels: 4, out_channels: 4, size: 6}
blocks:
  - name: relu
    residual: true
    variants:
      - standard
      - {kind: standard, name: recompute, memory_policy: recompute}
      - {kind: standard, name: inplace-act, memory_policy: inplace_act}
  - name: leaky
    act: leaky_relu
    negative_slope: 0.1
    variants:
      - {kind: bottleneck, ratio: 2}
      - {kind: bottleneck, ratio: 2, name: recompute, memory_policy: recompute}
      - {kind: bottleneck, ratio: 2, name: inplace-act, memory_policy: inplace_act}
      - {kind: bottleneck, ratio: 2, name: inplace-abn, memory_policy: inplace_abn}
  - name: convs
    norm: none
    act: none
    memory_policy: recompute
    variants:
      - {kind: bottleneck, ratio: 2}
  - name: custom
    variants:
      - kind: custom
        name: gate
        memory_policy: inplace_act
        ops:
          - {op: conv, name: c}
          - {op: batch_norm, name: bn}
          - {op: sigmoid, name: s}
          - {op: conv, name: o, inputs: c, kernel: 1}
          - {op: mul, name: out, inputs: [s, o]}
      - kind: custom
        name: fused
        ops:
          - {op: conv, name: c}
          - {op: batch_norm_act, name: abn, negative_slope: 0.2}
          - {op: conv, name: out, kernel: 1}
"""
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "policies.yaml", spec)
            self.compare_with_analyze(path)
            out = os.path.join(tmp, "a.json")
            subprocess.run([CONVBENCH, "analyze", path, "--json", out], check=True, capture_output=True)
            with open(out) as f:
                convs = [r for r in json.load(f)["results"] if r["block"] == "convs"][0]
            # conv 1x1, conv k, conv 1x1: the last one is not run again
            self.assertEqual(convs["macs"]["recompute"], convs["macs"]["forward"] - 2 * 4 * 2 * 36)
            self.compare_saved_bytes(path, tmp)
            self.replay_with_verify(path, tmp, 20)

    def test_inplace_abn_function_gradcheck(self):
        # The peer's InPlaceABNFunction itself: torch.autograd.gradcheck in float64 (finite
        # differences), and equal to F.batch_norm then F.leaky_relu, in both modes, in place.
        from peer.modules import InPlaceABNFunction
        torch.manual_seed(3)
        for shape in ((3, 4, 5, 6), (2, 3, 2, 3, 4)):
            c = shape[1]
            x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
            sign = torch.tensor([1.0, -1.0] * c, dtype=torch.float64)[:c]
            w = ((torch.rand(c, dtype=torch.float64) * 0.5 + 0.5) * sign).requires_grad_()
            b = torch.randn(c, dtype=torch.float64, requires_grad=True)
            for training in (True, False):
                rm, rv = torch.randn(c, dtype=torch.float64), torch.rand(c, dtype=torch.float64) + 0.5

                def fused(x, w, b):
                    return InPlaceABNFunction.apply(x.clone(), w, b, rm.clone(), rv.clone(), training, 0.1, 1e-5,
                                                    0.1, True)

                self.assertTrue(torch.autograd.gradcheck(fused, (x, w, b)))
                plain = torch.nn.functional.leaky_relu(
                    torch.nn.functional.batch_norm(x, rm.clone(), rv.clone(), w, b, training, 0.1, 1e-5), 0.1)
                y = fused(x, w, b)
                dy = torch.randn_like(y)
                for got, want in zip((y,) + torch.autograd.grad(y, (x, w, b), dy),
                                     (plain,) + torch.autograd.grad(plain, (x, w, b), dy)):
                    self.assertLess((got - want).abs().max().item(), 1e-10)

    def test_folded_variants_match_pytorch(self):
        # Folding (configs/README.md "Folded convolutions"), folded by the peer on its own (peer/fold.py: each
        # folded conv's kernel probed from the source's ops with impulses): its folded modules
        # compute what their sources compute (float64, and in training the same gradients), their
        # counts equal analyze's, `convbench verify` replays the training steps of the online folds
        # (the peer's probed kernel against convbench's composed one), and both keep the same
        # bytes for backward (the input and the kernel; the peer recomputes its probe under
        # torch.utils.checkpoint as convbench recomputes its fold registers).
        spec = """
name: fold
defaults: {batch: 2, size: 9, bias: false, norm: none, act: none, in_channels: 4, out_channels: 6}
blocks:
  - name: sub-train
    variants:
      - &sub
        kind: custom
        name: subtracted
        output: x
        ops:
          - {op: conv, name: p, inputs: input, out_channels: 3, kernel: 1, stride: 2, padding: 0}
          - {op: conv, name: depth, inputs: p, groups: depthwise}
          - {op: sub, name: d, inputs: [depth, p]}
          - {op: conv, name: low_pass, inputs: p, out_channels: 3}
          - {op: concat, name: x, inputs: [d, low_pass]}
      - {kind: folded, of: subtracted}
  - name: sub-infer
    mode: infer
    variants: [*sub, {kind: folded, of: subtracted}]
  - name: repvgg-infer
    mode: infer
    out_channels: 4
    norm: batch
    variants:
      - kind: custom
        name: repvgg
        ops:
          - {op: conv, name: dense.conv, inputs: input, kernel: 3}
          - {op: batch_norm, name: dense.bn}
          - {op: conv, name: pointwise.conv, inputs: input, kernel: 1, padding: 0}
          - {op: batch_norm, name: pointwise.bn}
          - {op: batch_norm, name: identity, inputs: input}
          - {op: add, name: sum, inputs: [dense.bn, pointwise.bn]}
          - {op: add, name: sum2, inputs: [sum, identity]}
          - {op: relu, name: act}
      - {kind: folded, of: repvgg}
  - name: repvgg-kind-infer
    mode: infer
    out_channels: 4
    norm: batch
    act: relu
    variants: [repvgg, {kind: folded, of: repvgg}]
  - name: branches-train
    in_channels: 6
    norm: batch
    act: relu
    variants: [{kind: branches, name: loop, count: 3}, {kind: folded, of: loop}]
"""
        from peer.io import load_spec
        from peer.modules import build_block, fold_block, input_shape
        with tempfile.TemporaryDirectory() as tmp:
            path = write(tmp, "fold.yaml", spec)
            self.dump_and_verify(tmp, path, expected_dumps=4)  # the train rows of sub-train, branches-train
            for key, (ours, theirs) in self.saved_bytes_of_both(path, tmp).items():
                if key[1].startswith(("online-", "folded-")):
                    self.assertEqual(ours, theirs, key)
            _, blocks, _ = load_spec(path, CONVBENCH)
        torch.manual_seed(3)
        folded_rows = 0
        for block in blocks:
            for variant in block["variants"]:
                if variant["kind"] != "folded":
                    continue
                folded_rows += 1
                train = block["mode"] == "train"
                source_spec = next(v for v in block["variants"] if v["name"] == variant["of"])
                source = build_block(block, source_spec).double()
                # Random weights and BN statistics, so that no fold is checked on PyTorch's defaults.
                with torch.no_grad():
                    for name, t in list(source.named_parameters()) + list(source.named_buffers()):
                        if t.is_floating_point():
                            t.copy_(torch.rand_like(t) + 0.5 if name.endswith("running_var") else torch.randn_like(t))
                previous = torch.get_default_dtype()
                torch.set_default_dtype(torch.float64)  # a once-fold's conv holds its probed kernel unrounded
                try:
                    module = fold_block(block, variant, source).double()
                finally:
                    torch.set_default_dtype(previous)
                module.train(train)
                source.train(train)
                x = torch.randn(input_shape(block), dtype=torch.float64)
                with torch.set_grad_enabled(train):
                    y, y0 = module(x), source(x)
                error = float((y - y0).abs().max().detach())
                self.assertLess(error, 1e-10 * float(y0.abs().max().detach()), variant["name"])
                if train:  # online: the folded module trains the source's own weights
                    dy = torch.randn_like(y)
                    names = [n for n, _ in module.named_parameters()]
                    self.assertEqual(sorted(names), sorted(n for n, _ in source.named_parameters()))
                    grads = torch.autograd.grad(y, [p for _, p in module.named_parameters()], dy)
                    grads0 = dict(zip([n for n, _ in source.named_parameters()],
                                      torch.autograd.grad(y0, list(source.parameters()), dy)))
                    for name, g in zip(names, grads):
                        g0 = grads0[name]
                        self.assertLess(float((g - g0).abs().max()), 1e-10 * (1 + float(g0.abs().max())), name)
        self.assertEqual(folded_rows, 5)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print("usage: torch_peer_test.py PATH/TO/convbench [unittest options]", file=sys.stderr)
        sys.exit(2)
    CONVBENCH = sys.argv.pop(1)
    unittest.main()
