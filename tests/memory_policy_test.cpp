// Memory policies (configs/README.md "Memory policies") on the executor and the memory model: a transformed
// graph's gradients equal its plain graph's (the policy changes what is kept, never what is
// computed), the allocator's measured statistics equal the model's prediction byte for byte on
// the reference and cpu backends, and each policy's own rule holds (what recompute keeps and runs
// again, which activations run in place).
#include <gtest/gtest.h>

#include "memory_expectations.hpp"

#include <filesystem>
#include <map>

#include "cli_harness.hpp"
#include "results/json_results.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/memory_model.hpp"
#include "analysis/recompute_plan.hpp"
#include "analysis/variant_analysis.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/reference/reference_backend.hpp"
#include "graph/graph_outline.hpp"
#include "measure/variant_runner.hpp"
#include "ops/graph_builder.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "shipped_configs.hpp"
#include "spec/spec_loader.hpp"
#include "test_blocks.hpp"
#include "variants/graph_hash.hpp"
#include "variants/memory_policy.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::small_block;
using testing::variant;

VariantSpec with_policy(VariantSpec v, MemoryPolicy p) {
  MemoryPolicyChoice c;
  c.policy = p;
  c.key_path = v.key_path + ".memory_policy";
  v.memory_policy = c;
  v.name += "-" + std::string(to_string(p));
  return v;
}

// Blocks in float64 that exercise every path: a chain (standard, bottleneck, separable), a
// residual shortcut that reads the block input inside the segment, dropout (its mask must be drawn
// again identically), leaky ReLU, group norm, channels-last.
std::vector<std::pair<BlockSpec, VariantSpec>> policy_cases() {
  std::vector<std::pair<BlockSpec, VariantSpec>> cases;
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    BlockSpec b = small_block(2, 4, 8, 6);
    b.dtype = DType::float64;
    b.layout = layout;
    VariantSpec bottleneck = variant("bottleneck");
    bottleneck.kind_parameters = BottleneckParameters{.ratio = 2};
    for (const VariantSpec& v : {variant("standard"), bottleneck, variant("separable")}) cases.emplace_back(b, v);
    BlockSpec residual = b;
    residual.out_channels = residual.in_channels;
    residual.residual = true;
    residual.dropout = 0.25;
    residual.act = ActKind::leaky_relu;
    cases.emplace_back(residual, bottleneck);
    BlockSpec grouped = b;
    grouped.norm = NormKind::group;
    grouped.norm_groups = 2;
    grouped.act = ActKind::leaky_relu;
    grouped.stride = {2, 2};
    grouped.residual = true;
    cases.emplace_back(grouped, variant("standard"));
  }
  BlockSpec three = small_block(3, 2, 4, 4);
  three.dtype = DType::float64;
  three.dropout = 0.5;
  cases.emplace_back(three, variant("standard"));
  return cases;
}

struct StepResult {
  std::vector<std::vector<double>> grads;
  std::vector<double> output;
};

StepResult run_step(Backend& backend, const Graph& g) {
  Executor ex(g, backend, true);
  // One mask seed for every dropout op: inplace_abn removes ops, which renumbers the ones after
  // (each op's own seed is seed + its index), and the graphs compared must draw the same masks.
  ex.set_dropout_seed(0x5eed, true);
  ModelState s = ex.init_state(7);
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  fill_uniform(backend, x, 11);
  Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
  fill_uniform(backend, dy, 13);
  StepResult r;
  Tensor y = ex.forward(s, x);
  r.output = download(backend, y);
  ex.backward(s, dy);
  for (const Tensor& t : s.grads) r.grads.push_back(download(backend, t));
  return r;
}

void expect_same_step(const StepResult& a, const StepResult& b, double tolerance) {
  ASSERT_EQ(a.output.size(), b.output.size());
  for (size_t i = 0; i < a.output.size(); ++i) ASSERT_NEAR(a.output[i], b.output[i], tolerance) << "output " << i;
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t p = 0; p < a.grads.size(); ++p)
    for (size_t i = 0; i < a.grads[p].size(); ++i)
      ASSERT_NEAR(a.grads[p][i], b.grads[p][i], tolerance * std::max(1.0, std::fabs(a.grads[p][i])))
          << "param " << p << " element " << i;
}

// ---- recompute ---------------------------------------------------------------------------------

TEST(Recompute, GradientsEqualThePlainBlocks) {
  for (const auto& [block, v] : policy_cases()) {
    SCOPED_TRACE(v.name + (block.residual ? " residual" : "") + (block.dropout > 0 ? " dropout" : "") + " " +
                 std::string(to_string(block.layout)));
    ReferenceBackend a, b;
    const Graph plain = build_variant_graph(block, v);
    const Graph checkpointed = build_variant_graph(block, with_policy(v, MemoryPolicy::recompute));
    ASSERT_EQ(checkpointed.segments.size(), 1u);
    // The same arithmetic in the same order: equal to the last bit, dropout masks included.
    expect_same_step(run_step(a, plain), run_step(b, checkpointed), 0.0);
  }
}

TEST(Recompute, MeasuredEqualsPredictedOnReferenceAndCpu) {
  for (const auto& [block, v] : policy_cases()) {
    BlockSpec b = block;
    b.dtype = DType::float32;
    SCOPED_TRACE(v.name + (b.residual ? " residual" : "") + (b.dropout > 0 ? " dropout" : ""));
    const Graph g = build_variant_graph(b, with_policy(v, MemoryPolicy::recompute));
    ReferenceBackend reference;
    testing::expect_measured_equals_predicted(reference, g, true);
    CpuBackend cpu;
    testing::expect_measured_equals_predicted(cpu, g, true);
  }
}

TEST(Recompute, ABlockKeepsOnlyItsInputAndRunsItsForwardAgain) {
  // conv -> BN -> ReLU on 1x1x4x4 (memory_model_test's hand-worked block). Plain, it saves the
  // conv output, BN's statistics and the ReLU output (272 B); checkpointed, nothing beyond its
  // input. In backward ReLU (its last saving op, which saves its output) triggers a rerun of all
  // three ops; the rerun ReLU output is a second copy next to the block output the caller holds.
  BlockSpec b = small_block(2, 1, 2, 4);
  b.batch = 1;
  const Graph g = build_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::recompute));
  const MemoryPrediction p = predict_memory(g, true);
  EXPECT_EQ(p.saved_bytes, 0);
  ASSERT_EQ(p.saved.size(), 1u);
  EXPECT_EQ(p.saved[0].what, "block input");
  EXPECT_FALSE(p.saved[0].counted);
  EXPECT_EQ(p.saved[0].saved_by, std::vector<std::string>{"checkpoint of small"});
  // Resident 304 (params 96, buffers 16, input 64, dy 128). During the rerun ReLU: the block
  // output 128, the rerun conv output 128, BN output 128, BN statistics 16 and ReLU output 128
  // (832). The peak is still BN's backward, as without the policy (848: output, conv output,
  // statistics, the ReLU gradient 128, BN's input gradient 128, parameter gradients 16): a block
  // checkpointed whole needs everything back before its backward can start.
  EXPECT_EQ(p.peak_bytes, 848);
  EXPECT_EQ(p.peak_bytes, predict_memory(build_variant_graph(b, variant("standard")), true).peak_bytes);
  EXPECT_EQ(p.peak_phase, "backward");
  EXPECT_EQ(p.peak_op, "norm");
  const MemoryPrediction rerun_only = predict_memory(g, true, [](const Op& op, Phase phase) {
    return phase == Phase::forward && op.kind == OpKind::relu ? int64_t{1000} : int64_t{0};
  });
  EXPECT_EQ(rerun_only.peak_bytes, 304 + 128 * 4 + 16 + 1000);
  EXPECT_EQ(rerun_only.peak_phase, "recompute");
  const std::vector<RecomputePlan> plans = recompute_plans(g);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].rerun_ops, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plans[0].trigger_op, 2);
  EXPECT_EQ(plans[0].release_op, 0);
  // Counts: the rerun forward is counted again, in backward.
  const VariantAnalysis plain = analyze_variant(build_variant_graph(b, variant("standard")), true);
  const VariantAnalysis re = analyze_variant(g, true);
  EXPECT_EQ(re.flops.recompute, plain.flops.forward);
  EXPECT_EQ(re.macs.recompute, plain.macs.forward);
  EXPECT_EQ(re.flops.backward(), plain.flops.backward() + plain.flops.forward);
  EXPECT_EQ(re.bytes_backward, plain.bytes_backward + plain.bytes_forward);
}

TEST(Recompute, EarlyStopSkipsWhatBackwardDoesNotRead) {
  // Ending in leaky ReLU (which saves its input, BN's output: packed before it runs) the rerun
  // stops after BN; a residual add at the end saves nothing and does not rerun either.
  BlockSpec b = small_block(2, 4, 4, 4);
  b.act = ActKind::leaky_relu;
  b.residual = true;
  const Graph g = build_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::recompute));
  ASSERT_EQ(g.ops.size(), 4u);  // conv, norm, act, add
  const std::vector<RecomputePlan> plans = recompute_plans(g);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].trigger_op, 2);
  EXPECT_EQ(plans[0].rerun_ops, (std::vector<int>{0, 1}));
  // The executor works out the same on its own: the ops its hook sees run forward inside backward.
  ReferenceBackend backend;
  Executor ex(g, backend, true);
  ModelState s = ex.init_state(1);
  std::vector<int> rerun;
  ex.set_op_hook([&](int op, Phase phase, bool begin) {
    if (begin && phase == Phase::forward && ex.recomputing()) rerun.push_back(op);
  });
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  fill_uniform(backend, x, 2);
  Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
  fill_uniform(backend, dy, 3);
  ex.forward(s, x);
  EXPECT_TRUE(rerun.empty());
  ex.backward(s, dy);
  EXPECT_EQ(rerun, plans[0].rerun_ops);
}

TEST(Recompute, IsRefusedInInferenceAtItsKey) {
  const std::string spec =
      "blocks:\n"
      "  - name: b\n"
      "    batch: 2\n"
      "    in_channels: 4\n"
      "    out_channels: 4\n"
      "    size: 8\n"
      "    mode: infer\n"
      "    variants:\n"
      "      - standard\n"
      "      - {kind: standard, name: re, memory_policy: recompute}\n";
  const Spec s = parse_spec_text(spec, "p.yaml");
  build_variant_graph(s.blocks[0], s.blocks[0].variants[0]);
  try {
    build_variant_graph(s.blocks[0], s.blocks[0].variants[1]);
    FAIL() << "recompute in inference was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "p.yaml:10:51: blocks[0].variants[1].memory_policy: memory_policy recompute runs the forward again in "
              "backward, and mode: infer has no backward (nothing is saved to recompute); use memory_policy: none, "
              "or mode: train");
  }
}

TEST(Recompute, ChangesTheGraphHashAndKeepsThePlainOne) {
  BlockSpec b = small_block(2, 4, 8, 6);
  const Graph plain = build_variant_graph(b, variant("standard"));
  const Graph re = build_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::recompute));
  EXPECT_NE(graph_hash(plain, true), graph_hash(re, true));
  EXPECT_EQ(graph_hash(build_plain_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::recompute)), true),
            graph_hash(plain, true));
}

// A network whose slots are checkpointed one by one: each slot keeps its input (a saved tensor
// when another op made it), the peak falls below the plain network's, the gradients are equal.
const char* kNetwork =
    "networks:\n"
    "  - name: net\n"
    "    dims: 2\n"
    "    batch: 2\n"
    "    in_channels: 3\n"
    "    size: 8\n"
    "    dropout: 0.2\n"
    "    variants:\n"
    "      - standard\n"
    "      - {kind: bottleneck, ratio: 2, name: bottleneck-recompute, memory_policy: recompute}\n"
    "      - {kind: standard, name: standard-recompute, memory_policy: recompute}\n"
    "    units:\n"
    "      res:\n"
    "        params: {out: required}\n"
    "        ops:\n"
    "          - {op: slot, name: a, out_channels: $out}\n"
    "          - {op: slot, name: b, out_channels: $out}\n"
    "          - {op: add, name: sum, inputs: [a, b]}\n"
    "    stages:\n"
    "      - name: s0\n"
    "        ops: [{op: slot, name: stem, out_channels: 8}]\n"
    "      - name: s1\n"
    "        ops: [{unit: res, name: block, repeat: 2, args: {out: 8}}]\n"
    "      - name: s2\n"
    "        ops: [{op: max_pool, name: pool}, {op: slot, name: last, out_channels: 4}]\n";

TEST(Recompute, NetworkSlotsAreSegments) {
  Spec spec = parse_spec_text(kNetwork, "net.yaml");
  BlockSpec net = spec.blocks.at(0);
  const Graph plain = build_variant_graph(net, net.variants[0]);
  const Graph re = build_variant_graph(net, net.variants[2]);
  ASSERT_EQ(re.segments.size(), 6u);
  EXPECT_EQ(re.segments[0].name, "s0.stem");
  EXPECT_EQ(re.segments[1].name, "s1.block.0.a");
  EXPECT_EQ(re.segments[5].name, "s2.last");
  const MemoryPrediction pp = predict_memory(plain, true), pr = predict_memory(re, true);
  EXPECT_LT(pr.saved_bytes, pp.saved_bytes);
  EXPECT_LT(pr.peak_bytes, pp.peak_bytes);
  // Every counted saved tensor is a slot's kept input or saved by an op outside the slots.
  int64_t sum = 0;
  for (const SavedTensorFacts& f : pr.saved)
    if (f.counted) sum += f.bytes;
  EXPECT_EQ(sum, pr.saved_bytes);
  BlockSpec n64 = net;
  n64.dtype = DType::float64;
  ReferenceBackend a, b;
  expect_same_step(run_step(a, build_variant_graph(n64, n64.variants[0])),
                   run_step(b, build_variant_graph(n64, n64.variants[2])), 0.0);
  for (const VariantSpec& v : net.variants) {
    SCOPED_TRACE(v.name);
    ReferenceBackend reference;
    testing::expect_measured_equals_predicted(reference, build_variant_graph(net, v), true);
    CpuBackend cpu;
    testing::expect_measured_equals_predicted(cpu, build_variant_graph(net, v), true);
  }
}

// ---- inplace_act -------------------------------------------------------------------------------

bool runs_in_place(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops)
    if (op.name == name) return op.in_place;
  ADD_FAILURE() << "no op " << name;
  return false;
}

TEST(InplaceAct, GradientsEqualThePlainBlocksAndMemoryIsPredicted) {
  for (const auto& [block, v] : policy_cases()) {
    SCOPED_TRACE(v.name + (block.residual ? " residual" : "") + (block.dropout > 0 ? " dropout" : "") + " " +
                 std::string(to_string(block.layout)));
    ReferenceBackend a, b;
    const Graph plain = build_variant_graph(block, v);
    const Graph in_place = build_variant_graph(block, with_policy(v, MemoryPolicy::inplace_act));
    ASSERT_TRUE(std::any_of(in_place.ops.begin(), in_place.ops.end(), [](const Op& op) { return op.in_place; }));
    expect_same_step(run_step(a, plain), run_step(b, in_place), 0.0);
    BlockSpec f32 = block;
    f32.dtype = DType::float32;
    const Graph g = build_variant_graph(f32, with_policy(v, MemoryPolicy::inplace_act));
    for (bool training : {true, false}) {
      ReferenceBackend reference;
      testing::expect_measured_equals_predicted(reference, g, training);
      CpuBackend cpu;
      testing::expect_measured_equals_predicted(cpu, g, training);
    }
  }
}

TEST(InplaceAct, LeakyReluInPlaceSavesOneTensorInsteadOfTwo) {
  // Plain, each leaky ReLU of a bottleneck keeps its input (BN's output) and the next conv keeps
  // its output: two tensors. In place they are one tensor, the output, which both keep.
  BlockSpec b = small_block(2, 8, 8, 6);
  b.act = ActKind::leaky_relu;
  VariantSpec bottleneck = variant("bottleneck");
  bottleneck.kind_parameters = BottleneckParameters{.ratio = 2};
  const Graph plain = build_variant_graph(b, bottleneck);
  const Graph g = build_variant_graph(b, with_policy(bottleneck, MemoryPolicy::inplace_act));
  for (const char* act : {"reduce.act", "spatial.act", "expand.act"}) EXPECT_TRUE(runs_in_place(g, act)) << act;
  const MemoryPrediction pp = predict_memory(plain, true), pi = predict_memory(g, true);
  const int64_t mid = 2 * 4 * 6 * 6 * 4;                // one 2x4x6x6 float32 activation
  EXPECT_EQ(pp.saved_bytes - pi.saved_bytes, 2 * mid);  // the first two units' BN outputs
  // The attribution still sums to the saved bytes and names the in-place op.
  int64_t sum = 0;
  bool named = false;
  for (const SavedTensorFacts& f : pi.saved) {
    if (f.counted) sum += f.bytes;
    named = named || f.what == "output of reduce.act (in place over the output of reduce.norm)";
  }
  EXPECT_EQ(sum, pi.saved_bytes);
  EXPECT_TRUE(named);
}

TEST(InplaceAct, RunsInPlaceOnlyWhereAutogradAllowsIt) {
  // relu over the block input: the caller's tensor; sigmoid after relu: relu saved its output;
  // relu over a conv output the add also reads: another reader; leaky_relu with a negative slope:
  // its output does not tell the input's sign.
  BlockSpec b = small_block(2, 4, 4, 4);
  VariantSpec v = variant("custom", "rules");
  auto op = [](std::string kind, std::string name, std::vector<std::string> in) {
    CustomOpSpec s;
    s.op = std::move(kind);
    s.name = std::move(name);
    s.inputs = std::move(in);
    s.key_path = "ops[?]";
    return s;
  };
  CustomOpSpec neg = op("leaky_relu", "neg", {"c3"});
  neg.fields.set("negative_slope", -0.5);
  CustomOpSpec pos = op("leaky_relu", "pos", {"c3"});
  pos.fields.set("negative_slope", 0.1);
  v.ops = {op("relu", "on_input", {"input"}),
           op("conv", "c1", {"on_input"}),
           op("relu", "r", {"c1"}),
           op("sigmoid", "s", {"r"}),
           op("conv", "c2", {"s"}),
           op("relu", "shared", {"c2"}),
           op("add", "sum", {"shared", "c2"}),
           op("conv", "c3", {"sum"}),
           neg,
           pos,
           op("add", "out", {"neg", "pos"})};
  const Graph g = build_variant_graph(b, with_policy(v, MemoryPolicy::inplace_act));
  EXPECT_FALSE(runs_in_place(g, "on_input"));
  EXPECT_TRUE(runs_in_place(g, "r"));
  EXPECT_FALSE(runs_in_place(g, "s"));
  EXPECT_FALSE(runs_in_place(g, "shared"));
  EXPECT_FALSE(runs_in_place(g, "neg"));
  EXPECT_FALSE(runs_in_place(g, "pos"));  // c3 is also read by neg
  BlockSpec b64 = b;
  b64.dtype = DType::float64;
  ReferenceBackend x, y;
  expect_same_step(run_step(x, build_variant_graph(b64, v)),
                   run_step(y, build_variant_graph(b64, with_policy(v, MemoryPolicy::inplace_act))), 0.0);
  ReferenceBackend reference;
  testing::expect_measured_equals_predicted(reference, g, true);
}

// ---- inplace_abn -------------------------------------------------------------------------------

TEST(MemoryPolicy, InplaceAbnOnAReluBlockTakesInPlaceAbnsLeakySlopeAndSaysSo) {
  // InPlaceABN has no ReLU: a ReLU block adopting it uses leaky_relu(0.01), its default. The
  // variant measures that switch, says it, and is compared with the user's own ReLU block.
  BlockSpec b = small_block(2, 4, 8, 6);
  const Graph g = build_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::inplace_abn));
  ASSERT_EQ(g.ops.size(), 2u);
  EXPECT_EQ(g.ops[1].kind, OpKind::batch_norm_act);
  EXPECT_DOUBLE_EQ(g.ops[1].negative_slope, 0.01);
  EXPECT_NE(g.policy_note.find("norm -> act is batch norm then relu"), std::string::npos) << g.policy_note;
  EXPECT_NE(g.policy_note.find("leaky_relu with InPlaceABN's default slope 0.01"), std::string::npos) << g.policy_note;
  EXPECT_EQ(graph_outline(g), "conv 3x3 4→8, batch_norm_act (leaky_relu 0.01)");
  // A leaky block keeps its own slope and needs no note.
  b.act = ActKind::leaky_relu;
  const Graph leaky = build_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::inplace_abn));
  EXPECT_TRUE(leaky.policy_note.empty());
  EXPECT_DOUBLE_EQ(leaky.ops[1].negative_slope, b.negative_slope);
  // Custom ops: the same rule, by the ops' own names.
  const Spec spec = parse_spec_text(
      "name: t\nblocks:\n  - name: b\n    batch: 2\n    kernel: 3\n    in_channels: 4\n    out_channels: 8\n    size: "
      "6\n    variants:\n"
      "      - kind: custom\n        name: mine\n        memory_policy: inplace_abn\n        ops:\n"
      "          - {op: conv, name: c1, out_channels: 8}\n          - {op: batch_norm, name: bn1}\n"
      "          - {op: relu, name: r1}\n",
      "custom.yaml");
  const Graph custom = build_variant_graph(spec.blocks[0], spec.blocks[0].variants[0]);
  EXPECT_NE(custom.policy_note.find("bn1 -> r1 is batch norm then relu"), std::string::npos) << custom.policy_note;
}

std::vector<std::pair<BlockSpec, VariantSpec>> abn_cases() {
  std::vector<std::pair<BlockSpec, VariantSpec>> cases;
  for (const auto& [block, v] : policy_cases()) {
    if (block.norm != NormKind::batch) continue;
    BlockSpec b = block;
    b.act = ActKind::leaky_relu;
    b.negative_slope = 0.1;
    cases.emplace_back(b, v);
  }
  return cases;
}

TEST(InplaceAbn, GradientsEqualThePlainPairsInFloat64) {
  for (const auto& [block, v] : abn_cases()) {
    SCOPED_TRACE(v.name + (block.residual ? " residual" : "") + (block.dropout > 0 ? " dropout" : "") + " " +
                 std::string(to_string(block.layout)));
    ReferenceBackend a, b;
    const Graph plain = build_variant_graph(block, v);
    const Graph abn = build_variant_graph(block, with_policy(v, MemoryPolicy::inplace_abn));
    size_t fused = 0;
    for (const Op& op : abn.ops) {
      EXPECT_NE(op.kind, OpKind::batch_norm);
      EXPECT_NE(op.kind, OpKind::leaky_relu);
      fused += op.kind == OpKind::batch_norm_act;
    }
    EXPECT_EQ(abn.ops.size() + fused, plain.ops.size());
    ASSERT_EQ(abn.params.size(), plain.params.size());
    for (size_t p = 0; p < abn.params.size(); ++p) EXPECT_EQ(abn.params[p].name, plain.params[p].name);
    // Backward recovers the normalised input from the output instead of reading it: the same
    // gradients up to rounding.
    expect_same_step(run_step(a, plain), run_step(b, abn), 1e-10);
  }
}

TEST(InplaceAbn, TheFusedOpEqualsBatchNormThenLeakyReluWithAnyWeights) {
  // One op against the pair on the reference backend in float64, with weights of both signs and
  // away from zero (the inversion divides by them), in both layouts and both modes.
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    const TensorDesc in{{3, 4, 3, 5}, DType::float64, layout};
    GraphBuilder pb("pair", in), fb("fused", in);
    const Graph pair = pb.finish(pb.leaky_relu("act", pb.batch_norm("bn", pb.input(), 1e-3, 0.2), 0.2));
    const Graph fused = fb.finish(fb.batch_norm_act("bn", fb.input(), 0.2, 1e-3, 0.2));
    for (bool training : {true, false}) {
      ReferenceBackend backend;
      std::vector<StepResult> results;
      for (const Graph* g : {&pair, &fused}) {
        Executor ex(*g, backend, training);
        ModelState s = ex.init_state(1);
        upload(backend, s.params[0], {0.7, -1.3, 0.9, -0.6});
        upload(backend, s.params[1], {0.1, -0.4, 0.3, 0.0});
        Tensor x = make_tensor(backend.allocator(), in, MemoryCategory::inputs);
        fill_uniform(backend, x, 21);
        StepResult r;
        r.output = download(backend, ex.forward(s, x));
        if (training) {
          Tensor dy = make_tensor(backend.allocator(), g->desc(g->output), MemoryCategory::inputs);
          fill_uniform(backend, dy, 22);
          ex.backward(s, dy);
          for (const Tensor& t : s.grads) r.grads.push_back(download(backend, t));
        }
        for (const Tensor& t : s.buffers) r.grads.push_back(download(backend, t));  // running statistics
        results.push_back(std::move(r));
      }
      expect_same_step(results[0], results[1], 1e-10);
    }
  }
}

TEST(InplaceAbn, SavesTheOutputInsteadOfTheNormsInputAndTheActivationsInput) {
  // conv(1 -> 2) -> BN -> leaky ReLU on 1x1x4x4. Plain it saves the conv output (BN's input, 128
  // B), BN's statistics (16) and BN's output (leaky ReLU's input, 128): 272. Fused and in place
  // over the conv output, it saves that one tensor, now holding the output, and the statistics.
  BlockSpec b = small_block(2, 1, 2, 4);
  b.batch = 1;
  b.act = ActKind::leaky_relu;
  const Graph plain = build_variant_graph(b, variant("standard"));
  const Graph g = build_variant_graph(b, with_policy(variant("standard"), MemoryPolicy::inplace_abn));
  ASSERT_EQ(g.ops.size(), 2u);
  EXPECT_EQ(g.ops[1].kind, OpKind::batch_norm_act);
  EXPECT_EQ(g.ops[1].name, "norm");
  EXPECT_TRUE(g.ops[1].in_place);
  const MemoryPrediction pp = predict_memory(plain, true), pa = predict_memory(g, true);
  EXPECT_EQ(pp.saved_bytes, 272);
  EXPECT_EQ(pa.saved_bytes, 144);
  EXPECT_LT(pa.peak_bytes, pp.peak_bytes);
  bool named = false;
  for (const SavedTensorFacts& f : pa.saved)
    named = named || (f.what == "output of norm (in place over the output of conv)" &&
                      f.saved_by == std::vector<std::string>{"norm"} && f.bytes == 128);
  EXPECT_TRUE(named);
  // The counts: the inversion's 3 FLOPs per element join the backward.
  const VariantAnalysis ap = analyze_variant(plain, true), aa = analyze_variant(g, true);
  EXPECT_EQ(aa.flops.forward, ap.flops.forward);
  EXPECT_EQ(aa.flops.backward(), ap.flops.backward() + 3 * 32);
  for (bool training : {true, false}) {
    ReferenceBackend reference;
    testing::expect_measured_equals_predicted(reference, g, training);
  }
}

TEST(InplaceAbn, NotInPlaceOverTheBlockInput) {
  // A custom variant whose batch norm reads the block input: fused, but it must not overwrite the
  // caller's tensor, so it allocates its output (and still saves only that).
  BlockSpec b = small_block(2, 4, 4, 4);
  VariantSpec v = variant("custom", "bn-first");
  CustomOpSpec bn, act, conv;
  bn.op = "batch_norm";
  bn.name = "bn";
  bn.inputs = {"input"};
  act.op = "leaky_relu";
  act.name = "act";
  act.inputs = {"bn"};
  conv.op = "conv";
  conv.name = "conv";
  conv.inputs = {"act"};
  v.ops = {bn, act, conv};
  const Graph g = build_variant_graph(b, with_policy(v, MemoryPolicy::inplace_abn));
  ASSERT_EQ(g.ops[0].kind, OpKind::batch_norm_act);
  EXPECT_FALSE(g.ops[0].in_place);
  for (bool training : {true, false}) {
    ReferenceBackend reference;
    testing::expect_measured_equals_predicted(reference, g, training);
  }
}

TEST(InplaceAbn, MeasuredEqualsPredictedOnReferenceAndCpu) {
  for (const auto& [block, v] : abn_cases()) {
    BlockSpec b = block;
    b.dtype = DType::float32;
    SCOPED_TRACE(v.name + (b.residual ? " residual" : "") + (b.dropout > 0 ? " dropout" : ""));
    const Graph g = build_variant_graph(b, with_policy(v, MemoryPolicy::inplace_abn));
    for (bool training : {true, false}) {
      ReferenceBackend reference;
      testing::expect_measured_equals_predicted(reference, g, training);
      CpuBackend cpu;
      testing::expect_measured_equals_predicted(cpu, g, training);
    }
  }
}

// ---- reports ------------------------------------------------------------------------------------

TEST(PolicyReports, RowsTablesCsvAndExplainSayWhatEachPolicyBuys) {
  const std::string spec = testing::source_path("configs/memory-policies.yaml");
  const std::string json = testing::temp_path("policies.json"), csv = testing::temp_path("policies.csv");
  const testing::CliResult r = testing::run_cli("analyze " + spec + " --json " + json + " --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The variants differ in their policy, so the table shows it; the second table pairs each
  // policy row with the same variant without it, by graph hash.
  EXPECT_NE(r.out.find("variant                 policy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vnet-block-leaky: what each memory policy buys, against the same variant without it"),
            std::string::npos);
  EXPECT_NE(r.out.find("- bottleneck-inplace-abn: inplace_abn keeps 9 tensors for backward instead of 14 tensors "
                       "(-3.00 MiB); the peak moves -3.50 MiB."),
            std::string::npos)
      << r.out;
  const ResultSet loaded = load_results_file(json);
  std::map<std::string, const ResultRow*> plain;
  for (const ResultRow& row : loaded.rows)
    if (row.memory_policy == "none") plain[row.block + "/" + row.graph_hash] = &row;
  int paired = 0;
  for (const ResultRow& row : loaded.rows) {
    if (row.memory_policy == "none") {
      EXPECT_TRUE(row.plain_graph_hash.empty());
      continue;
    }
    const auto it = plain.find(row.block + "/" + row.plain_graph_hash);
    ASSERT_NE(it, plain.end()) << row.variant;
    EXPECT_EQ(it->second->kind, row.kind);
    EXPECT_NE(row.graph_hash, row.plain_graph_hash);
    EXPECT_EQ(row.macs.recompute > 0, row.memory_policy == "recompute");
    ++paired;
  }
  EXPECT_EQ(paired, 10);
  const std::string text = testing::read_file(csv);
  EXPECT_NE(text.find(",layout_conversion,memory_policy,flops_recompute"), std::string::npos);
  EXPECT_NE(text.find(",none,recompute,"), std::string::npos);  // layout_conversion, memory_policy
  std::filesystem::remove(json);
  std::filesystem::remove(csv);

  // explain: its sentence on the policy, and the ops' saved bytes adding up to the total.
  const std::string facts = testing::temp_path("policies-explain.json");
  ASSERT_EQ(testing::run_cli("explain " + spec + " --memory-only --json " + facts).exit_code, 0);
  const nlohmann::json doc = nlohmann::json::parse(testing::read_file(facts));
  int with_policy = 0;
  for (const auto& block : doc["blocks"])
    for (const auto& v : block["variants"]) {
      const auto& f = v;
      int64_t saved = 0;
      for (const auto& o : f["ops"]) saved += o["saved_bytes"].get<int64_t>();
      EXPECT_EQ(saved, f["memory"]["saved_bytes"].get<int64_t>()) << f["variant"];
      if (f["memory_policy"]["policy"] == "none") continue;
      ++with_policy;
      bool said = false;
      for (const auto& s : v["sentences"])
        said = said ||
               s.get<std::string>().rfind("Memory policy " + f["memory_policy"]["policy"].get<std::string>(), 0) == 0;
      EXPECT_TRUE(said) << f["variant"];
    }
  EXPECT_EQ(with_policy, 10);
  std::filesystem::remove(facts);
}

// The per-value flag the builder records (what backends ask per op) is requires_grad()'s, for every
// value an op reads or the graph outputs, in every config's variants and under every policy (an
// inplace_abn fusion leaves the norm's old output unread; its flag no longer matters).
TEST(PolicyGraphs, ValuesRecordTheGradientFlagRequiresGradComputes) {
  for (const std::string& file : shipped_configs()) {
    const Spec spec = load_spec_file(file);
    for (const BlockSpec& block : spec.blocks)
      for (const VariantSpec& v : block.variants)
        for (MemoryPolicy p : {MemoryPolicy::none, MemoryPolicy::inplace_act, MemoryPolicy::inplace_abn}) {
          // The variant's own name: a network's custom variant is looked up by it.
          VariantSpec with = with_policy(v, p);
          with.name = v.name;
          Graph g;
          try {
            g = build_variant_graph(block, with);
          } catch (const InputError&) {
            continue;  // the policy does not apply to this variant
          }
          const std::vector<bool> rg = g.requires_grad();
          std::vector<int> read = {g.output};
          for (const Op& op : g.ops) read.insert(read.end(), op.inputs.begin(), op.inputs.end());
          for (int value : read)
            EXPECT_EQ(g.values[static_cast<size_t>(value)].requires_grad, rg[static_cast<size_t>(value)])
                << file << " " << block.name << "/" << v.name << " " << to_string(p) << ": "
                << g.values[static_cast<size_t>(value)].name;
        }
  }
}

}  // namespace
}  // namespace convbench
