// Nearest-neighbour upsampling by an integer scale: output position o reads input position
// o / scale along every spatial dim (PyTorch's nearest mode for integer scale factors).
#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

// The flat input position every flat output position reads.
std::vector<int64_t> nearest_sources(const Extent3& in, const Extent3& out, int64_t scale) {
  std::vector<int64_t> src(static_cast<size_t>(volume(out)));
  for (int64_t o = 0; o < volume(out); ++o) {
    const Extent3 at = unflatten(o, out);
    // (The padded depth of a 2-D tensor is 1 on both sides: 0 / scale = 0.)
    src[o] = ((at[0] / scale) * in[1] + at[1] / scale) * in[2] + at[2] / scale;
  }
  return src;
}

}  // namespace

void upsample_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "upsample", "input");
  Tensor& yt = required(call.output, "upsample", "output");
  const Extent3 in = spatial_extent(xt.desc), out = spatial_extent(yt.desc);
  const std::vector<int64_t> src = nearest_sources(in, out, call.op.upsample_scale);
  const int64_t planes = yt.desc.batch() * yt.desc.channels();
  const int64_t in_size = volume(in), out_size = volume(out);
  const std::vector<double> x = load(xt);
  std::vector<double> y(static_cast<size_t>(yt.desc.numel()));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < out_size; ++o) y[p * out_size + o] = x[p * in_size + src[o]];
  store(yt, y);
}

// Each input position receives the sum of the gradient over its scale^d block.
void upsample_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const TensorDesc& out_desc = call.graph.desc(call.op.output);
  const Extent3 in = spatial_extent(grad_x->desc), out = spatial_extent(out_desc);
  const std::vector<int64_t> src = nearest_sources(in, out, call.op.upsample_scale);
  const int64_t planes = out_desc.batch() * out_desc.channels();
  const int64_t in_size = volume(in), out_size = volume(out);
  const std::vector<double> g = load(required(call.grad_output, "upsample", "grad_output"));
  std::vector<double> gx(static_cast<size_t>(grad_x->desc.numel()), 0.0);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < out_size; ++o) gx[p * in_size + src[o]] += g[p * out_size + o];
  store(*grad_x, gx);
}

void register_upsample_kernels(KernelTable& table) {
  table.add(OpKind::upsample, {upsample_forward, upsample_backward});
}

}  // namespace convbench::reference
