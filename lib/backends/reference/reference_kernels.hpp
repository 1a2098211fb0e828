// Internal to the reference backend: its per-op kernels and the helpers they share. Every kernel
// loads its tensors into std::vector<double> in logical (N, C, spatial...) order, computes in
// double and stores the results rounded to each tensor's dtype, so one plain code path serves
// every dtype and layout and is easy to check by eye.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace convbench::reference {

// ---- tensors as logical vectors of doubles --------------------------------------------------

// Reads a host tensor in logical order.
std::vector<double> load(const Tensor& t);
// Writes `values` (logical order, numel entries) into a host tensor, rounding to its dtype.
void store(Tensor& t, const std::vector<double>& values);

// The tensor behind a pointer the kernel cannot run without; a missing one is a caller bug that
// must not turn into a null dereference.
template <class T>
T& required(T* t, const char* op, const char* what) {
  if (t == nullptr) throw std::invalid_argument(std::string("reference backend: ") + op + ": missing " + what);
  return *t;
}

// The optional tensor at `index` of a call's pointer list (nullptr when absent or not given).
template <class T>
T* optional_at(const std::vector<T*>& list, size_t index) {
  return index < list.size() ? list[index] : nullptr;
}

// ---- spatial geometry ------------------------------------------------------------------------

// Spatial sizes padded to three dims: a 2-D tensor gets a leading depth of 1, so every kernel
// loops over (D, H, W) and serves 2-D and 3-D alike.
using Extent3 = std::array<int64_t, 3>;
Extent3 spatial_extent(const TensorDesc& desc);
// A per-dim attribute (kernel, stride, ...) padded the same way: `fill` for the missing depth,
// and for every dim when `values` is empty.
Extent3 per_dim(const std::vector<int64_t>& values, int64_t fill);
int64_t volume(const Extent3& e);
// Coordinates of a flat (row-major) position within `e`.
Extent3 unflatten(int64_t flat, const Extent3& e);

// A sliding window (convolution or pooling) along the three padded dims.
struct Window {
  Extent3 kernel, stride, padding, dilation;
};

// One tap of a window: the flat kernel position and the flat position it connects to.
struct WindowTap {
  int64_t kernel;
  int64_t source;
};

// A window relates a "strided" grid (conv output, pool output, conv_transpose input) to a
// "dense" grid (conv input, pool input, conv_transpose output): strided position o and kernel
// position k touch dense position o*stride - padding + k*dilation.
enum class TapFrom {
  strided,  // `at` is on the strided grid; sources are the dense positions it reads
  dense,    // `at` is on the dense grid; sources are the strided positions that read it
};

// Fills `taps` with every tap of `at` whose source lies inside `source_extent` (padding taps are
// left out), in window order (kd, kh, kw row-major), which is the order PyTorch visits them.
void collect_taps(TapFrom from, const Window& window, const Extent3& at, const Extent3& source_extent,
                  std::vector<WindowTap>& taps);

// A run of one kernel tap along W: `count` consecutive strided positions from flat index
// `strided`, and the dense positions they touch, from flat index `dense`, `dense_step` apart.
struct TapRun {
  int64_t strided, dense, count, dense_step;
};

// Strided positions p in [0, strided_extent) whose dense position p*stride + offset lies in
// [0, dense_extent), as the half-open range [first, last).
struct TapRange {
  int64_t first, last;
};
TapRange valid_tap_range(int64_t strided_extent, int64_t dense_extent, int64_t stride, int64_t offset);

// Calls f(TapRun) for every (d, h) row of the strided grid on which kernel position `k` lands
// inside the dense grid, padding excluded. Convolutions loop over kernel positions outside and
// these runs inside, so their innermost loops walk memory in order.
template <class F>
void for_each_tap_run(const Window& window, const Extent3& k, const Extent3& strided, const Extent3& dense, F f) {
  int64_t offset[3];
  TapRange range[3];
  for (size_t d = 0; d < 3; ++d) {
    offset[d] = k[d] * window.dilation[d] - window.padding[d];
    range[d] = valid_tap_range(strided[d], dense[d], window.stride[d], offset[d]);
    if (range[d].first >= range[d].last) return;
  }
  const int64_t w0 = range[2].first;
  for (int64_t a = range[0].first; a < range[0].last; ++a) {
    for (int64_t b = range[1].first; b < range[1].last; ++b) {
      const int64_t da = a * window.stride[0] + offset[0];
      const int64_t db = b * window.stride[1] + offset[1];
      const int64_t dc = w0 * window.stride[2] + offset[2];
      f(TapRun{(a * strided[1] + b) * strided[2] + w0, (da * dense[1] + db) * dense[2] + dc, range[2].last - w0,
               window.stride[2]});
    }
  }
}

// ---- normalisation (batch_norm_reference.cpp, group_norm_reference.cpp) -----------------------

// Logical (N, C, S) view of an activation, S the flattened spatial size.
struct NCS {
  int64_t batch, channels, spatial;
  explicit NCS(const TensorDesc& d) : batch(d.batch()), channels(d.channels()), spatial(d.spatial_size()) {}
  int64_t index(int64_t n, int64_t c, int64_t s) const { return (n * channels + c) * spatial + s; }
};

// Backward of y = xhat * gamma + beta with xhat = (x - mean) * invstd and mean/invstd taken over
// a set of M elements: with gg = grad_y * gamma,
//   grad_x = invstd * (gg - mean(gg) - xhat * mean(gg * xhat)),
// PyTorch's batch- and group-norm formula written with xhat. The caller passes the sums.
inline double norm_input_grad(double gg, double xhat, double invstd, double sum_gg, double sum_gg_xhat, double count) {
  return invstd * (gg - sum_gg / count - xhat * sum_gg_xhat / count);
}

// A norm's weight and bias gradients, per channel: sum over N and space of g * xhat and of g,
// stored into the call's grad_params 0 and 1 where given (group and layer norm; xhat(n, c, s) is
// the normalised input).
template <class Xhat>
void store_affine_grads(const BackwardCall& call, const std::vector<double>& g, const NCS& v, Xhat xhat) {
  std::vector<double> sum_g(static_cast<size_t>(v.channels), 0.0), sum_g_xhat(sum_g.size(), 0.0);
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s) {
        sum_g[c] += g[v.index(n, c, s)];
        sum_g_xhat[c] += g[v.index(n, c, s)] * xhat(n, c, s);
      }
  if (Tensor* grad_gamma = optional_at(call.grad_params, 0)) store(*grad_gamma, sum_g_xhat);
  if (Tensor* grad_beta = optional_at(call.grad_params, 1)) store(*grad_beta, sum_g);
}

// ---- per-op kernels --------------------------------------------------------------------------

void conv_forward(const ForwardCall& call);
void conv_backward(const BackwardCall& call);
void conv_transpose_forward(const ForwardCall& call);
void conv_transpose_backward(const BackwardCall& call);

void batch_norm_forward(const ForwardCall& call);
void batch_norm_backward(const BackwardCall& call);
void batch_norm_act_forward(const ForwardCall& call);    // may run in place
void batch_norm_act_backward(const BackwardCall& call);  // from the saved output
void group_norm_forward(const ForwardCall& call);
void group_norm_backward(const BackwardCall& call);

void relu_forward(const ForwardCall& call);
void relu_backward(const BackwardCall& call);
void leaky_relu_forward(const ForwardCall& call);
void leaky_relu_backward(const BackwardCall& call);
void dropout_forward(const ForwardCall& call);
void dropout_backward(const BackwardCall& call);
void add_forward(const ForwardCall& call);
void add_backward(const BackwardCall& call);
void sub_forward(const ForwardCall& call);
void sub_backward(const BackwardCall& call);

void concat_forward(const ForwardCall& call);
void concat_backward(const BackwardCall& call);

void max_pool_forward(const ForwardCall& call);
void max_pool_backward(const BackwardCall& call);
void avg_pool_forward(const ForwardCall& call);
void avg_pool_backward(const BackwardCall& call);

void global_avg_pool_forward(const ForwardCall& call);
void global_avg_pool_backward(const BackwardCall& call);

void upsample_forward(const ForwardCall& call);
void upsample_backward(const BackwardCall& call);

void linear_forward(const ForwardCall& call);
void linear_backward(const BackwardCall& call);

// Each op family's file registers its kinds' forward and backward kernels (reference_backend.cpp
// calls them all).
void register_concat_kernels(KernelTable& table);
void register_conv_kernels(KernelTable& table);
void register_elementwise_kernels(KernelTable& table);
void register_batch_norm_kernels(KernelTable& table);
void register_group_norm_kernels(KernelTable& table);
void register_layer_norm_kernels(KernelTable& table);
void register_pool_kernels(KernelTable& table);
void register_upsample_kernels(KernelTable& table);
void register_layout_kernels(KernelTable& table);
void register_linear_kernels(KernelTable& table);
void register_fold_kernels(KernelTable& table);

// The workspace a folded_conv call needs (its kernel in inference, the kernel's gradient in
// backward; fold_reference.cpp); 0 for every other op.
int64_t fold_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training);

}  // namespace convbench::reference
