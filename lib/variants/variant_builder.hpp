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

// The spec as its rows run on `device` (a --device name: reference, cpu, cuda): on cuda, AMP
// variants follow CUDA autocast's rules (group norm and upsample in float32, where CPU autocast
// lets them follow their input), so their counts, predicted memory and graph hash are the
// device's. compare, advise and analyze --device apply it.
Spec spec_on_device(const Spec& spec, const std::string& device);

}  // namespace convbench
