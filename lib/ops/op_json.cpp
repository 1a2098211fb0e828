#include "ops/op_json.hpp"

#include "ops/op_registry.hpp"

namespace convbench {

void add_op_attributes(const Op& op, nlohmann::ordered_json& out) {
  const OpDefinition& def = op_definition(op.kind);
  if (!def.attributes) return;
  const nlohmann::ordered_json attributes = def.attributes(op);  // kept alive while its items are read
  for (const auto& [key, value] : attributes.items()) out[key] = value;
}

nlohmann::ordered_json op_input_names(const Graph& graph, const Op& op) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (int v : op.inputs) names.push_back(graph.values.at(static_cast<size_t>(v)).name);
  return names;
}

}  // namespace convbench
