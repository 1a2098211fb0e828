#include "ops/autograd_rules.hpp"

#include "ops/op_registry.hpp"

namespace convbench {

SavedTensors saved_tensors(const Op& op) { return op_definition(op.kind).saved; }

std::vector<TensorDesc> aux_tensors(const Graph& graph, const Op& op) {
  const OpDefinition& d = op_definition(op.kind);
  return d.aux ? d.aux(graph, op) : std::vector<TensorDesc>{};
}

GradFlow grad_flow(const Op& op, int position) {
  const OpDefinition& d = op_definition(op.kind);
  return d.grad_flow ? d.grad_flow(position) : GradFlow::compute;
}

bool output_aliases_input(const Op& op, bool training) {
  return !training && op_definition(op.kind).identity_in_inference;
}

}  // namespace convbench
