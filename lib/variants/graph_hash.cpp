#include "variants/graph_hash.hpp"

#include "ops/op_registry.hpp"
#include "util/sha256.hpp"

namespace convbench {
namespace {

std::string desc_text(const TensorDesc& d) {
  std::string s;
  for (size_t i = 0; i < d.shape.size(); ++i) s += (i ? "x" : "") + std::to_string(d.shape[i]);
  return s + " " + std::string(to_string(d.dtype)) + " " + std::string(to_string(d.layout));
}

// A parameter's or buffer's line. Its memory order is not named: a conv's weight follows its
// input's layout (ParamDecl::layout), which the input line already says, and the text stays what it
// was before weights followed it, so that every history series goes on across that change.
std::string stored_value_text(TensorDesc d) {
  d.layout = Layout::channels_first;
  return desc_text(d);
}

}  // namespace

std::string graph_canonical_text(const Graph& graph, bool training) {
  std::string text = "convbench.graph/1\ninput " + desc_text(graph.desc(graph.input)) + "\nmode " +
                     (training ? "train" : "infer") + "\n";
  for (const Op& op : graph.ops) {
    text += "op " + std::string(to_string(op.kind)) + " in";
    for (int v : op.inputs) text += " " + std::to_string(v);
    text += " out " + std::to_string(op.output) + " " + desc_text(graph.desc(op.output));
    // ordered_json keeps the definition's key order, so the same op always dumps the same text.
    // No attributes add nothing: batch_norm names eps and momentum only when they are not
    // PyTorch's defaults, so a default batch norm's line is what it was before it had any.
    if (const OpDefinition& def = op_definition(op.kind); def.attributes)
      if (const nlohmann::ordered_json a = def.attributes(op); !a.empty()) text += " " + a.dump();
    if (op.in_place) text += " in_place";
    if (op.param_cast) text += " param_cast " + std::string(to_string(*op.param_cast));
    text += "\n";
  }
  for (const Param& p : graph.params) text += "param " + stored_value_text(p.desc) + "\n";
  for (const Param& b : graph.buffers) text += "buffer " + stored_value_text(b.desc) + "\n";
  text += "output " + std::to_string(graph.output) + "\n";
  // Only a graph with a memory policy has these lines, so every other graph keeps its hash (and
  // its history series).
  if (graph.memory_policy != MemoryPolicy::none) {
    text += "memory_policy " + std::string(to_string(graph.memory_policy)) + "\n";
    for (const RecomputeSegment& s : graph.segments)
      text += "segment " + std::to_string(s.first_op) + " " + std::to_string(s.end_op) + "\n";
  }
  // Likewise only an AMP graph says so (its casts are ops above already; the device's rules
  // decided where they are).
  if (graph.precision != Precision::plain)
    text += "precision " + std::string(to_string(graph.precision)) + " " +
            std::string(to_string(graph.autocast_device)) + "\n";
  return text;
}

std::string graph_hash(const Graph& graph, bool training) { return sha256_hex(graph_canonical_text(graph, training)); }

}  // namespace convbench
