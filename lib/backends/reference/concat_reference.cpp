// Concatenation along channels: input i occupies output channels [offset_i, offset_i + C_i); and
// its inverse, slice: the output is input channels [start, start + length).
#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

// Copies channels between a part (N, C_part, S) and the whole (N, C_whole, S) at channel `offset`.
enum class Direction { part_to_whole, whole_to_part };

void copy_channels(Direction dir, std::vector<double>& part, std::vector<double>& whole, int64_t batch,
                   int64_t part_channels, int64_t whole_channels, int64_t offset, int64_t spatial) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < part_channels; ++c)
      for (int64_t s = 0; s < spatial; ++s) {
        double& p = part[(n * part_channels + c) * spatial + s];
        double& w = whole[(n * whole_channels + offset + c) * spatial + s];
        if (dir == Direction::part_to_whole)
          w = p;
        else
          p = w;
      }
}

}  // namespace

void concat_forward(const ForwardCall& call) {
  Tensor& out = required(call.output, "concat", "output");
  const TensorDesc& d = out.desc;
  std::vector<double> y(static_cast<size_t>(d.numel()));
  int64_t offset = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& xt = required(call.inputs[i], "concat", "input");
    std::vector<double> x = load(xt);
    copy_channels(Direction::part_to_whole, x, y, d.batch(), xt.desc.channels(), d.channels(), offset,
                  d.spatial_size());
    offset += xt.desc.channels();
  }
  store(out, y);
}

// Splits g by channels into the inputs' gradients that are asked for.
void concat_backward(const BackwardCall& call) {
  const TensorDesc& d = call.graph.desc(call.op.output);
  std::vector<double> g = load(required(call.grad_output, "concat", "grad_output"));
  int64_t offset = 0;
  for (size_t i = 0; i < call.op.inputs.size(); ++i) {
    const TensorDesc& in = call.graph.desc(call.op.inputs[i]);
    if (Tensor* grad_x = optional_at(call.grad_inputs, i)) {
      std::vector<double> gx(static_cast<size_t>(in.numel()));
      copy_channels(Direction::whole_to_part, gx, g, d.batch(), in.channels(), d.channels(), offset, d.spatial_size());
      store(*grad_x, gx);
    }
    offset += in.channels();
  }
}

namespace {

void slice_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "slice", "input");
  Tensor& out = required(call.output, "slice", "output");
  std::vector<double> x = load(xt);
  std::vector<double> y(static_cast<size_t>(out.desc.numel()));
  copy_channels(Direction::whole_to_part, y, x, xt.desc.batch(), out.desc.channels(), xt.desc.channels(),
                call.op.slice.start, xt.desc.spatial_size());
  store(out, y);
}

// The input's gradient is zero outside the slice's channels.
void slice_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const TensorDesc& in = grad_x->desc;
  std::vector<double> g = load(required(call.grad_output, "slice", "grad_output"));
  std::vector<double> gx(static_cast<size_t>(in.numel()), 0.0);
  copy_channels(Direction::part_to_whole, g, gx, in.batch(), call.op.slice.length, in.channels(), call.op.slice.start,
                in.spatial_size());
  store(*grad_x, gx);
}

}  // namespace

void register_concat_kernels(KernelTable& table) {
  table.add(OpKind::concat, {concat_forward, concat_backward});
  table.add(OpKind::slice, {slice_forward, slice_backward});
}

}  // namespace convbench::reference
