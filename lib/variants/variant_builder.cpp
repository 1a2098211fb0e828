#include "variants/variant_builder.hpp"

#include "ops/graph_builder.hpp"
#include "spec/block_kind_registry.hpp"
#include "variants/folded_variant.hpp"
#include "variants/memory_policy.hpp"
#include "variants/network_builder.hpp"

namespace convbench {
namespace {

// The graph the variant's kind and ops give, before any memory policy.
Graph build_plain_graph(const BlockSpec& block, const VariantSpec& v, std::vector<RecomputeSegment>* slots) {
  if (block.network) return build_network_graph(block, v, slots);
  const BlockKindDefinition& kind = block_kind(v.kind);
  if (kind.folds_another) return build_folded_variant(block, v).graph;
  try {
    GraphBuilder b(block.name + "/" + v.name, block_input(block));
    // With layout_conversion: boundary, the block's own ops run in its layout between two
    // conversions from and back to the network's channels-first layout.
    const bool convert = converts_at_boundary(block);
    const int x = convert ? b.convert_layout(kToBlockLayoutOp, b.input()) : b.input();
    const auto finish = [&](int y) { return b.finish(convert ? b.convert_layout(kFromBlockLayoutOp, y) : y); };
    if (kind.block_ops) return finish(kind.block_ops(b, block, v, x));
    BlockAssembler a(b, block);
    return finish(a.finish_main_path(x, kind.main_path(a, v, x)));
  } catch (const GraphError& e) {
    throw InputError(v.where, v.key_path, e.what());
  }
}

}  // namespace

Graph build_variant_graph(const BlockSpec& block, const VariantSpec& v) {
  std::vector<RecomputeSegment> slots;
  Graph g = build_plain_graph(block, v, &slots);
  const MemoryPolicyChoice& policy = memory_policy_of(block, v);
  try {
    apply_memory_policy(g, policy.policy, block.mode == RunMode::train, slots);
  } catch (const PolicyError& e) {
    // A policy given for several variants (by the block, `defaults` or a sweep) says which one.
    std::vector<std::string> notes;
    if (!v.memory_policy) notes.push_back("variant \"" + v.name + "\"");
    if (policy.key_path.rfind(block.key_path, 0) != 0)
      notes.push_back((block.network ? "network \"" : "block \"") + block.name + "\"");
    if (!block.point.empty()) notes.push_back("sweep point " + point_label(block));
    std::string context;
    for (const std::string& n : notes) context += (context.empty() ? " (for " : ", ") + n;
    throw InputError(policy.where, policy.key_path, e.what() + context + (context.empty() ? "" : ")"));
  }
  return g;
}

Graph build_plain_variant_graph(const BlockSpec& block, const VariantSpec& v) {
  return build_plain_graph(block, v, nullptr);
}

}  // namespace convbench
