// The block kinds that are torchvision's blocks (lib/spec/kind_inverted_residual.cpp, kind_mbconv,
// kind_fused_mbconv, kind_convnext, kind_shufflenet_unit, kind_densenet_layer): their ops and
// wiring, the widths torchvision's rules give (make_divisible), their own shortcut where the
// shapes allow it and nowhere else, counts worked out by hand from torchvision's modules, and the
// located refusals of blocks they do not fit. tests/torchvision_blocks_peer_test.py checks the
// same kinds against torchvision's own modules (parameters, MACs, saved bytes).
#include <gtest/gtest.h>

#include "analysis/variant_analysis.hpp"
#include "spec/spec_loader.hpp"
#include "spec/torchvision_parts.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::ops_of;
using Ops = std::vector<std::string>;

Graph graph_of(const std::string& block_fields, const std::string& variant) {
  const Spec spec = parse_spec_text(
      "blocks:\n  - {name: b, batch: 2, size: 8, " + block_fields + ", variants: [" + variant + "]}\n", "kinds.yaml");
  return build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
}

int64_t params_of(const Graph& g) { return analyze_variant(g, true).params; }

const Op& op_named(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

// The message of the InputError a spec gives, or "" when it loads and builds.
std::string refusal(const std::string& block_fields, const std::string& variant) {
  try {
    graph_of(block_fields, variant);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TorchvisionKinds, MakeDivisibleIsTorchvisions) {
  // torchvision's _make_divisible(v, 8), worked by hand: nearest multiple of 8, at least 8, and
  // not below 90% of v.
  EXPECT_EQ(make_divisible(18), 24);  // 16 < 0.9 x 18
  EXPECT_EQ(make_divisible(96), 96);
  EXPECT_EQ(make_divisible(10), 16);  // 8 < 9
  EXPECT_EQ(make_divisible(3), 8);
  EXPECT_EQ(make_divisible(100), 104);
}

TEST(TorchvisionKinds, InvertedResidualAddsItsInputOnlyWhereTheShapeIsKept) {
  const Graph same = graph_of("in_channels: 16, out_channels: 16", "inverted_residual");
  EXPECT_EQ(ops_of(same),
            (Ops{"expand.conv(input)", "expand.norm(expand.conv)", "expand.act(expand.norm)",
                 "depthwise.conv(expand.act)", "depthwise.norm(depthwise.conv)", "depthwise.act(depthwise.norm)",
                 "project.conv(depthwise.act)", "project.norm(project.conv)", "add(project.norm, input)"}));
  EXPECT_EQ(op_named(same, "depthwise.conv").conv.groups, 96);
  EXPECT_EQ(same.ops[2].kind, OpKind::relu6);
  EXPECT_FALSE(op_named(same, "expand.conv").conv.bias);
  // MobileNetV2's InvertedResidual(16, 24, stride 2, expand 6), counted by hand: 1x1 16x96 + BN 2x96,
  // 3x3 depthwise 96x9 + BN 2x96, 1x1 96x24 + BN 2x24.
  const Graph down = graph_of("in_channels: 16, out_channels: 24, stride: 2", "inverted_residual");
  EXPECT_EQ(down.ops.back().name, "project.norm");
  EXPECT_EQ(op_named(down, "depthwise.conv").conv.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(params_of(down), 1536 + 192 + 864 + 192 + 2304 + 48);
  // Expansion 1 (MobileNetV2's first block): no expansion conv.
  EXPECT_EQ(graph_of("in_channels: 32, out_channels: 16", "{kind: inverted_residual, expand: 1}").ops[0].name,
            "depthwise.conv");
}

TEST(TorchvisionKinds, InvertedResidualV3HasTheSqueezeMobileNetV3Gives) {
  // MobileNetV3-Large's 24 -> 40 block: hidden 72, kernel 5, squeeze _make_divisible(72 // 4) = 24.
  const Graph g = graph_of("in_channels: 24, out_channels: 40, kernel: 5, stride: 2",
                           "{kind: inverted_residual, hidden: 72, act: relu, se: true}");
  EXPECT_EQ(ops_of(g),
            (Ops{"expand.conv(input)", "expand.norm(expand.conv)", "expand.act(expand.norm)",
                 "depthwise.conv(expand.act)", "depthwise.norm(depthwise.conv)", "depthwise.act(depthwise.norm)",
                 "se.pool(depthwise.act)", "se.fc1(se.pool)", "se.act(se.fc1)", "se.fc2(se.act)", "se.gate(se.fc2)",
                 "se.scale(depthwise.act, se.gate)", "project.conv(se.scale)", "project.norm(project.conv)"}));
  EXPECT_EQ(op_named(g, "se.fc1").conv.out_channels, 24);
  EXPECT_TRUE(op_named(g, "se.fc1").conv.bias);
  EXPECT_EQ(op_named(g, "se.act").kind, OpKind::relu);
  EXPECT_EQ(op_named(g, "se.gate").kind, OpKind::hardsigmoid);
  EXPECT_EQ(op_named(g, "depthwise.conv").conv.kernel, (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(op_named(g, "depthwise.conv").conv.padding, (std::vector<int64_t>{2, 2}));
}

TEST(TorchvisionKinds, MbconvSqueezesInputChannelsAndDropsPathsBeforeTheShortcut) {
  // EfficientNet-B0's 24 -> 24 block: hidden make_divisible(144) = 144, squeeze 24 // 4 = 6.
  const Graph g = graph_of("in_channels: 24, out_channels: 24", "{kind: mbconv, drop_path: 0.025}");
  EXPECT_EQ(op_named(g, "se.fc1").conv.out_channels, 6);
  EXPECT_EQ(op_named(g, "se.act").kind, OpKind::silu);
  EXPECT_EQ(op_named(g, "se.gate").kind, OpKind::sigmoid);
  EXPECT_EQ(op_named(g, "depthwise.conv").conv.out_channels, 144);
  const Ops all = ops_of(g);
  const Ops tail(all.end() - 3, all.end());
  EXPECT_EQ(tail, (Ops{"project.norm(project.conv)", "drop_path(project.norm)", "add(drop_path, input)"}));
  EXPECT_DOUBLE_EQ(op_named(g, "drop_path").dropout_p, 0.025);
  // At drop_path 0 (torchvision's block 0) the sum takes the projection itself; with a stride, no sum.
  EXPECT_EQ(graph_of("in_channels: 24, out_channels: 24", "mbconv").ops.back().inputs.size(), 2u);
  EXPECT_EQ(ops_of(graph_of("in_channels: 24, out_channels: 24", "mbconv")).back(), "add(project.norm, input)");
  EXPECT_EQ(graph_of("in_channels: 16, out_channels: 24, stride: 2", "mbconv").ops.back().name, "project.norm");
  // se_ratio 0: no squeeze-excitation.
  for (const Op& op : graph_of("in_channels: 16, out_channels: 16", "{kind: mbconv, se_ratio: 0}").ops)
    EXPECT_EQ(op.name.rfind("se.", 0), std::string::npos) << op.name;
}

TEST(TorchvisionKinds, FusedMbconvIsOneConvAtExpansionOne) {
  const Graph wide = graph_of("in_channels: 24, out_channels: 24", "fused_mbconv");
  EXPECT_EQ(ops_of(wide), (Ops{"expand.conv(input)", "expand.norm(expand.conv)", "expand.act(expand.norm)",
                               "project.conv(expand.act)", "project.norm(project.conv)", "add(project.norm, input)"}));
  EXPECT_EQ(op_named(wide, "expand.conv").conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(op_named(wide, "expand.conv").conv.out_channels, 96);
  // EfficientNetV2-S's first stage: FusedMBConv(expand 1, 24 -> 24): one 3x3 conv, BN, SiLU, + input.
  EXPECT_EQ(ops_of(graph_of("in_channels: 24, out_channels: 24", "{kind: fused_mbconv, expand: 1}")),
            (Ops{"conv.conv(input)", "conv.norm(conv.conv)", "conv.act(conv.norm)", "add(conv.act, input)"}));
}

TEST(TorchvisionKinds, ConvnextIsCnblock) {
  const Graph g =
      graph_of("in_channels: 16, out_channels: 16, kernel: 7, padding: same", "{kind: convnext, drop_path: 0.1}");
  EXPECT_EQ(ops_of(g), (Ops{"dwconv(input)", "norm(dwconv)", "pwconv1(norm)", "act(pwconv1)", "pwconv2(act)",
                            "layer_scale(pwconv2)", "drop_path(layer_scale)", "add(drop_path, input)"}));
  EXPECT_DOUBLE_EQ(op_named(g, "norm").norm.eps, 1e-6);
  EXPECT_EQ(op_named(g, "act").kind, OpKind::gelu);
  // CNBlock(16), counted by hand: depthwise 7x7 16x49 + 16, layer norm 2x16, Linear 16x64 + 64,
  // Linear 64x16 + 16, layer scale 16.
  EXPECT_EQ(params_of(g), 16 * 49 + 16 + 32 + 16 * 64 + 64 + 64 * 16 + 16 + 16);
  EXPECT_NE(refusal("in_channels: 16, out_channels: 32", "convnext").find("keeps its shape"), std::string::npos);
}

TEST(TorchvisionKinds, ShufflenetUnitSplitsAtStrideOneAndBranchesAtStrideTwo) {
  EXPECT_EQ(
      ops_of(graph_of("in_channels: 16, out_channels: 16", "shufflenet_unit")),
      (Ops{"split.0(input)", "split.1(input)", "branch2.pw1.conv(split.1)", "branch2.pw1.norm(branch2.pw1.conv)",
           "branch2.pw1.act(branch2.pw1.norm)", "branch2.dw.conv(branch2.pw1.act)", "branch2.dw.norm(branch2.dw.conv)",
           "branch2.pw2.conv(branch2.dw.norm)", "branch2.pw2.norm(branch2.pw2.conv)",
           "branch2.pw2.act(branch2.pw2.norm)", "cat(split.0, branch2.pw2.act)", "shuffle(cat)"}));
  const Graph down = graph_of("in_channels: 24, out_channels: 116, stride: 2", "shufflenet_unit");
  EXPECT_EQ(ops_of(down).front(), "branch1.dw.conv(input)");
  EXPECT_EQ(op_named(down, "branch1.pw.conv").conv.out_channels, 58);
  EXPECT_EQ(ops_of(down).back(), "shuffle(cat)");
  EXPECT_EQ(op_named(down, "cat").inputs.size(), 2u);
  // torchvision's InvertedResidual(24, 116, 2), counted by hand: branch1 3x3 dw 24x9 + BN 48, 1x1
  // 24x58 + BN 116; branch2 1x1 24x58 + BN 116, 3x3 dw 58x9 + BN 116, 1x1 58x58 + BN 116.
  EXPECT_EQ(params_of(down), 216 + 48 + 1392 + 116 + 1392 + 116 + 522 + 116 + 3364 + 116);
  EXPECT_NE(refusal("in_channels: 16, out_channels: 32", "shufflenet_unit").find("must equal out_channels"),
            std::string::npos);
  EXPECT_NE(refusal("in_channels: 16, out_channels: 15, stride: 2", "shufflenet_unit").find("is odd"),
            std::string::npos);
}

TEST(TorchvisionKinds, DensenetLayerConcatenatesItsGrowthToItsInput) {
  const Graph g = graph_of("in_channels: 64, out_channels: 96", "densenet_layer");
  EXPECT_EQ(ops_of(g), (Ops{"norm1(input)", "relu1(norm1)", "conv1(relu1)", "norm2(conv1)", "relu2(norm2)",
                            "conv2(relu2)", "cat(input, conv2)"}));
  // DenseNet-121's first layer, counted by hand: BN 2x64, 1x1 64x128, BN 2x128, 3x3 128x32x9.
  EXPECT_EQ(params_of(g), 128 + 64 * 128 + 256 + 128 * 32 * 9);
  EXPECT_NE(refusal("in_channels: 64, out_channels: 64", "densenet_layer").find("growth"), std::string::npos);
}

TEST(TorchvisionKinds, TheirOwnShortcutReplacesTheBlocksResidualAndDropout) {
  // The block's residual and dropout are for the classic kinds beside them: an MBConv keeps
  // torchvision's one shortcut and no element dropout.
  const Graph g = graph_of("in_channels: 16, out_channels: 16, residual: true, dropout: 0.2", "mbconv");
  EXPECT_EQ(ops_of(g).back(), "add(project.norm, input)");
  for (const Op& op : g.ops) EXPECT_NE(op.kind, OpKind::dropout) << op.name;
}

TEST(TorchvisionKinds, RefuseBadParametersWhereTheyAreWritten) {
  const std::string bad = refusal("in_channels: 16, out_channels: 16", "{kind: mbconv, expand: 0.5}");
  EXPECT_NE(bad.find("kinds.yaml:2:"), std::string::npos) << bad;
  EXPECT_NE(bad.find("expand must be in [1, 64]"), std::string::npos) << bad;
  const std::string act = refusal("in_channels: 16, out_channels: 16", "{kind: inverted_residual, act: swish}");
  EXPECT_NE(act.find("act"), std::string::npos) << act;
  EXPECT_NE(refusal("in_channels: 16, out_channels: 16", "{kind: convnext, drop_path: 1}").find("[0, 1)"),
            std::string::npos);
  EXPECT_NE(
      refusal("in_channels: 16, out_channels: 16", "{kind: inverted_residual, expand: 4, hidden: 72}").find("not both"),
      std::string::npos);
}

}  // namespace
}  // namespace convbench
