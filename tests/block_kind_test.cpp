// The block kind registry: every kind of spec/block_kinds.def has one definition, found by name,
// which says everything the parsers, builders, resolved spec and `convbench list` ask of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "spec/block_kind_registry.hpp"
#include "spec/spec_loader.hpp"
#include "variants/resolved_spec.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

TEST(BlockKinds, EveryKindHasOneDefinitionFoundByName) {
  const std::vector<std::string> listed = {
#define CONVBENCH_BLOCK_KIND(kind) #kind,
#include "spec/block_kinds.def"
#undef CONVBENCH_BLOCK_KIND
  };
  EXPECT_EQ(block_kind_names(), listed);
  ASSERT_EQ(block_kinds().size(), listed.size());
  for (const BlockKindDefinition* d : block_kinds()) {
    EXPECT_EQ(find_block_kind(d->name), d);
    EXPECT_EQ(&block_kind(d->name), d);
    EXPECT_FALSE(d->parameters_doc.empty()) << d->name;
    EXPECT_FALSE(d->ops_doc.empty()) << d->name;
    // One way to make its graph (the registry refuses a definition with none or two).
    EXPECT_EQ((d->main_path ? 1 : 0) + (d->block_ops ? 1 : 0) + (d->folds_another ? 1 : 0), 1) << d->name;
    // A kind with keys reads them and writes them in the resolved spec.
    EXPECT_EQ(d->keys.empty(), !d->read) << d->name;
    EXPECT_EQ(d->keys.empty(), !d->resolved) << d->name;
    if (d->required) {
      EXPECT_NE(std::find(d->keys.begin(), d->keys.end(), d->required->key), d->keys.end()) << d->name;
    }
  }
  EXPECT_EQ(find_block_kind("seperable"), nullptr);
  EXPECT_THROW(block_kind("seperable"), std::logic_error);
}

TEST(BlockKinds, NetworksTakeTheKindsThatSayNothingAgainstThem) {
  const std::vector<std::string> in_networks = block_kind_names(true);
  for (const BlockKindDefinition* d : block_kinds())
    EXPECT_EQ(std::count(in_networks.begin(), in_networks.end(), d->name), d->not_in_networks.empty() ? 1 : 0)
        << d->name;
  EXPECT_FALSE(block_kind("folded").not_in_networks.empty());
  EXPECT_FALSE(block_kind("branches").not_in_networks.empty());
}

// One variant of every kind: the resolved spec lists each of its keys, resolved.
TEST(BlockKinds, TheResolvedSpecListsEveryKeyOfEveryKind) {
#ifdef CONVBENCH_WITH_ONNX
  const std::string onnx_variant =
      "      - {kind: onnx, file: " + std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/onnx/conv-relu-8.onnx}\n";
#else
  const std::string onnx_variant;
#endif
  const Spec spec = parse_spec_text(R"(
blocks:
  - name: b
    batch: 2
    in_channels: 8
    out_channels: 8
    size: 8
    mode: infer
    variants:
      - standard
      - bottleneck
      - separable
      - {kind: grouped, groups: 2}
      - {kind: custom, ops: [{op: conv, name: c}, {op: relu, name: r}]}
      - {kind: branches, count: 2}
      - {kind: folded, of: branches}
      - repvgg
      - inverted_residual
      - {kind: inverted_residual, name: v3, hidden: 16, act: hardswish, se: true}
      - mbconv
      - fused_mbconv
      - convnext
      - shufflenet_unit
)" + onnx_variant + R"(
  - name: grows
    batch: 2
    in_channels: 8
    out_channels: 12
    size: 8
    variants: [densenet_layer]
)",
                                    "kinds.yaml");
  std::vector<std::string> kinds;
  for (const BlockSpec& block : spec.blocks)
    for (const VariantSpec& v : block.variants) kinds.push_back(v.kind);
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  std::vector<std::string> every = block_kind_names();
#ifndef CONVBENCH_WITH_ONNX
  std::erase(every, "onnx");  // built without ONNX: the kind exists only to refuse, saying why
#endif
  std::sort(kinds.begin(), kinds.end());
  std::sort(every.begin(), every.end());
  ASSERT_EQ(kinds, every) << "a kind this test does not try";
  const nlohmann::ordered_json doc = resolved_spec_json(spec);
  for (const nlohmann::ordered_json& block : doc["blocks"])
    for (const nlohmann::ordered_json& v : block["variants"]) {
      const BlockKindDefinition& kind = block_kind(v["kind"].get<std::string>());
      for (const std::string& key : kind.keys) EXPECT_TRUE(v.contains(key)) << kind.name << " lacks " << key;
    }
  for (const VariantSpec& v : spec.blocks[0].variants) EXPECT_EQ(folds_another(v), v.kind == "folded") << v.kind;
}

// Every variant of the spec's first block, at every sweep point; returns the most ops each kind had.
std::map<std::string, int64_t> check_counted_ops(const std::string& text) {
  const std::shared_ptr<const SourceNode> tree = parse_source_tree(text, "counted.yaml");
  const auto variants = Field(*tree, "", "counted.yaml").locate("blocks").items().at(0).get("variants");
  EXPECT_TRUE(variants.has_value());
  if (!variants) return {};
  const std::vector<int64_t> counted = counted_variant_ops(*variants);
  const Spec spec = parse_spec_text(text, "counted.yaml");
  EXPECT_GT(spec.blocks.size(), 1u);
  std::map<std::string, int64_t> most;
  for (const BlockSpec& block : spec.blocks) {
    EXPECT_EQ(block.variants.size(), counted.size());
    for (size_t i = 0; i < counted.size() && i < block.variants.size(); ++i) {
      const VariantSpec& v = block.variants[i];
      const int64_t ops = static_cast<int64_t>(build_variant_graph(block, v).ops.size());
      most[v.kind] = std::max(most[v.kind], ops);
      EXPECT_LE(ops, counted[i]) << v.name << " (" << v.kind << ") at " << block.point.size() << " swept fields";
    }
  }
  return most;
}

// The size check counts a variant's ops before anything is built, from its kind's counted_ops:
// every kind's graph, with each optional part present (dropout, a projected shortcut, the layout
// conversions at the block's boundary, squeeze-excitation, stochastic depth), has at most that
// many ops.
TEST(BlockKinds, CountedOpsBoundTheGraph) {
  const std::string sweep = R"(
sweep:
  dropout: [0, 0.25]
  layout: [channels_first, channels_last]
)";
  std::map<std::string, int64_t> most = check_counted_ops(sweep + R"(
  stride: [1, 2]
  out_channels: [8, 16]
blocks:
  - name: b
    batch: 2
    in_channels: 8
    out_channels: 8
    size: 8
    mode: train
    residual: true
    layout_conversion: boundary
    variants:
      - standard
      - bottleneck
      - {kind: bottleneck, name: b2, ratio: 2, groups: 2}
      - separable
      - {kind: separable, name: s2, multiplier: 2}
      - {kind: grouped, groups: 2}
      - {kind: branches, count: 2}
      - {kind: branches, name: br4, count: 4, split: none}
      - {kind: folded, name: folded, of: br4, fold: online}
      - repvgg
      - inverted_residual
      - {kind: inverted_residual, name: v3, hidden: 16, act: hardswish, se: true}
      - mbconv
      - {kind: mbconv, name: mb, drop_path: 0.2}
      - {kind: fused_mbconv, drop_path: 0.2}
      - {kind: fused_mbconv, name: fm1, expand: 1, drop_path: 0.2}
)");
  // ShuffleNetV2's stride-2 unit doubles the channels.
  most.merge(check_counted_ops(sweep + R"(
blocks:
  - name: down
    batch: 2
    in_channels: 8
    out_channels: 16
    stride: 2
    size: 8
    mode: train
    layout_conversion: boundary
    variants: [shufflenet_unit]
)"));
  // ConvNeXt's block, ShuffleNetV2's unit at stride 1 and this custom variant keep their
  // shape; DenseNet's layer grows the channels at stride 1.
  most.merge(check_counted_ops(sweep + R"(
blocks:
  - name: keeps
    batch: 2
    in_channels: 8
    out_channels: 8
    size: 8
    mode: train
    layout_conversion: boundary
    variants:
      - {kind: convnext, drop_path: 0.2}
      - shufflenet_unit
      - {kind: custom, ops: [{op: conv, name: c}, {op: batch_norm, name: n}, {op: relu, name: r}]}
)"));
  most.merge(check_counted_ops(sweep + R"(
blocks:
  - name: grows
    batch: 2
    in_channels: 8
    out_channels: 12
    size: 8
    mode: train
    layout_conversion: boundary
    variants: [densenet_layer]
)"));
  // Every kind but onnx (whose file is read after the count) was built here.
  std::vector<std::string> tried, every = block_kind_names();
  for (const auto& [kind, ops] : most) tried.push_back(kind);
  std::erase(every, "onnx");
  std::sort(every.begin(), every.end());
  EXPECT_EQ(tried, every) << "a kind this test does not build";
}

// A branches variant counts 2 x its count: a count in the billions is refused by the size check,
// before anything is read or built, and the sum of such counts over a sweep cannot wrap.
TEST(BlockKinds, AHugeBranchCountIsRefusedBeforeAnythingIsBuilt) {
  const std::string spec = R"(
sweep: {batch: [1, 2, 3, 4, 5, 6, 7, 8]}
blocks:
  - {name: b, batch: 1, in_channels: 8, out_channels: 8, size: 8,
     variants: [{kind: branches, count: 2147483648, split: none}, {kind: branches, count: 2147483648, split: none}]}
)";
  try {
    parse_spec_text(spec, "huge.yaml");
    FAIL() << "a spec of 2^32 branches was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ops in all, more than the limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convbench
