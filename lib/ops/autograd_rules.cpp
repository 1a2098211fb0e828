#include "ops/autograd_rules.hpp"

#include "ops/op_registry.hpp"

namespace convbench {

SavedTensors saved_tensors(const Op& op, const std::vector<bool>& input_requires_grad) {
  const OpDefinition& d = op_definition(op.kind);
  if (op.in_place && d.saved_in_place) return *d.saved_in_place;
  return d.saved_for ? d.saved_for(input_requires_grad) : d.saved;
}

std::vector<bool> inputs_requiring_grad(const Op& op, const std::vector<bool>& value_requires_grad) {
  std::vector<bool> flags;
  for (int v : op.inputs) flags.push_back(value_requires_grad.at(static_cast<size_t>(v)));
  return flags;
}

std::vector<TensorDesc> aux_tensors(const Graph& graph, const Op& op) {
  const OpDefinition& d = op_definition(op.kind);
  return d.aux ? d.aux(graph, op) : std::vector<TensorDesc>{};
}

std::string aux_tensor_name(const Op& op, size_t index) {
  const OpDefinition& d = op_definition(op.kind);
  return (index < d.aux_names.size() ? d.aux_names[index] : "saved tensor " + std::to_string(index)) + " of " + op.name;
}

GradFlow grad_flow(const Op& op, int position) {
  const OpDefinition& d = op_definition(op.kind);
  return d.grad_flow ? d.grad_flow(position) : GradFlow::compute;
}

bool output_aliases_input(const Op& op, bool training) {
  return !training && op_definition(op.kind).identity_in_inference;
}

}  // namespace convbench
