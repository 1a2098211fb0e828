// Upsampling (nearest neighbour by an integer scale, linear), forward and backward, in both
// layouts.
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"
#include "ops/upsample_taps.hpp"

namespace convbench::cpu {
namespace {

// Along one dim, output position o reads input positions i0 and i1 with weights w0 and w1, in
// float as PyTorch's CPU kernels compute them (ops/upsample_taps.hpp).
using LinearTap = UpsampleTap<float, int64_t>;

// The up-to-8 input corners of one output position with their weights (zero weights left out:
// a 2-D tensor's depth has one tap).
struct Corners {
  int count = 0;
  int64_t at[8];
  float weight[8];
};

struct LinearGeometry {
  SpatialDims in, out;
  std::vector<LinearTap> d, h, w;
  LinearGeometry(const TensorDesc& x, const TensorDesc& y, bool align_corners)
      : in(spatial_dims(x)),
        out(spatial_dims(y)),
        d(upsample_linear_taps<float>(in.d, out.d, align_corners)),
        h(upsample_linear_taps<float>(in.h, out.h, align_corners)),
        w(upsample_linear_taps<float>(in.w, out.w, align_corners)) {}

  Corners corners(int64_t o) const {
    const LinearTap& a = d[static_cast<size_t>(o / (out.h * out.w))];
    const LinearTap& b = h[static_cast<size_t>((o / out.w) % out.h)];
    const LinearTap& c = w[static_cast<size_t>(o % out.w)];
    Corners k;
    for (int i = 0; i < 8; ++i) {
      const float weight = (i & 4 ? a.w1 : a.w0) * (i & 2 ? b.w1 : b.w0) * (i & 1 ? c.w1 : c.w0);
      if (weight == 0.f) continue;
      const int64_t id = i & 4 ? a.i1 : a.i0, ih = i & 2 ? b.i1 : b.i0, iw = i & 1 ? c.i1 : c.i0;
      k.at[k.count] = (id * in.h + ih) * in.w + iw;
      k.weight[k.count++] = weight;
    }
    return k;
  }
};

}  // namespace

void upsample_linear_forward(const Tensor& x, Tensor& y, bool align_corners) {
  const LinearGeometry g(x.desc, y.desc, align_corners);
  const int64_t channels = x.desc.channels(), batch = x.desc.batch();
  const int64_t in_size = g.in.volume(), out_size = g.out.volume();
  const bool last = x.desc.layout == Layout::channels_last;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  // One output position of one sample at a time: every channel reads the same corners.
#pragma omp parallel for schedule(static) if (y.desc.numel() > (1 << 15))
  for (int64_t p = 0; p < batch * out_size; ++p) {
    const int64_t n = p / out_size, o = p % out_size;
    const Corners k = g.corners(o);
    if (last) {
      float* dst = yp + p * channels;
      std::memset(dst, 0, static_cast<size_t>(channels) * sizeof(float));
      for (int j = 0; j < k.count; ++j) {
        const float* src = xp + (n * in_size + k.at[j]) * channels;
        for (int64_t c = 0; c < channels; ++c) dst[c] += k.weight[j] * src[c];
      }
    } else {
      for (int64_t c = 0; c < channels; ++c) {
        const float* src = xp + (n * channels + c) * in_size;
        float sum = 0.f;
        for (int j = 0; j < k.count; ++j) sum += k.weight[j] * src[k.at[j]];
        yp[(n * channels + c) * out_size + o] = sum;
      }
    }
  }
}

// The adjoint: each output gradient is scattered to its corners. Threads own disjoint parts of
// dx (channels_first: planes; channels_last: samples), so no two write one element.
void upsample_linear_backward(const Tensor& dy, Tensor& dx, bool align_corners) {
  const LinearGeometry g(dx.desc, dy.desc, align_corners);
  const int64_t channels = dx.desc.channels(), batch = dx.desc.batch();
  const int64_t in_size = g.in.volume(), out_size = g.out.volume();
  const bool last = dx.desc.layout == Layout::channels_last;
  const float* gp = dy.data<float>();
  float* dp = dx.data<float>();
  std::memset(dp, 0, static_cast<size_t>(dx.desc.bytes()));
  if (last) {
#pragma omp parallel for schedule(static) if (dy.desc.numel() > (1 << 15))
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t o = 0; o < out_size; ++o) {
        const Corners k = g.corners(o);
        const float* src = gp + (n * out_size + o) * channels;
        for (int j = 0; j < k.count; ++j) {
          float* dst = dp + (n * in_size + k.at[j]) * channels;
          for (int64_t c = 0; c < channels; ++c) dst[c] += k.weight[j] * src[c];
        }
      }
    return;
  }
#pragma omp parallel for schedule(static) if (dy.desc.numel() > (1 << 15))
  for (int64_t plane = 0; plane < batch * channels; ++plane) {
    const float* src = gp + plane * out_size;
    float* dst = dp + plane * in_size;
    for (int64_t o = 0; o < out_size; ++o) {
      const Corners k = g.corners(o);
      for (int j = 0; j < k.count; ++j) dst[k.at[j]] += k.weight[j] * src[o];
    }
  }
}

void upsample_forward(const Tensor& x, Tensor& y, int64_t scale) {
  const SpatialDims in = spatial_dims(x.desc), out = spatial_dims(y.desc);
  const int64_t sd = x.desc.rank() == 4 ? 1 : scale;
  const int64_t channels = x.desc.channels(), batch = x.desc.batch();
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  if (x.desc.layout == Layout::channels_first) {
    const int64_t rows = batch * channels * out.d * out.h;
#pragma omp parallel for schedule(static) if (y.desc.numel() > (1 << 15))
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oh = r % out.h, od = (r / out.h) % out.d, plane = r / (out.h * out.d);
      const float* src = xp + plane * in.volume() + ((od / sd) * in.h + oh / scale) * in.w;
      float* dst = yp + r * out.w;
      for (int64_t ow = 0; ow < out.w; ++ow) dst[ow] = src[ow / scale];
    }
    return;
  }
  const int64_t pixels = batch * out.volume();
#pragma omp parallel for schedule(static) if (y.desc.numel() > (1 << 15))
  for (int64_t p = 0; p < pixels; ++p) {
    const int64_t ow = p % out.w, oh = (p / out.w) % out.h, od = (p / (out.w * out.h)) % out.d;
    const int64_t n = p / out.volume();
    const int64_t src = ((n * in.d + od / sd) * in.h + oh / scale) * in.w + ow / scale;
    std::memcpy(yp + p * channels, xp + src * channels, static_cast<size_t>(channels) * sizeof(float));
  }
}

void upsample_backward(const Tensor& dy, Tensor& dx, int64_t scale) {
  const SpatialDims in = spatial_dims(dx.desc), out = spatial_dims(dy.desc);
  const int64_t sd = dx.desc.rank() == 4 ? 1 : scale;
  const int64_t channels = dx.desc.channels(), batch = dx.desc.batch();
  const float* gp = dy.data<float>();
  float* dp = dx.data<float>();
  // One dx row (n, c?, id, ih) at a time: it sums the sd x scale dy rows above it.
  const bool last = dx.desc.layout == Layout::channels_last;
  const int64_t rows = batch * (last ? 1 : channels) * in.d * in.h;
  const int64_t row_len = in.w * (last ? channels : 1);
#pragma omp parallel for schedule(static) if (dx.desc.numel() > (1 << 14))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = r % in.h, id = (r / in.h) % in.d, plane = r / (in.h * in.d);
    float* dst = dp + r * row_len;
    std::memset(dst, 0, static_cast<size_t>(row_len) * sizeof(float));
    for (int64_t a = 0; a < sd; ++a)
      for (int64_t b = 0; b < scale; ++b) {
        const int64_t od = id * sd + a, oh = ih * scale + b;
        if (!last) {
          const float* src = gp + plane * out.volume() + (od * out.h + oh) * out.w;
          for (int64_t ow = 0; ow < out.w; ++ow) dst[ow / scale] += src[ow];
        } else {
          const float* src = gp + ((plane * out.d + od) * out.h + oh) * out.w * channels;
          for (int64_t ow = 0; ow < out.w; ++ow) {
            float* d = dst + (ow / scale) * channels;
            const float* s = src + ow * channels;
            for (int64_t c = 0; c < channels; ++c) d[c] += s[c];
          }
        }
      }
  }
}

void register_upsample_kernels(KernelTable& table) {
  table.add(OpKind::upsample, {[](const ForwardCall& call) {
                                 const Tensor& x = need(at_or_null(call.inputs, 0), call.op, "input");
                                 if (call.op.upsample_linear)
                                   upsample_linear_forward(x, *call.output, call.op.align_corners);
                                 else
                                   upsample_forward(x, *call.output, call.op.upsample_scale);
                               },
                               [](const BackwardCall& call) {
                                 Tensor* dx = at_or_null(call.grad_inputs, 0);
                                 if (dx == nullptr) return;
                                 const Tensor& dy = need(call.grad_output, call.op, "grad_output");
                                 if (call.op.upsample_linear)
                                   upsample_linear_backward(dy, *dx, call.op.align_corners);
                                 else
                                   upsample_backward(dy, *dx, call.op.upsample_scale);
                               }});
}

}  // namespace convbench::cpu
