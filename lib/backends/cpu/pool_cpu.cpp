// Max and average pooling (PyTorch defaults: ceil_mode=False, count_include_pad=True), plane by
// plane with OpenMP over the (n, c) planes. Works on both layouts through the strides of a plane:
// channels_first planes are contiguous, channels_last planes are strided by C. Not on the seed
// blocks' path, so these favour plainness over speed. Max-pool indices follow PyTorch: the flat
// position of the window's maximum within its input plane.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

struct PoolGeometry {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};  // spatial (d, h, w); 2-D has d = 1
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  int64_t in_size = 1, out_size = 1;
  // Element strides: between planes' channel (and batch), and between spatial positions.
  int64_t channels = 1;
  bool last = false;

  int64_t in_plane(int64_t p) const { return last ? (p / channels) * in_size * channels + p % channels : p * in_size; }
  int64_t out_plane(int64_t p) const {
    return last ? (p / channels) * out_size * channels + p % channels : p * out_size;
  }
  int64_t step() const { return last ? channels : 1; }  // between spatial positions
  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
};

PoolGeometry geometry(const TensorDesc& x, const TensorDesc& y, const PoolAttrs& a) {
  PoolGeometry g;
  g.planes = x.batch() * x.channels();
  g.channels = x.channels();
  g.last = x.layout == Layout::channels_last;
  const int off = 5 - x.rank();  // 2-D fills (h, w)
  for (int d = 0; d < x.spatial_rank(); ++d) {
    const auto i = static_cast<size_t>(d);
    g.in[d + off] = x.shape[i + 2];
    g.out[d + off] = y.shape[i + 2];
    g.kernel[d + off] = a.kernel[i];
    g.stride[d + off] = a.stride[i];
    g.pad[d + off] = a.padding[i];
  }
  g.in_size = g.in[0] * g.in[1] * g.in[2];
  g.out_size = g.out[0] * g.out[1] * g.out[2];
  return g;
}

// The window of output position (od, oh, ow), clipped to the input: [lo, hi) per dim.
struct Window {
  int64_t lo[3], hi[3];
};

Window window(const PoolGeometry& g, int64_t o) {
  const int64_t pos[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
  Window w;
  for (int d = 0; d < 3; ++d) {
    const int64_t start = pos[d] * g.stride[d] - g.pad[d];
    w.lo[d] = std::max<int64_t>(start, 0);
    w.hi[d] = std::min(start + g.kernel[d], g.in[d]);
  }
  return w;
}

struct Argmax {
  float value;
  int64_t at;  // flat position in the input plane
};

// The maximum of output position o's window over input plane `xin`, in window order: the first
// maximum wins, a NaN wins (as PyTorch's CPU kernel).
Argmax argmax(const PoolGeometry& g, const float* xin, int64_t o) {
  const Window w = window(g, o);
  Argmax best{-std::numeric_limits<float>::infinity(), (w.lo[0] * g.in[1] + w.lo[1]) * g.in[2] + w.lo[2]};
  for (int64_t d = w.lo[0]; d < w.hi[0]; ++d)
    for (int64_t h = w.lo[1]; h < w.hi[1]; ++h)
      for (int64_t k = w.lo[2]; k < w.hi[2]; ++k) {
        const int64_t at = (d * g.in[1] + h) * g.in[2] + k;
        const float v = xin[at * g.step()];
        if (v > best.value || std::isnan(v)) best = {v, at};
      }
  return best;
}

}  // namespace

void max_pool_forward(const Tensor& x, Tensor& y, Tensor* indices, const PoolAttrs& attrs) {
  const PoolGeometry g = geometry(x.desc, y.desc, attrs);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  int64_t* ip = indices ? indices->data<int64_t>() : nullptr;
  const int64_t step = g.step();
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* xin = xp + g.in_plane(p);
    const int64_t out_base = g.out_plane(p);
    for (int64_t o = 0; o < g.out_size; ++o) {
      const Argmax m = argmax(g, xin, o);
      yp[out_base + o * step] = m.value;
      if (ip) ip[out_base + o * step] = m.at;
    }
  }
}

void max_pool_backward(const Tensor* indices, const Tensor* x, const Tensor& dy, Tensor& dx, const PoolAttrs& attrs) {
  const PoolGeometry g = geometry(dx.desc, dy.desc, attrs);
  const int64_t step = g.step();
  const int64_t* ip = indices ? indices->data<int64_t>() : nullptr;
  if (!ip && !x) throw std::invalid_argument("max_pool backward needs the saved indices or input");
  const float* gp = dy.data<float>();
  float* dp = dx.data<float>();
  std::memset(dp, 0, static_cast<size_t>(dx.desc.bytes()));
  bool out_of_range = false;
#pragma omp parallel for schedule(static) reduction(|| : out_of_range)
  for (int64_t p = 0; p < g.planes; ++p) {
    const int64_t in_base = g.in_plane(p), out_base = g.out_plane(p);
    for (int64_t o = 0; o < g.out_size; ++o) {
      // Without saved indices the argmax is found again in the saved input: the same position.
      const int64_t at = ip ? ip[out_base + o * step] : argmax(g, x->data<float>() + in_base, o).at;
      if (at < 0 || at >= g.in_size) {
        out_of_range = true;
        continue;
      }
      dp[in_base + at * step] += gp[out_base + o * step];
    }
  }
  if (out_of_range) throw std::invalid_argument("max_pool backward: a saved index is out of range");
}

void avg_pool_forward(const Tensor& x, Tensor& y, const PoolAttrs& attrs) {
  const PoolGeometry g = geometry(x.desc, y.desc, attrs);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const int64_t step = g.step();
  const float inv = 1.0f / static_cast<float>(g.kernel_volume());
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* xin = xp + g.in_plane(p);
    const int64_t out_base = g.out_plane(p);
    for (int64_t o = 0; o < g.out_size; ++o) {
      const Window w = window(g, o);
      float sum = 0.f;
      for (int64_t d = w.lo[0]; d < w.hi[0]; ++d)
        for (int64_t h = w.lo[1]; h < w.hi[1]; ++h)
          for (int64_t k = w.lo[2]; k < w.hi[2]; ++k) sum += xin[((d * g.in[1] + h) * g.in[2] + k) * step];
      yp[out_base + o * step] = sum * inv;
    }
  }
}

void avg_pool_backward(const Tensor& dy, Tensor& dx, const PoolAttrs& attrs) {
  const PoolGeometry g = geometry(dx.desc, dy.desc, attrs);
  const float* gp = dy.data<float>();
  float* dp = dx.data<float>();
  const int64_t step = g.step();
  const float inv = 1.0f / static_cast<float>(g.kernel_volume());
  std::memset(dp, 0, static_cast<size_t>(dx.desc.bytes()));
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < g.planes; ++p) {
    float* din = dp + g.in_plane(p);
    const int64_t out_base = g.out_plane(p);
    for (int64_t o = 0; o < g.out_size; ++o) {
      const Window w = window(g, o);
      const float share = gp[out_base + o * step] * inv;
      for (int64_t d = w.lo[0]; d < w.hi[0]; ++d)
        for (int64_t h = w.lo[1]; h < w.hi[1]; ++h)
          for (int64_t k = w.lo[2]; k < w.hi[2]; ++k) din[((d * g.in[1] + h) * g.in[2] + k) * step] += share;
    }
  }
}

// global_avg_pool: the mean of each (n, c) plane into y (N * C values in either layout: its
// spatial sizes are 1), summed by channel_sums (float within short chunks, double across, both
// vectorised); backward spreads g / S over the plane, a plane (channels-first) or a row of
// channels (channels-last) at a time.
void global_avg_pool_forward(const Tensor& x, Tensor& y) {
  const auto planes = static_cast<size_t>(x.desc.batch() * x.desc.channels());
  const std::vector<float> zero(planes, 0.f);
  std::vector<double> sums(planes);
  channel_sums(x.desc, x.data<float>(), zero.data(), static_cast<const float*>(nullptr), nullptr, sums.data(), nullptr);
  const auto spatial = static_cast<double>(x.desc.spatial_size());
  float* yp = y.data<float>();
  for (size_t i = 0; i < planes; ++i) yp[i] = static_cast<float>(sums[i] / spatial);
}

void global_avg_pool_backward(const Tensor& dy, Tensor& dx) {
  const int64_t channels = dx.desc.channels(), spatial = dx.desc.spatial_size(), count = dx.desc.numel();
  const float inv = 1.f / static_cast<float>(spatial);
  const float* __restrict gp = dy.data<float>();
  float* __restrict dp = dx.data<float>();
  if (dx.desc.layout == Layout::channels_first) {
#pragma omp parallel for schedule(static) if (count > (1 << 15))
    for (int64_t plane = 0; plane < dx.desc.batch() * channels; ++plane) {
      const float v = gp[plane] * inv;
      float* __restrict o = dp + plane * spatial;
#pragma omp simd
      for (int64_t s = 0; s < spatial; ++s) o[s] = v;
    }
    return;
  }
#pragma omp parallel for schedule(static) if (count > (1 << 15))
  for (int64_t row = 0; row < dx.desc.batch() * spatial; ++row) {
    const float* __restrict g = gp + (row / spatial) * channels;
    float* __restrict o = dp + row * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) o[c] = g[c] * inv;
  }
}

void register_pool_kernels(KernelTable& table) {
  table.add(OpKind::global_avg_pool, {[](const ForwardCall& call) {
                                        global_avg_pool_forward(need(at_or_null(call.inputs, 0), call.op, "input"),
                                                                *call.output);
                                      },
                                      [](const BackwardCall& call) {
                                        if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                          global_avg_pool_backward(need(call.grad_output, call.op, "grad_output"), *dx);
                                      }});
  table.add(OpKind::max_pool, {[](const ForwardCall& call) {
                                 max_pool_forward(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output,
                                                  at_or_null(call.aux, 0), call.op.pool);
                               },
                               [](const BackwardCall& call) {
                                 if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                   max_pool_backward(at_or_null(call.aux, 0), at_or_null(call.inputs, 0),
                                                     need(call.grad_output, call.op, "grad_output"), *dx, call.op.pool);
                               }});
  table.add(OpKind::avg_pool, {[](const ForwardCall& call) {
                                 avg_pool_forward(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output,
                                                  call.op.pool);
                               },
                               [](const BackwardCall& call) {
                                 if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                   avg_pool_backward(need(call.grad_output, call.op, "grad_output"), *dx, call.op.pool);
                               }});
}

}  // namespace convbench::cpu
