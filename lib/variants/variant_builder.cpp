#include "variants/variant_builder.hpp"

#include "ops/op_registry.hpp"

#include <map>

#include "ops/graph_builder.hpp"
#include "variants/block_assembly.hpp"
#include "variants/folded_variant.hpp"
#include "variants/memory_policy.hpp"
#include "variants/network_builder.hpp"

namespace convbench {
namespace {

// A custom variant's ops, each added from its fields (its definition applies their defaults),
// reading the block input `x`; returns the value that is the variant's output.
int build_custom(GraphBuilder& b, const BlockSpec& block, const VariantSpec& v, int x) {
  std::map<std::string, int> values{{"input", x}};
  for (const CustomOpSpec& s : v.ops) {
    try {
      if (converts_at_boundary(block) && (s.name == kToBlockLayoutOp || s.name == kFromBlockLayoutOp))
        throw GraphError(s.name +
                         ": the name of a layout conversion this block adds at its boundary "
                         "(layout_conversion: boundary); name the op otherwise");
      std::vector<int> in;
      for (const std::string& name : s.inputs) {
        auto it = values.find(name);
        if (it == values.end()) throw GraphError("input \"" + name + "\" is not defined before this op");
        in.push_back(it->second);
      }
      const OpDefinition* def = find_op_definition(s.op);
      if (!def) throw GraphError(s.name + ": unknown op kind \"" + s.op + "\"");
      values[s.name] = b.add_from_fields(def->kind, s.name, std::move(in), s.fields, block.kernel, block.bias);
    } catch (const GraphError& e) {
      throw InputError(s.where, s.key_path, e.what());
    }
  }
  const std::string out = v.output.empty() ? v.ops.back().name : v.output;
  auto it = values.find(out);
  if (it == values.end()) throw InputError(v.where, v.key_path + ".output", "no op is named \"" + out + "\"");
  return it->second;
}

// The graph the variant's kind and ops give, before any memory policy.
Graph build_plain_graph(const BlockSpec& block, const VariantSpec& v, std::vector<RecomputeSegment>* slots) {
  if (block.network) return build_network_graph(block, v, slots);
  if (v.kind == "folded") return build_folded_variant(block, v).graph;
  try {
    GraphBuilder b(block.name + "/" + v.name, block_input(block));
    // With layout_conversion: boundary, the block's own ops run in its layout between two
    // conversions from and back to the network's channels-first layout.
    const bool convert = converts_at_boundary(block);
    const int x = convert ? b.convert_layout(kToBlockLayoutOp, b.input()) : b.input();
    const auto finish = [&](int y) { return b.finish(convert ? b.convert_layout(kFromBlockLayoutOp, y) : y); };
    if (v.kind == "custom") return finish(build_custom(b, block, v, x));
    BlockAssembler a(b, block);
    return finish(a.finish_main_path(x, a.main_path(v, x)));
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

const std::vector<VariantKindInfo>& variant_kinds() {
  static const std::vector<VariantKindInfo> kinds = [] {
    std::string ops;  // every op kind a custom variant may use, from the registry
    for (const OpDefinition* d : op_definitions())
      if (d->spec_op) ops += (ops.empty() ? "" : ", ") + std::string(d->name);
    return std::vector<VariantKindInfo>{
        {"standard", "(none)", "CNA(k, stride): conv k -> norm -> act"},
        {"bottleneck", "ratio (4), groups (1)",
         "CNA(1x1, in->mid=out/ratio) -> CNA(k, mid->mid, stride, groups) -> CNA(1x1, mid->out)"},
        {"separable", "multiplier (1)", "CNA(k, in->in*multiplier, groups=in, stride) -> CNA(1x1, ->out)"},
        {"grouped", "groups (required)", "CNA(k, stride, groups)"},
        {"custom", "ops (required), output (last op)", "your ops: " + ops},
        {"branches", "count (required), split (channels | none), out_channels (out/count)",
         "count x [slice (split: channels) -> conv k, in/count or in -> out/count], concat -> norm -> act"},
        {"folded", "of (required), fold (once in infer blocks, online in train blocks)",
         "the variant `of` with every linear region (convs, batch norm in inference, add, sub, concat, slice) "
         "folded into one conv: computed once at build time, or from the branch weights in every step (online)"},
    };
  }();
  return kinds;
}

}  // namespace convbench
