// custom: the variant's own op graph (`ops`, `output`), which is the whole block: the block's
// dropout and residual are not added to it. Its ops are read by the custom-op parser
// (custom_op_parser.cpp), each as its op's definition says; in a network their fields may refer
// to the slot, so the network builder reads them per slot and only their structure is checked here.
#include <map>
#include <stdexcept>

#include "ops/op_json.hpp"
#include "ops/op_registry.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/custom_op_graph.hpp"
#include "spec/variant_parser.hpp"

namespace convbench {
namespace {

// A network's custom variant: its ops as the file wrote them, checked for their structure (what
// their fields mean depends on the slot: variants/network_builder.cpp).
void read_network_custom_ops(const Field& v, VariantSpec& out) {
  const auto ops = v.get("ops");
  if (!ops) v.fail_missing("ops", " (a custom variant needs its list of ops)");
  for (const Field& op : ops->non_empty_list("ops")) {
    if (!op.is_map()) op.fail("expected a map with `op` and `name`, got " + op.describe());
    if (!op.get("op")) op.fail_missing("op");
    if (!op.get("name")) op.fail_missing("name", " (the name later ops and the op names in results use)");
    if (op.get("op")->is_string() && op.get("op")->node().text == "slot")
      op.get("op")->fail("a variant cannot contain a slot: it is what fills one");
  }
  if (auto f = v.get("output")) out.output = f->as_string();
}

}  // namespace

// The variant's ops, each added from its fields (its definition applies their defaults), reading
// the block input `x`; returns the value that is the variant's output.
int build_custom_ops(GraphBuilder& b, const BlockSpec& block, const VariantSpec& v, int x) {
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
      // The values its model file gives (kind onnx), each checked against the op's own size.
      for (const auto& [suffix, given] : s.values) b.give_values(s.name + "." + suffix, given);
    } catch (const GraphError& e) {
      throw InputError(s.where, s.key_path, e.what());
    }
  }
  const std::string out = v.output.empty() ? v.ops.back().name : v.output;
  auto it = values.find(out);
  if (it == values.end()) throw InputError(v.where, v.key_path + ".output", "no op is named \"" + out + "\"");
  return it->second;
}

static const Op& built_op_named(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops)
    if (op.name == name) return op;
  throw std::logic_error("resolved spec: custom op \"" + name + "\" is not in its variant's graph");
}

// A custom op with every field its kind uses, taken from the graph the variant builder made of
// it (what the defaults resolved to, not what the file said), as its definition spells them.
// The graph is the one before any memory policy: inplace_abn fuses a batch_norm with the
// leaky_relu after it, so that the activation is no op of the final graph and the norm another.
static nlohmann::ordered_json resolved_custom_op(const CustomOpSpec& s, const Graph& g) {
  nlohmann::ordered_json op = {{"op", s.op}, {"name", s.name}, {"inputs", s.inputs}};
  add_op_attributes(built_op_named(g, s.name), op);
  return op;
}

void write_resolved_custom_ops(const VariantSpec& v, const Graph& g, nlohmann::ordered_json& out) {
  nlohmann::ordered_json resolved = nlohmann::ordered_json::array();
  for (const CustomOpSpec& s : v.ops) resolved.push_back(resolved_custom_op(s, g));
  out["ops"] = std::move(resolved);
  out["output"] = v.output.empty() ? v.ops.back().name : v.output;
}

BlockKindDefinition define_custom_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "ops (required), output (last op)";
  std::string ops;  // every op kind a custom variant may use, from the op registry
  for (const OpDefinition* def : op_definitions())
    if (def->spec_op) ops += (ops.empty() ? "" : ", ") + std::string(def->name);
  d.ops_doc = "your ops: " + ops;
  d.keys = {"ops", "output"};
  d.required = RequiredParameter{"ops", "{kind: custom, ops: [...]}"};
  d.read = [](const Field& v, const BlockSpec* block, VariantSpec& out) {
    if (block)
      parse_custom_ops(v, *block, out);
    else
      read_network_custom_ops(v, out);
  };
  // In a network the resolved spec lists the ops as written (variants/resolved_spec.cpp): what they
  // resolve to differs from slot to slot.
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>& graph, nlohmann::ordered_json& out) {
    if (graph) write_resolved_custom_ops(v, graph(), out);
  };
  d.block_ops = build_custom_ops;
  // Its ops are the block (no dropout, no shortcut), and the two conversions at its boundary.
  d.counted_ops = [](const Field& v) -> int64_t {
    const auto ops = v.get("ops");
    return (ops && ops->is_sequence() ? static_cast<int64_t>(ops->node().items.size()) : 0) + 2;
  };
  return d;
}

}  // namespace convbench
