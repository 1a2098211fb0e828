// 3-D depthwise convolution (groups == in_channels == out_channels) in our own loops. oneDNN 2.6
// has no depthwise kernel for 3-D: it runs these as im2col + gemm on ncdhw (and a generic jit
// kernel on ndhwc), 60-90 ms per direction for the seed block's separable conv (6x16x32^3,
// 3x3x3), the same path PyTorch 1.13 takes. The work is tiny (27 multiply-adds per output) and
// memory-bound, so direct loops over whole rows, vectorised along W (channels_first) or along the
// channels (channels_last), take a few ms. Any stride, padding and dilation.
//
// Every loop writes rows it owns: forward and backward-data walk output (resp. input-gradient)
// rows in parallel and gather from the other tensor; backward-weights keeps per-thread sums.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

// Along W, tap kw of output column ow reads input column ow * stride + shift, valid for the
// output columns [lo, hi). Computed once per call: the integer divisions are not free. Loops read
// the fields into plain variables: clang before 16 rejects a structured binding used inside
// `#pragma omp simd` (an outlined region that would have to capture it).
struct Columns {
  int64_t shift, lo, hi;
};

struct DepthwiseGeometry {
  int64_t batch, channels;
  int64_t in[3], out[3];  // spatial (d, h, w)
  int64_t kernel[3], stride[3], pad[3], dilation[3];
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t in_volume() const { return in[0] * in[1] * in[2]; }
  int64_t out_volume() const { return out[0] * out[1] * out[2]; }
  bool channels_last;
  std::vector<Columns> columns;  // per kw
};

DepthwiseGeometry geometry(const TensorDesc& x, const TensorDesc& y, const ConvAttrs& a) {
  DepthwiseGeometry g{};
  g.batch = x.batch();
  g.channels = x.channels();
  g.channels_last = x.layout == Layout::channels_last;
  for (size_t d = 0; d < 3; ++d) {
    g.in[d] = x.shape[d + 2];
    g.out[d] = y.shape[d + 2];
    g.kernel[d] = a.kernel[d];
    g.stride[d] = a.stride[d];
    g.pad[d] = a.padding[d];
    g.dilation[d] = a.dilation[d];
  }
  const int64_t s = g.stride[2];
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    Columns c;
    c.shift = kw * g.dilation[2] - g.pad[2];
    c.lo = c.shift >= 0 ? 0 : (-c.shift + s - 1) / s;
    c.hi = g.in[2] - 1 - c.shift < 0 ? 0 : std::min((g.in[2] - 1 - c.shift) / s + 1, g.out[2]);
    c.lo = std::min(c.lo, c.hi);
    g.columns.push_back(c);
  }
  return g;
}

// Input index of output index o through tap k along dim d (may lie outside the input).
int64_t input_index(const DepthwiseGeometry& g, int d, int64_t o, int64_t k) {
  return o * g.stride[d] - g.pad[d] + k * g.dilation[d];
}

// Output index that reads input index i through tap k along dim d, or -1 when none does.
int64_t output_index(const DepthwiseGeometry& g, int d, int64_t i, int64_t k) {
  const int64_t t = i + g.pad[d] - k * g.dilation[d];
  if (t < 0 || t % g.stride[d] != 0) return -1;
  const int64_t o = t / g.stride[d];
  return o < g.out[d] ? o : -1;
}

// Weights (C, 1, kd, kh, kw) as (taps, C), so that channels_last loops read them contiguously.
std::vector<float> taps_by_channel(const float* w, int64_t channels, int64_t taps) {
  std::vector<float> t(static_cast<size_t>(channels * taps));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < taps; ++k) t[static_cast<size_t>(k * channels + c)] = w[c * taps + k];
  return t;
}

void forward_channels_first(const DepthwiseGeometry& g, const float* x, const float* w, const float* b, float* y) {
  const int64_t rows = g.batch * g.channels * g.out[0] * g.out[1];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t oh = r % g.out[1], od = (r / g.out[1]) % g.out[0], plane = r / (g.out[1] * g.out[0]);
    const int64_t c = plane % g.channels;
    float* yr = y + r * g.out[2];
    const float bias = b ? b[c] : 0.f;
    for (int64_t ow = 0; ow < g.out[2]; ++ow) yr[ow] = bias;
    const float* xp = x + plane * g.in_volume();
    const float* wc = w + c * g.taps();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t id = input_index(g, 0, od, kd);
      if (id < 0 || id >= g.in[0]) continue;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t ih = input_index(g, 1, oh, kh);
        if (ih < 0 || ih >= g.in[1]) continue;
        const float* xr = xp + (id * g.in[1] + ih) * g.in[2];
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float wv = wc[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
          const Columns& col = g.columns[static_cast<size_t>(kw)];
          const int64_t shift = col.shift, lo = col.lo, hi = col.hi;  // not a structured binding: see Columns
          const int64_t s = g.stride[2];
          if (s == 1) {
#pragma omp simd
            for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xr[ow + shift];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xr[ow * s + shift];
          }
        }
      }
    }
  }
}

void forward_channels_last(const DepthwiseGeometry& g, const float* x, const float* w, const float* b, float* y) {
  const int64_t C = g.channels;
  const std::vector<float> wt = taps_by_channel(w, C, g.taps());
  const int64_t rows = g.batch * g.out[0] * g.out[1];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t oh = r % g.out[1], od = (r / g.out[1]) % g.out[0], n = r / (g.out[1] * g.out[0]);
    float* yr = y + r * g.out[2] * C;
    for (int64_t ow = 0; ow < g.out[2]; ++ow)
      for (int64_t c = 0; c < C; ++c) yr[ow * C + c] = b ? b[c] : 0.f;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t id = input_index(g, 0, od, kd);
      if (id < 0 || id >= g.in[0]) continue;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t ih = input_index(g, 1, oh, kh);
        if (ih < 0 || ih >= g.in[1]) continue;
        const float* xr = x + ((n * g.in[0] + id) * g.in[1] + ih) * g.in[2] * C;
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float* wk = wt.data() + ((kd * g.kernel[1] + kh) * g.kernel[2] + kw) * C;
          const Columns& col = g.columns[static_cast<size_t>(kw)];
          const int64_t shift = col.shift, lo = col.lo, hi = col.hi;  // not a structured binding: see Columns
          for (int64_t ow = lo; ow < hi; ++ow) {
            float* yp = yr + ow * C;
            const float* xq = xr + (ow * g.stride[2] + shift) * C;
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) yp[c] += wk[c] * xq[c];
          }
        }
      }
    }
  }
}

void backward_data_channels_first(const DepthwiseGeometry& g, const float* dy, const float* w, float* dx) {
  const int64_t rows = g.batch * g.channels * g.in[0] * g.in[1];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = r % g.in[1], id = (r / g.in[1]) % g.in[0], plane = r / (g.in[1] * g.in[0]);
    const int64_t c = plane % g.channels;
    float* dr = dx + r * g.in[2];
    std::memset(dr, 0, static_cast<size_t>(g.in[2]) * sizeof(float));
    const float* dyp = dy + plane * g.out_volume();
    const float* wc = w + c * g.taps();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t od = output_index(g, 0, id, kd);
      if (od < 0) continue;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t oh = output_index(g, 1, ih, kh);
        if (oh < 0) continue;
        const float* gr = dyp + (od * g.out[1] + oh) * g.out[2];
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float wv = wc[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
          const Columns& col = g.columns[static_cast<size_t>(kw)];
          const int64_t shift = col.shift, lo = col.lo, hi = col.hi;  // not a structured binding: see Columns
          const int64_t s = g.stride[2];
          if (s == 1) {
#pragma omp simd
            for (int64_t ow = lo; ow < hi; ++ow) dr[ow + shift] += wv * gr[ow];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dr[ow * s + shift] += wv * gr[ow];
          }
        }
      }
    }
  }
}

void backward_data_channels_last(const DepthwiseGeometry& g, const float* dy, const float* w, float* dx) {
  const int64_t C = g.channels;
  const std::vector<float> wt = taps_by_channel(w, C, g.taps());
  const int64_t rows = g.batch * g.in[0] * g.in[1];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = r % g.in[1], id = (r / g.in[1]) % g.in[0], n = r / (g.in[1] * g.in[0]);
    float* dr = dx + r * g.in[2] * C;
    std::memset(dr, 0, static_cast<size_t>(g.in[2] * C) * sizeof(float));
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t od = output_index(g, 0, id, kd);
      if (od < 0) continue;
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t oh = output_index(g, 1, ih, kh);
        if (oh < 0) continue;
        const float* gr = dy + ((n * g.out[0] + od) * g.out[1] + oh) * g.out[2] * C;
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float* wk = wt.data() + ((kd * g.kernel[1] + kh) * g.kernel[2] + kw) * C;
          const Columns& col = g.columns[static_cast<size_t>(kw)];
          const int64_t shift = col.shift, lo = col.lo, hi = col.hi;  // not a structured binding: see Columns
          for (int64_t ow = lo; ow < hi; ++ow) {
            float* dp = dr + (ow * g.stride[2] + shift) * C;
            const float* gp = gr + ow * C;
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) dp[c] += wk[c] * gp[c];
          }
        }
      }
    }
  }
}

// dw[c][tap] = sum over n and output positions of dy * x(tap); db[c] = sum of dy. Products are
// summed elementwise along W into float rows (no horizontal sums in the hot loop), which are
// folded into double totals every kFlushRows rows.
constexpr int64_t kFlushRows = 64;

void backward_weights_channels_first(const DepthwiseGeometry& g, const float* x, const float* dy, float* dw,
                                     float* db) {
  const int64_t taps = g.taps(), ow_count = g.out[2];
#pragma omp parallel
  {
    // per tap a row of partial sums, then the bias row
    std::vector<float> part(static_cast<size_t>((taps + 1) * ow_count));
    std::vector<double> acc(static_cast<size_t>(taps + 1));
#pragma omp for schedule(dynamic, 1)
    for (int64_t c = 0; c < g.channels; ++c) {
      std::fill(part.begin(), part.end(), 0.f);
      std::fill(acc.begin(), acc.end(), 0.0);
      auto flush = [&] {
        for (int64_t t = 0; t <= taps; ++t) {
          float* p = part.data() + t * ow_count;
          double s = 0.0;
          for (int64_t ow = 0; ow < ow_count; ++ow) s += p[ow];
          acc[static_cast<size_t>(t)] += s;
          std::fill(p, p + ow_count, 0.f);
        }
      };
      int64_t rows = 0;
      for (int64_t n = 0; n < g.batch; ++n) {
        const int64_t plane = n * g.channels + c;
        const float* xp = x + plane * g.in_volume();
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const float* gr = dy + plane * g.out_volume() + (od * g.out[1] + oh) * ow_count;
            float* pb = part.data() + taps * ow_count;
#pragma omp simd
            for (int64_t ow = 0; ow < ow_count; ++ow) pb[ow] += gr[ow];
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = input_index(g, 0, od, kd);
              if (id < 0 || id >= g.in[0]) continue;
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = input_index(g, 1, oh, kh);
                if (ih < 0 || ih >= g.in[1]) continue;
                const float* xr = xp + (id * g.in[1] + ih) * g.in[2];
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const Columns& col = g.columns[static_cast<size_t>(kw)];
                  const int64_t shift = col.shift, lo = col.lo, hi = col.hi;  // not a structured binding: see Columns
                  const int64_t s = g.stride[2];
                  float* pt = part.data() + ((kd * g.kernel[1] + kh) * g.kernel[2] + kw) * ow_count;
                  if (s == 1) {
#pragma omp simd
                    for (int64_t ow = lo; ow < hi; ++ow) pt[ow] += gr[ow] * xr[ow + shift];
                  } else {
                    for (int64_t ow = lo; ow < hi; ++ow) pt[ow] += gr[ow] * xr[ow * s + shift];
                  }
                }
              }
            }
            if (++rows % kFlushRows == 0) flush();
          }
      }
      flush();
      for (int64_t k = 0; k < taps; ++k) dw[c * taps + k] = static_cast<float>(acc[static_cast<size_t>(k)]);
      if (db) db[c] = static_cast<float>(acc[static_cast<size_t>(taps)]);
    }
  }
}

void backward_weights_channels_last(const DepthwiseGeometry& g, const float* x, const float* dy, float* dw, float* db) {
  const int64_t C = g.channels, taps = g.taps();
  std::vector<double> total(static_cast<size_t>((taps + 1) * C), 0.0);  // taps rows, then the bias row
  const int64_t rows = g.batch * g.out[0] * g.out[1];
#pragma omp parallel
  {
    std::vector<double> acc(total.size(), 0.0);
    std::vector<float> part(static_cast<size_t>(C));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oh = r % g.out[1], od = (r / g.out[1]) % g.out[0], n = r / (g.out[1] * g.out[0]);
      const float* gr = dy + r * g.out[2] * C;
      std::fill(part.begin(), part.end(), 0.f);
      for (int64_t ow = 0; ow < g.out[2]; ++ow)
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) part[static_cast<size_t>(c)] += gr[ow * C + c];
      for (int64_t c = 0; c < C; ++c) acc[static_cast<size_t>(taps * C + c)] += part[static_cast<size_t>(c)];
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t id = input_index(g, 0, od, kd);
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const int64_t ih = input_index(g, 1, oh, kh);
          if (ih < 0 || ih >= g.in[1]) continue;
          const float* xr = x + ((n * g.in[0] + id) * g.in[1] + ih) * g.in[2] * C;
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
            const Columns& col = g.columns[static_cast<size_t>(kw)];
            const int64_t shift = col.shift, lo = col.lo, hi = col.hi;  // not a structured binding: see Columns
            std::fill(part.begin(), part.end(), 0.f);
            float* pp = part.data();
            for (int64_t ow = lo; ow < hi; ++ow) {
              const float* gp = gr + ow * C;
              const float* xq = xr + (ow * g.stride[2] + shift) * C;
#pragma omp simd
              for (int64_t c = 0; c < C; ++c) pp[c] += gp[c] * xq[c];
            }
            double* ak = acc.data() + ((kd * g.kernel[1] + kh) * g.kernel[2] + kw) * C;
            for (int64_t c = 0; c < C; ++c) ak[c] += pp[c];
          }
        }
      }
    }
#pragma omp critical
    for (size_t i = 0; i < total.size(); ++i) total[i] += acc[i];
  }
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t k = 0; k < taps; ++k) dw[c * taps + k] = static_cast<float>(total[static_cast<size_t>(k * C + c)]);
    if (db) db[c] = static_cast<float>(total[static_cast<size_t>(taps * C + c)]);
  }
}

}  // namespace

bool is_own_depthwise_conv(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::conv) return false;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  return in.spatial_rank() == 3 && op.conv.groups == in.channels() && op.conv.out_channels == in.channels();
}

void depthwise_conv_forward(const ForwardCall& call) {
  const Tensor& x = *call.inputs.at(0);
  const DepthwiseGeometry g = geometry(x.desc, call.output->desc, call.op.conv);
  const std::vector<const Tensor*> weights = conv_weights(call);
  const float* w = weights.at(0)->data<float>();
  const float* b = call.op.conv.bias ? weights.at(1)->data<float>() : nullptr;
  if (g.channels_last)
    forward_channels_last(g, x.data<float>(), w, b, call.output->data<float>());
  else
    forward_channels_first(g, x.data<float>(), w, b, call.output->data<float>());
}

void depthwise_conv_backward(const BackwardCall& call) {
  const Tensor& x = *call.inputs.at(0);
  const Tensor& dy = *call.grad_output;
  const DepthwiseGeometry g = geometry(x.desc, dy.desc, call.op.conv);
  const float* w = conv_weights(call).at(0)->data<float>();
  if (Tensor* dx = call.grad_inputs.at(0)) {  // skipped entirely for a block's first conv
    if (g.channels_last)
      backward_data_channels_last(g, dy.data<float>(), w, dx->data<float>());
    else
      backward_data_channels_first(g, dy.data<float>(), w, dx->data<float>());
  }
  if (call.op.conv.frozen) return;  // no weight or bias gradient
  float* dw = call.grad_params.at(0)->data<float>();
  float* db = call.op.conv.bias ? call.grad_params.at(1)->data<float>() : nullptr;
  if (g.channels_last)
    backward_weights_channels_last(g, x.data<float>(), dy.data<float>(), dw, db);
  else
    backward_weights_channels_first(g, x.data<float>(), dy.data<float>(), dw, db);
}

}  // namespace convbench::cpu
