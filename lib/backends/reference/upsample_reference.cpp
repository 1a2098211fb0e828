// Upsampling. Nearest neighbour by an integer scale: output position o reads input position
// o / scale along every spatial dim (PyTorch's nearest mode for integer scale factors). Linear
// (bilinear, trilinear): each output position mixes the 2^d input positions around its source
// coordinate, as PyTorch's upsample_{bi,tri}linear kernels; backward scatters back (the adjoint).
#include <cmath>

#include "backends/reference/reference_kernels.hpp"
#include "ops/upsample_taps.hpp"

namespace convbench::reference {
namespace {

// Along one dim, output position o reads input positions i0 and i1 with weights w0 and w1, in
// double (ops/upsample_taps.hpp).
using LinearTap = UpsampleTap<double, int64_t>;

// Calls f(input flat position, weight) for the 8 (2-D: 4, with the depth's tap doubled at
// weight 0) corners of output position `at`.
template <class F>
void for_each_corner(const std::array<std::vector<LinearTap>, 3>& taps, const Extent3& in, const Extent3& at, F f) {
  const LinearTap& a = taps[0][static_cast<size_t>(at[0])];
  const LinearTap& b = taps[1][static_cast<size_t>(at[1])];
  const LinearTap& c = taps[2][static_cast<size_t>(at[2])];
  for (int i = 0; i < 8; ++i) {
    const int64_t d = i & 4 ? a.i1 : a.i0, h = i & 2 ? b.i1 : b.i0, w = i & 1 ? c.i1 : c.i0;
    const double weight = (i & 4 ? a.w1 : a.w0) * (i & 2 ? b.w1 : b.w0) * (i & 1 ? c.w1 : c.w0);
    f((d * in[1] + h) * in[2] + w, weight);
  }
}

std::array<std::vector<LinearTap>, 3> linear_taps(const Extent3& in, const Extent3& out, bool align_corners) {
  return {upsample_linear_taps<double>(in[0], out[0], align_corners),
          upsample_linear_taps<double>(in[1], out[1], align_corners),
          upsample_linear_taps<double>(in[2], out[2], align_corners)};
}

void linear_forward(const Tensor& xt, Tensor& yt, bool align_corners) {
  const Extent3 in = spatial_extent(xt.desc), out = spatial_extent(yt.desc);
  const auto taps = linear_taps(in, out, align_corners);
  const int64_t planes = yt.desc.batch() * yt.desc.channels();
  const int64_t in_size = volume(in), out_size = volume(out);
  const std::vector<double> x = load(xt);
  std::vector<double> y(static_cast<size_t>(yt.desc.numel()), 0.0);
  for (int64_t o = 0; o < out_size; ++o)
    for_each_corner(taps, in, unflatten(o, out), [&](int64_t i, double weight) {
      // A zero weight adds nothing; skipping it keeps a 2-D tensor's depth (whose second tap
      // PyTorch's bilinear kernel does not have) from turning an infinite input into NaN.
      if (weight == 0.0) return;
      for (int64_t p = 0; p < planes; ++p) y[p * out_size + o] += weight * x[p * in_size + i];
    });
  store(yt, y);
}

void linear_backward(const Tensor& gt, Tensor& gxt, bool align_corners) {
  const Extent3 in = spatial_extent(gxt.desc), out = spatial_extent(gt.desc);
  const auto taps = linear_taps(in, out, align_corners);
  const int64_t planes = gt.desc.batch() * gt.desc.channels();
  const int64_t in_size = volume(in), out_size = volume(out);
  const std::vector<double> g = load(gt);
  std::vector<double> gx(static_cast<size_t>(gxt.desc.numel()), 0.0);
  for (int64_t o = 0; o < out_size; ++o)
    for_each_corner(taps, in, unflatten(o, out), [&](int64_t i, double weight) {
      if (weight == 0.0) return;
      for (int64_t p = 0; p < planes; ++p) gx[p * in_size + i] += weight * g[p * out_size + o];
    });
  store(gxt, gx);
}

// The flat input position every flat output position reads.
std::vector<int64_t> nearest_sources(const Extent3& in, const Extent3& out, int64_t scale) {
  std::vector<int64_t> src(static_cast<size_t>(volume(out)));
  for (int64_t o = 0; o < volume(out); ++o) {
    const Extent3 at = unflatten(o, out);
    src[o] = upsample_nearest_source(at[0], at[1], at[2], in[1], in[2], scale);
  }
  return src;
}

}  // namespace

void upsample_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "upsample", "input");
  Tensor& yt = required(call.output, "upsample", "output");
  if (call.op.upsample_linear) return linear_forward(xt, yt, call.op.align_corners);
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

// Nearest: each input position receives the sum of the gradient over its scale^d block.
void upsample_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  if (call.op.upsample_linear)
    return linear_backward(required(call.grad_output, "upsample", "grad_output"), *grad_x, call.op.align_corners);
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
