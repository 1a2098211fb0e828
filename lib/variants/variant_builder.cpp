#include "variants/variant_builder.hpp"

#include "ops/graph_builder.hpp"
#include "spec/block_kind_registry.hpp"
#include "variants/autocast_graph.hpp"
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
    if (kind.own_shortcut) return finish(kind.main_path(a, v, x));
    return finish(a.finish_main_path(x, kind.main_path(a, v, x)));
  } catch (const GraphError& e) {
    throw InputError(v.where, v.key_path, e.what());
  }
}

// The variant's graph under its precision: an AMP mode rewrites the float32 graph as
// torch.autocast runs it. Refused, at the `precision` key, beside a dtype (AMP's storage is
// float32 by definition, so a dtype there is either redundant or a contradiction) and on an op
// without an autocast rule.
Graph with_precision(Graph g, const BlockSpec& block, const VariantSpec& v, std::vector<RecomputeSegment>* slots) {
  const PrecisionChoice& choice = precision_of(block, v);
  if (choice.precision == Precision::plain) return g;
  const std::string mode(to_string(choice.precision));
  if (!block.dtype_key_path.empty())
    throw InputError(choice.where, choice.key_path,
                     "precision " + mode + " keeps float32 weights and casts per op as torch.autocast does; it " +
                         "cannot be combined with dtype " + std::string(to_string(block.dtype)) + " (given at " +
                         block.dtype_key_path + ", line " + std::to_string(block.dtype_where.line) +
                         "): remove one of them");
  try {
    // The reference and cpu backends run CPU autocast's rules, which the CPU peer checks; rows
    // on the cuda device CUDA's (BlockSpec::autocast_device).
    return apply_autocast(g, choice.precision, block.autocast_device, slots);
  } catch (const AutocastError& e) {
    throw InputError(choice.where, choice.key_path,
                     "precision " + mode + ": " + e.what() + " (variant \"" + v.name + "\")");
  } catch (const GraphError& e) {
    throw InputError(v.where, v.key_path, e.what());
  }
}

}  // namespace

Spec spec_on_device(const Spec& spec, const std::string& device) {
  Spec s = spec;
  if (device == "cuda")
    for (BlockSpec& block : s.blocks) block.autocast_device = AutocastDevice::cuda;
  return s;
}

Graph build_variant_graph(const BlockSpec& block, const VariantSpec& v) {
  std::vector<RecomputeSegment> slots;
  Graph g = with_precision(build_plain_graph(block, v, &slots), block, v, &slots);
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
  return with_precision(build_plain_graph(block, v, nullptr), block, v, nullptr);
}

}  // namespace convbench
