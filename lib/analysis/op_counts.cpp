#include "analysis/op_counts.hpp"

#include "graph/checked_math.hpp"
#include "ops/autograd_rules.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

DirectionCounts& DirectionCounts::operator+=(const DirectionCounts& o) {
  forward = checked_add(forward, o.forward);
  backward_data = checked_add(backward_data, o.backward_data);
  backward_weight = checked_add(backward_weight, o.backward_weight);
  recompute = checked_add(recompute, o.recompute);
  return *this;
}

OpCounts& OpCounts::operator+=(const OpCounts& o) {
  params = checked_add(params, o.params);
  buffers = checked_add(buffers, o.buffers);
  buffer_counters = checked_add(buffer_counters, o.buffer_counters);
  macs += o.macs;
  flops += o.flops;
  bytes_forward = checked_add(bytes_forward, o.bytes_forward);
  bytes_backward = checked_add(bytes_backward, o.bytes_backward);
  return *this;
}

namespace {

int64_t bytes(const TensorDesc& d) { return checked_mul(count_elements(d), element_bytes(d.dtype)); }

}  // namespace

OpCounts count_op(const Graph& graph, const Op& op, const std::vector<bool>& input_requires_grad, bool training) {
  OpCounts c;
  const TensorDesc& out = graph.desc(op.output);
  const WorkQuery query{graph, op, input_requires_grad, training};
  const bool any_input_grad = query.any_input_grad();
  for (int p : op.params) c.params = checked_add(c.params, count_elements(graph.params[static_cast<size_t>(p)].desc));
  for (int b : op.buffers)
    c.buffers = checked_add(c.buffers, count_elements(graph.buffers[static_cast<size_t>(b)].desc));

  c.buffer_counters = op_definition(op.kind).pytorch_counter_elements;

  // The op's own work, from its definition (lib/ops/<op>.cpp).
  const OpWork work = op_definition(op.kind).work(query);
  c.macs = {work.macs.forward, work.macs.backward_data, work.macs.backward_weight};
  const int64_t fwd_elem = work.elementwise.forward, bwd_data_elem = work.elementwise.backward_data,
                bwd_weight_elem = work.elementwise.backward_weight;
  c.flops.forward = checked_add(checked_mul(2, c.macs.forward), fwd_elem);
  c.flops.backward_data = checked_add(checked_mul(2, c.macs.backward_data), bwd_data_elem);
  c.flops.backward_weight = checked_add(checked_mul(2, c.macs.backward_weight), bwd_weight_elem);
  if (!training) c.macs.backward_data = c.macs.backward_weight = c.flops.backward_data = c.flops.backward_weight = 0;

  // Forward traffic: inputs and parameters read, output written (aliases move nothing).
  int64_t param_bytes = 0;
  for (int p : op.params) param_bytes = checked_add(param_bytes, bytes(graph.params[static_cast<size_t>(p)].desc));
  if (!output_aliases_input(op, training)) {
    int64_t f = checked_add(bytes(out), param_bytes);
    for (int v : op.inputs) f = checked_add(f, bytes(graph.desc(v)));
    for (const TensorDesc& a : training ? aux_tensors(graph, op) : std::vector<TensorDesc>{})
      f = checked_add(f, bytes(a));
    c.bytes_forward = f;
  }
  if (training && (any_input_grad || !op.params.empty())) {
    // Backward traffic: grad_output and what was saved read, gradients written.
    const SavedTensors saved = saved_tensors(op, input_requires_grad);
    int64_t b = bytes(out);  // grad_output
    for (int pos : saved.inputs) b = checked_add(b, bytes(graph.desc(op.inputs[static_cast<size_t>(pos)])));
    if (saved.output) b = checked_add(b, bytes(out));
    for (const TensorDesc& a : aux_tensors(graph, op)) b = checked_add(b, bytes(a));
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (input_requires_grad[i] && grad_flow(op, static_cast<int>(i)) == GradFlow::compute)
        b = checked_add(b, bytes(graph.desc(op.inputs[i])));
    if (!op.params.empty()) b = checked_add(b, checked_mul(2, param_bytes));  // read + grads written
    c.bytes_backward = b;
  }
  return c;
}

}  // namespace convbench
