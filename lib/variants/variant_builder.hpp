// Turns a block spec and one of its variants into an op graph, as the variant's kind defines it
// (spec/block_kind.hpp: the exact op sequences of configs/README.md "Variants", so that counts
// match PyTorch modules built the same way), with the block's layout conversions and memory policy.
#pragma once

#include "graph/graph.hpp"
#include "spec/spec.hpp"

namespace convbench {

// Throws InputError located at the variant (or custom op) when the graph is invalid, and at the
// `memory_policy` key when the variant's memory policy cannot apply to it.
Graph build_variant_graph(const BlockSpec& block, const VariantSpec& variant);
// The same graph without its memory policy: what a transformed variant is compared with.
Graph build_plain_variant_graph(const BlockSpec& block, const VariantSpec& variant);

}  // namespace convbench
