// The repvgg block kind (lib/spec/kind_repvgg.cpp): RepVGG's training block, with its identity
// branch only where the input has the output's shape, the same graph as the custom ops that
// configs/repvgg.yaml wrote before the kind existed, folded in inference into one conv with a
// bias, and filling a network's slots.
#include <gtest/gtest.h>

#include "analysis/variant_analysis.hpp"
#include "pipeline/fold_facts.hpp"
#include "pipeline/fold_proof.hpp"
#include "spec/spec_loader.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::ops_of;

// A block of 8 -> `out` channels with the given fields and variant.
Graph graph_of(const std::string& block_fields, const std::string& variant = "repvgg", int64_t out = 8) {
  const Spec spec =
      parse_spec_text("blocks:\n  - {name: b, batch: 2, in_channels: 8, size: 8, out_channels: " + std::to_string(out) +
                          block_fields + ", variants: [" + variant + "]}\n",
                      "repvgg.yaml");
  return build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
}

TEST(RepvggKind, SumsTheThreeNormalisedBranchesThenActivates) {
  const Graph g = graph_of("");
  EXPECT_EQ(ops_of(g),
            (std::vector<std::string>{"dense.conv(input)", "dense.norm(dense.conv)", "pointwise.conv(input)",
                                      "pointwise.norm(pointwise.conv)", "identity.norm(input)",
                                      "sum(dense.norm, pointwise.norm)", "sum2(sum, identity.norm)", "act(sum2)"}));
  EXPECT_EQ(g.ops[0].conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(g.ops[0].conv.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(g.ops[2].conv.kernel, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(g.ops[2].conv.padding, (std::vector<int64_t>{0, 0}));
}

TEST(RepvggKind, HasNoIdentityBranchWhereTheShapesDiffer) {
  const std::vector<std::string> two = {"dense.conv(input)",
                                        "dense.norm(dense.conv)",
                                        "pointwise.conv(input)",
                                        "pointwise.norm(pointwise.conv)",
                                        "sum(dense.norm, pointwise.norm)",
                                        "act(sum)"};
  EXPECT_EQ(ops_of(graph_of("", "repvgg", 16)), two);
  const Graph strided = graph_of(", stride: 2");
  EXPECT_EQ(ops_of(strided), two);
  EXPECT_EQ(strided.ops[2].conv.stride, (std::vector<int64_t>{2, 2}));  // both convs take the stride
  // Without a norm the identity branch is the input itself, and the block's residual comes after it.
  EXPECT_EQ(ops_of(graph_of(", norm: none, residual: true")),
            (std::vector<std::string>{"dense.conv(input)", "pointwise.conv(input)", "sum(dense.conv, pointwise.conv)",
                                      "sum2(sum, input)", "act(sum2)", "add(act, input)"}));
}

// What configs/repvgg.yaml spelt out as custom ops: the kind builds the same graph, op for op.
TEST(RepvggKind, IsTheGraphOfTheCustomOpsItReplaces) {
  const std::string custom =
      "{kind: custom, ops: [{op: conv, name: dense.conv, inputs: input, kernel: 3}, {op: batch_norm, name: dense.bn}, "
      "{op: conv, name: pointwise.conv, inputs: input, kernel: 1, padding: 0}, {op: batch_norm, name: pointwise.bn}, "
      "{op: batch_norm, name: identity, inputs: input}, {op: add, name: sum, inputs: [dense.bn, pointwise.bn]}, "
      "{op: add, name: sum2, inputs: [sum, identity]}, {op: relu, name: act}]}";
  for (const std::string mode : {"train", "infer"}) {
    const std::string fields = ", bias: false, mode: " + mode;
    const Graph kind = graph_of(fields), spelt = graph_of(fields, custom);
    ASSERT_EQ(kind.ops.size(), spelt.ops.size());
    for (size_t i = 0; i < kind.ops.size(); ++i) EXPECT_EQ(kind.ops[i].kind, spelt.ops[i].kind) << i;
    const VariantAnalysis a = analyze_variant(kind, mode == "train"), b = analyze_variant(spelt, mode == "train");
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.buffers, b.buffers);
    EXPECT_EQ(a.macs.forward, b.macs.forward);
    EXPECT_EQ(a.flops.forward, b.flops.forward);
    EXPECT_EQ(a.flops.backward(), b.flops.backward());
    EXPECT_EQ(a.memory.peak_bytes, b.memory.peak_bytes) << mode;
    EXPECT_EQ(a.memory.saved_bytes, b.memory.saved_bytes) << mode;
  }
}

TEST(RepvggKind, FoldsIntoOneConvWithABiasInInference) {
  const Spec spec = parse_spec_text(
      "blocks:\n  - {name: b, batch: 2, in_channels: 8, out_channels: 8, size: 8, bias: false, mode: infer,\n"
      "     variants: [repvgg, {kind: folded, of: repvgg}]}\n",
      "repvgg.yaml");
  const BlockSpec& block = spec.blocks.at(0);
  EXPECT_EQ(block.variants.at(1).name, "folded-repvgg");
  const Graph g = build_variant_graph(block, block.variants.at(1));
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"sum2(input)", "act(sum2)"}));
  EXPECT_EQ(g.ops[0].kind, OpKind::conv);
  EXPECT_EQ(g.ops[0].conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_TRUE(g.ops[0].conv.bias);  // the branches' batch norms, folded
}

// Under AMP the fold is proved on the float32 graphs it composes (the proof at float64 once
// compared an autocast source, rounded to bfloat16, with the plain fold, and refused a right fold).
TEST(RepvggKind, TheFoldOfAnAmpBlockIsProvedOnItsPlainGraphs) {
  for (const std::string precision : {"amp_bfloat16", "amp_float16"}) {
    const Spec spec = parse_spec_text(
        "blocks:\n  - {name: b, batch: 2, in_channels: 8, out_channels: 8, size: 8, mode: infer, precision: " +
            precision + ",\n     variants: [repvgg, {kind: folded, of: repvgg}]}\n",
        "repvgg.yaml");
    const BlockSpec& block = spec.blocks.at(0);
    const FoldFacts facts = fold_facts(block, block.variants.at(1));
    EXPECT_LE(std::max(facts.output_error, facts.gradient_error), kFoldTolerance) << precision;
    // The measured variant is still the autocast one: its conv reads a cast input.
    const Graph g = build_variant_graph(block, block.variants.at(1));
    EXPECT_EQ(g.precision, precision_of(block, block.variants.at(1)).precision);
  }
}

TEST(RepvggKind, FillsANetworksSlotsWithTheIdentityWhereItFits) {
  const Spec spec = parse_spec_text(R"(
networks:
  - name: net
    batch: 2
    in_channels: 8
    size: 8
    variants: [repvgg]
    stages:
      - name: s
        ops:
          - {op: slot, name: same}
          - {op: slot, name: wider, out_channels: 16}
)",
                                    "net.yaml");
  const BlockSpec& net = spec.blocks.at(0);
  const Graph g = build_variant_graph(net, net.variants.at(0));
  std::vector<std::string> names;
  for (const Op& op : g.ops) names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"s.same.dense.conv", "s.same.dense.norm", "s.same.pointwise.conv",
                                             "s.same.pointwise.norm", "s.same.identity.norm", "s.same.sum",
                                             "s.same.sum2", "s.same.act", "s.wider.dense.conv", "s.wider.dense.norm",
                                             "s.wider.pointwise.conv", "s.wider.pointwise.norm", "s.wider.sum",
                                             "s.wider.act"}));
}

}  // namespace
}  // namespace convbench
