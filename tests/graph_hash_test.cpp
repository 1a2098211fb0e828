// A graph's hash keys every history series (lib/history/README.md), so a change to how ops are
// written into it must leave the graphs users already have under the same hash. Pinned here:
// app/README.md's standard block, whose hash a committed results file recorded
// (tests/data/doc-examples/app/cf.json), and what a batch norm's eps and momentum add only when
// they are not PyTorch's defaults.
#include <gtest/gtest.h>

#include <string>

#include "spec/spec_loader.hpp"
#include "variants/graph_hash.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

Graph standard_graph(const std::string& text) {
  const Spec spec = parse_spec_text(text, "hash.yaml");
  return build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
}

const std::string kSmallBlock =
    "blocks:\n"
    "  - name: small\n"
    "    dims: 2\n"
    "    batch: 8\n"
    "    in_channels: 32\n"
    "    out_channels: 64\n"
    "    size: 28\n"
    "    layout: channels_first\n"
    "    variants: [standard]\n";

TEST(GraphHash, ARecordedBlockKeepsItsHash) {
  EXPECT_EQ(graph_hash(standard_graph(kSmallBlock), true),
            "2c7932ff10eea51bb70a4ed63874b71075aa572accc556b8db7d326d7b03e669");
}

TEST(GraphHash, BatchNormConstantsEnterOnlyWhenNotTheDefaults) {
  const auto custom = [](const std::string& bn) {
    return standard_graph(
        "blocks:\n"
        "  - name: b\n"
        "    batch: 2\n"
        "    in_channels: 4\n"
        "    out_channels: 4\n"
        "    size: 6\n"
        "    variants:\n"
        "      - kind: custom\n"
        "        ops:\n"
        "          - {op: conv, name: c, kernel: 3}\n"
        "          - {op: batch_norm, name: bn" +
        bn + "}\n");
  };
  const std::string plain = graph_canonical_text(custom(""), true);
  EXPECT_EQ(graph_canonical_text(custom(", eps: 0.00001, momentum: 0.1"), true), plain);
  EXPECT_EQ(plain.find("eps"), std::string::npos) << plain;
  const std::string v3 = graph_canonical_text(custom(", eps: 0.001, momentum: 0.01"), true);
  EXPECT_NE(v3.find("{\"eps\":0.001,\"momentum\":0.01}"), std::string::npos) << v3;
  EXPECT_NE(graph_hash(custom(", eps: 0.001"), true), graph_hash(custom(""), true));
}

}  // namespace
}  // namespace convbench
