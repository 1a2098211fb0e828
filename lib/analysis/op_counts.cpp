#include "analysis/op_counts.hpp"

#include "analysis/checked_math.hpp"
#include "graph/autograd_rules.hpp"

namespace convbench {

DirectionCounts& DirectionCounts::operator+=(const DirectionCounts& o) {
  forward = checked_add(forward, o.forward);
  backward_data = checked_add(backward_data, o.backward_data);
  backward_weight = checked_add(backward_weight, o.backward_weight);
  return *this;
}

namespace {

int64_t numel(const TensorDesc& d) {
  int64_t n = 1;
  for (int64_t x : d.shape) n = checked_mul(n, x);
  return n;
}

int64_t bytes(const TensorDesc& d) { return checked_mul(numel(d), element_bytes(d.dtype)); }

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n = checked_mul(n, x);
  return n;
}

}  // namespace

OpCounts count_op(const Graph& graph, const Op& op, const std::vector<bool>& input_requires_grad, bool training) {
  OpCounts c;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const TensorDesc& out = graph.desc(op.output);
  const int64_t out_n = numel(out);
  const bool any_input_grad = [&] {
    for (bool b : input_requires_grad)
      if (b) return true;
    return false;
  }();
  for (int p : op.params) c.params = checked_add(c.params, numel(graph.params[static_cast<size_t>(p)].desc));
  for (int b : op.buffers) c.buffers = checked_add(c.buffers, numel(graph.buffers[static_cast<size_t>(b)].desc));

  int64_t fwd_elem = 0, bwd_data_elem = 0, bwd_weight_elem = 0;
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose: {
      const int64_t k = product(op.conv.kernel);
      const int64_t cin = in.channels(), cout = out.channels();
      // Transposed conv: every input element scatters into Cout/g outputs over the kernel.
      const int64_t spatial = op.kind == OpKind::conv ? out.spatial_size() : in.spatial_size();
      const int64_t macs =
          checked_mul(checked_mul(checked_mul(checked_mul(in.batch(), cout), cin / op.conv.groups), k), spatial);
      c.macs.forward = macs;
      c.macs.backward_data = input_requires_grad.at(0) ? macs : 0;
      c.macs.backward_weight = macs;
      if (op.conv.bias) {
        fwd_elem = out_n;
        bwd_weight_elem = out_n;
      }
      break;
    }
    case OpKind::batch_norm:
    case OpKind::group_norm:
      fwd_elem = checked_mul(out_n, training ? 5 : 2);
      bwd_data_elem = any_input_grad ? checked_mul(out_n, 6) : 0;
      bwd_weight_elem = checked_mul(out_n, 3);
      break;
    case OpKind::relu:
    case OpKind::dropout:
      fwd_elem = out_n;
      bwd_data_elem = any_input_grad ? out_n : 0;
      break;
    case OpKind::leaky_relu:
      fwd_elem = checked_mul(out_n, 2);
      bwd_data_elem = any_input_grad ? checked_mul(out_n, 2) : 0;
      break;
    case OpKind::add: fwd_elem = out_n; break;
    case OpKind::sub:
      fwd_elem = out_n;
      bwd_data_elem = input_requires_grad.at(1) ? out_n : 0;
      break;
    case OpKind::concat: break;
    case OpKind::max_pool: fwd_elem = checked_mul(out_n, product(op.pool.kernel) - 1); break;
    case OpKind::avg_pool:
      fwd_elem = checked_mul(out_n, product(op.pool.kernel));
      bwd_data_elem = any_input_grad ? fwd_elem : 0;
      break;
    case OpKind::upsample: bwd_data_elem = any_input_grad ? out_n - numel(in) : 0; break;
  }
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
    const SavedTensors saved = saved_tensors(op);
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
