// Turns a block spec and one of its variants into an op graph, with the exact op sequences of
// README.md "Variants" (so that counts match PyTorch modules built the same way).
#pragma once

#include "graph/graph.hpp"
#include "spec/spec.hpp"

namespace convbench {

// Throws InputError located at the variant (or custom op) when the graph is invalid, and at the
// `memory_policy` key when the variant's memory policy cannot apply to it.
Graph build_variant_graph(const BlockSpec& block, const VariantSpec& variant);
// The same graph without its memory policy: what a transformed variant is compared with.
Graph build_plain_variant_graph(const BlockSpec& block, const VariantSpec& variant);

// The op sequence of a variant kind, for `convbench list`.
struct VariantKindInfo {
  const char* kind;
  const char* parameters;
  std::string ops;  // for custom: every op kind in the registry
};
const std::vector<VariantKindInfo>& variant_kinds();

}  // namespace convbench
