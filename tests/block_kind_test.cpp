// The block kind registry: every kind of spec/block_kinds.def has one definition, found by name,
// which says everything the parsers, builders, resolved spec and `convbench list` ask of it.
#include <gtest/gtest.h>

#include <algorithm>

#include "spec/block_kind_registry.hpp"
#include "spec/spec_loader.hpp"
#include "variants/resolved_spec.hpp"

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

}  // namespace
}  // namespace convbench
