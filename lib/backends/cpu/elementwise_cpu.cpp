// Elementwise ops in float32 (a bfloat16 call reaches them widened, widened_calls.hpp, but for
// add, which sums half-precision gradients directly): one pass over memory, OpenMP threads over large tensors, selects
// instead of branches so that the compiler vectorises each loop.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"
#include "runtime/half_float.hpp"
#include "runtime/host_io.hpp"
#include "runtime/philox.hpp"

namespace convbench::cpu {
namespace {

// Below this many elements a loop is not worth waking the thread team for.
constexpr int64_t kParallelElements = 1 << 15;

int64_t same_numel(const Tensor& a, const Tensor& b) {
  if (a.desc.numel() != b.desc.numel())
    throw std::invalid_argument("cpu backend: elementwise operands differ in size (" + a.desc.shape_string() + " vs " +
                                b.desc.shape_string() + ")");
  return a.desc.numel();
}

// hardsigmoid, which oneDNN 2.6's eltwise lacks: selects only, so the loops vectorise. The
// forward may run in place (x and y are then one tensor, so not __restrict).
void hardsigmoid_forward(const Tensor& x, Tensor& y) {
  const int64_t n = same_numel(x, y);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) yp[i] = std::min(std::max(xp[i] + 3.f, 0.f), 6.f) * (1.f / 6.f);
}

// From the saved input, as hardsigmoid_backward: g / 6 strictly inside (-3, 3).
void hardsigmoid_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  const int64_t n = same_numel(x, dy);
  const float* __restrict xp = x.data<float>();
  const float* __restrict gp = dy.data<float>();
  float* __restrict dp = dx.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float inside = static_cast<float>(xp[i] > -3.f) * static_cast<float>(xp[i] < 3.f);
    dp[i] = gp[i] * inside * (1.f / 6.f);
  }
}

// The activations oneDNN's eltwise computes (onednn_eltwise.cpp), each as the op's definition
// saves it: sigmoid from its output, the others from their input. relu6 is clip_v2, whose
// backward passes g strictly inside (0, 6) as PyTorch's hardtanh_backward does (clip's includes
// 6). hardswish's alpha and beta are oneDNN 2.6's fixed 1/6 and 1/2.
std::optional<EltwiseForm> eltwise_form(const Op& op) {
  switch (op.kind) {
    case OpKind::sigmoid:
      return EltwiseForm{.algorithm = dnnl::algorithm::eltwise_logistic_use_dst_for_bwd, .backward_reads_output = true};
    case OpKind::silu: return EltwiseForm{.algorithm = dnnl::algorithm::eltwise_swish, .alpha = 1.0f};
    case OpKind::hardswish: return EltwiseForm{.algorithm = dnnl::algorithm::eltwise_hardswish};
    case OpKind::relu6: return EltwiseForm{.algorithm = dnnl::algorithm::eltwise_clip_v2, .alpha = 0.0f, .beta = 6.0f};
    case OpKind::gelu:
      return EltwiseForm{.algorithm = op.gelu_approximate == GeluApproximation::tanh
                                          ? dnnl::algorithm::eltwise_gelu_tanh
                                          : dnnl::algorithm::eltwise_gelu_erf};
    default: return std::nullopt;
  }
}

// out = x x k of the element's (sample, channel) plane, k[n * C + c], in either layout: one pass
// of channel_affine (channel_sums_cpu.cpp, vectorised by plane or by row of channels). Channel
// dropout's noise, drop_path's (one value per sample, repeated over its channels), layer scale's
// weight (repeated over samples) and a squeeze-excitation's gate all scale so. (Finding each
// element's plane with a division per element cost drop_path 3.4x and the broadcast mul 3.4x
// PyTorch eager's time.)
void scale_planes(const TensorDesc& d, const float* x, const float* k, float* out) {
  const std::vector<float> zero(static_cast<size_t>(d.batch() * d.channels()), 0.f);
  channel_affine(d, nullptr, nullptr, x, zero.data(), k, zero.data(), out);
}

// k repeated: one value per sample (`per_sample`) or per channel (else) made one per plane.
std::vector<float> per_plane(const TensorDesc& d, const float* k, bool per_sample) {
  const int64_t channels = d.channels();
  std::vector<float> planes(static_cast<size_t>(d.batch() * channels));
  for (int64_t n = 0; n < d.batch(); ++n)
    for (int64_t c = 0; c < channels; ++c) planes[static_cast<size_t>(n * channels + c)] = k[per_sample ? n : c];
  return planes;
}

// out = in x the noise of each element's unit: a sample (drop_path) or a (sample, channel) plane
// (channel dropout, whose noise is numbered n * C + c).
void scale_by_unit(const Op& op, const TensorDesc& d, const float* in, const float* noise, float* out) {
  if (op.kind == OpKind::drop_path) {
    scale_planes(d, in, per_plane(d, noise, true).data(), out);
    return;
  }
  scale_planes(d, in, noise, out);
}

// The noise from dropout's keep rule indexed by unit, then y = x * noise of the element's unit.
void unit_dropout_forward(const Op& op, const Tensor& x, Tensor& y, Tensor* noise_out, uint64_t seed) {
  same_numel(x, y);
  const int64_t units = op.kind == OpKind::drop_path ? x.desc.batch() : x.desc.batch() * x.desc.channels();
  const auto p = static_cast<float>(op.dropout_p);
  const float scale = static_cast<float>(1.0 / (1.0 - op.dropout_p));
  std::vector<float> own(noise_out ? 0 : static_cast<size_t>(units));  // when the noise is not saved
  float* noise = noise_out ? noise_out->data<float>() : own.data();
  for (int64_t u = 0; u < units; ++u) noise[u] = dropout_keep(static_cast<uint64_t>(u), seed, p) ? scale : 0.f;
  scale_by_unit(op, x.desc, x.data<float>(), noise, y.data<float>());
}

// dx = g * noise of the element's unit (PyTorch's backward of its multiply by the noise).
void unit_dropout_backward(const Op& op, const Tensor& noise, const Tensor& dy, Tensor& dx) {
  same_numel(dy, dx);
  scale_by_unit(op, dy.desc, dy.data<float>(), noise.data<float>(), dx.data<float>());
}

}  // namespace

namespace {

// bfloat16 ReLU on the bits, with masks rather than selects on a struct (which GCC left as
// branches, mispredicted on random signs: 16 ms for the seed block's forward, 15x float32's).
// A value is below zero when its sign is set and its magnitude is in [1, 0x7F80] (not -0, not
// NaN).
inline uint32_t bf16_nonzero_number(uint32_t h) { return static_cast<uint32_t>((h & 0x7FFFu) - 1u < 0x7F80u); }

void relu_forward_bf16(const Tensor& x, Tensor& y) {  // may run in place
  const int64_t n = same_numel(x, y);
  const auto* xp = x.data<uint16_t>();
  auto* yp = y.data<uint16_t>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t h = xp[i];
    const uint32_t negative = (h >> 15) & bf16_nonzero_number(h);
    yp[i] = static_cast<uint16_t>(h & (negative - 1u));  // negative: mask 0, else all ones
  }
}

void relu_backward_bf16(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t n = same_numel(y, dy);
  const auto* __restrict yp = y.data<uint16_t>();
  const auto* __restrict gp = dy.data<uint16_t>();
  auto* __restrict dp = dx.data<uint16_t>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t h = yp[i], magnitude = h & 0x7FFFu;
    // y <= 0 (PyTorch's threshold_backward test, so a NaN output passes its gradient on): a
    // signed number that is not NaN, or a zero of either sign.
    const uint32_t at_most_zero =
        ((h >> 15) & static_cast<uint32_t>(magnitude <= 0x7F80u)) | static_cast<uint32_t>(magnitude == 0u);
    dp[i] = static_cast<uint16_t>(gp[i] & (at_most_zero - 1u));
  }
}

void relu_forward_f32(const Tensor& x, Tensor& y) {  // may run in place
  const int64_t n = same_numel(x, y);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float v = xp[i];
    yp[i] = v < 0.f ? 0.f : v;  // keeps NaN, as torch.relu
  }
}

void relu_backward_f32(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t n = same_numel(y, dy);
  const float* __restrict yp = y.data<float>();
  const float* __restrict gp = dy.data<float>();
  float* __restrict dp = dx.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float g = gp[i];           // loaded unconditionally, so that the select vectorises
    dp[i] = yp[i] <= 0.f ? 0.f : g;  // as threshold_backward: a NaN output passes its gradient
  }
}

}  // namespace

// float32, or bfloat16 under mixed precision (the value is copied or zeroed: no rounding).
void relu_forward(const Tensor& x, Tensor& y) {
  if (x.desc.dtype == DType::float16) throw std::logic_error("cpu backend: relu has no float16 kernel");
  if (x.desc.dtype == DType::bfloat16)
    relu_forward_bf16(x, y);
  else
    relu_forward_f32(x, y);
}

void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  if (y.desc.dtype == DType::float16) throw std::logic_error("cpu backend: relu has no float16 kernel");
  if (y.desc.dtype == DType::bfloat16)
    relu_backward_bf16(y, dy, dx);
  else
    relu_backward_f32(y, dy, dx);
}

void leaky_relu_forward(const Tensor& x, Tensor& y, float slope) {  // may run in place
  const int64_t n = same_numel(x, y);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    // max/min rather than a select of v and v * slope, which GCC keeps as a branch (-ftrapping-math)
    const float v = xp[i];
    yp[i] = std::max(v, 0.f) + slope * std::min(v, 0.f);
  }
}

void leaky_relu_backward(const Tensor& x, const Tensor& dy, Tensor& dx, float slope) {
  const int64_t n = same_numel(x, dy);
  const float* __restrict xp = x.data<float>();
  const float* __restrict gp = dy.data<float>();
  float* __restrict dp = dx.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    // g * (x > 0 ? 1 : slope), written with a 0/1 factor: GCC turns the select into a branch
    const float positive = static_cast<float>(xp[i] > 0.f);
    dp[i] = gp[i] * positive + gp[i] * slope * (1.f - positive);
  }
}

void dropout_forward(const Tensor& x, Tensor& y, Tensor* mask, uint64_t seed, float p) {
  const TensorDesc& d = x.desc;
  same_numel(x, y);
  const float scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(p)));
  const float* __restrict xp = x.data<float>();
  float* __restrict yp = y.data<float>();
  uint8_t* __restrict mp = mask ? mask->data<uint8_t>() : nullptr;
  // The mask follows the LOGICAL index, so that both layouts drop the same elements. We walk
  // memory in order and track the logical index: channels_first is the identity; channels_last
  // stores (n, spatial, c), whose logical index is (n*C + c)*S + s.
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  const bool last = d.layout == Layout::channels_last;
  const int64_t rows = batch * (last ? spatial : channels);
  const int64_t row_len = last ? channels : spatial;
#pragma omp parallel for schedule(static) if (rows * row_len > kParallelElements)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * row_len;
    int64_t logical = base, logical_step = 1;
    if (last) {
      const int64_t n = r / spatial, s = r % spatial;
      logical = n * channels * spatial + s;
      logical_step = spatial;
    }
    for (int64_t j = 0; j < row_len; ++j) {
      const bool keep = dropout_keep(static_cast<uint64_t>(logical + j * logical_step), seed, p);
      if (mp) mp[base + j] = keep ? 1 : 0;
      yp[base + j] = keep ? xp[base + j] * scale : 0.f;
    }
  }
}

void dropout_backward(const Tensor& mask, const Tensor& dy, Tensor& dx, float p) {
  const int64_t n = same_numel(mask, dy);
  const float scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(p)));
  const uint8_t* __restrict mp = mask.data<uint8_t>();
  const float* __restrict gp = dy.data<float>();
  float* __restrict dp = dx.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) dp[i] = gp[i] * (static_cast<float>(mp[i]) * scale);  // g * mask / (1 - p)
}

void copy(const Tensor& src, Tensor& dst) {
  same_numel(src, dst);
  if (src.raw() != dst.raw()) std::memcpy(dst.raw(), src.raw(), static_cast<size_t>(src.desc.bytes()));
}

namespace {

// One element of a float32, bfloat16 or float16 tensor, as float (host_io's reading of any dtype:
// exact for these three).
float element_as_float(const Tensor& t, int64_t i) {
  return static_cast<float>(load_element(t.raw(), i, t.desc.dtype));
}

bool stored_as_float32(const Tensor& t) { return t.desc.dtype == DType::float32 || t.desc.dtype == DType::tf32; }

}  // namespace

void add(const Tensor& a, const Tensor& b, Tensor& out) {
  const int64_t n = same_numel(a, b);
  same_numel(a, out);
  if (!stored_as_float32(a) || !stored_as_float32(b) || !stored_as_float32(out)) {
    // Mixed precision's half-precision gradients meet in the executor's sums: each element
    // widened, added in float and rounded once, as PyTorch's CPU add does for bfloat16.
#pragma omp parallel for schedule(static) if (n > kParallelElements)
    for (int64_t i = 0; i < n; ++i)
      store_element(out.raw(), i, out.desc.dtype, element_as_float(a, i) + element_as_float(b, i));
    return;
  }
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* op = out.data<float>();  // may alias a or b (in-place accumulation)
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) op[i] = ap[i] + bp[i];
}

void sub(const Tensor& a, const Tensor& b, Tensor& out) {
  const int64_t n = same_numel(a, b);
  same_numel(a, out);
  const float* __restrict ap = a.data<float>();
  const float* __restrict bp = b.data<float>();
  float* __restrict op = out.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) op[i] = ap[i] - bp[i];
}

void negate(const Tensor& x, Tensor& out) {
  const int64_t n = same_numel(x, out);
  const float* __restrict xp = x.data<float>();
  float* __restrict op = out.data<float>();
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (int64_t i = 0; i < n; ++i) op[i] = -xp[i];
}

void accumulate(Tensor& dst, const Tensor& src) { add(dst, src, dst); }

namespace {

// out = x * y, y either x's shape or broadcast over space (one value per (sample, channel)); used
// for the forward (a * b) and for grad_a (g * b).
void mul_maybe_broadcast(const Tensor& x, const Tensor& y, Tensor& out) {
  const int64_t n = same_numel(x, out);
  const float* __restrict xp = x.data<float>();
  const float* __restrict yp = y.data<float>();
  float* __restrict op = out.data<float>();
  if (y.desc.shape == x.desc.shape) {
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
    for (int64_t i = 0; i < n; ++i) op[i] = xp[i] * yp[i];
    return;
  }
  scale_planes(x.desc, xp, yp, op);  // y's N x C values are in plane order in either layout
}

// grad_b = g * a, summed over space (channel_sums: float within short chunks, double across) when
// b is broadcast.
void mul_grad_b(const Tensor& a, const Tensor& g, Tensor& grad_b) {
  if (grad_b.desc.shape == a.desc.shape) {
    mul_maybe_broadcast(g, a, grad_b);
    return;
  }
  const auto planes = static_cast<size_t>(a.desc.batch() * a.desc.channels());
  const std::vector<float> zero(planes, 0.f);
  std::vector<double> sums(planes), products(planes);
  channel_sums(a.desc, a.data<float>(), zero.data(), g.data<float>(), zero.data(), sums.data(), products.data());
  float* dp = grad_b.data<float>();
  for (size_t i = 0; i < planes; ++i) dp[i] = static_cast<float>(products[i]);
}

// layer_scale: out = x * w[c]; the forward and grad_x (g * w).
void scale_channels(const Tensor& x, const float* w, Tensor& out) {
  same_numel(x, out);
  scale_planes(x.desc, x.data<float>(), per_plane(x.desc, w, false).data(), out.data<float>());
}

// grad_w[c] = sum over N and space of g * x, in double, one channel per iteration (a fixed order).
void scale_channels_grad_weight(const Tensor& x, const Tensor& g, float* grad_w) {
  const int64_t batch = x.desc.batch(), channels = x.desc.channels(), spatial = x.desc.spatial_size();
  const float* __restrict xp = x.data<float>();
  const float* __restrict gp = g.data<float>();
  const bool channels_last = x.desc.layout == Layout::channels_last;
#pragma omp parallel for schedule(static) if (x.desc.numel() > kParallelElements)
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      if (channels_last) {
        for (int64_t s = 0; s < spatial; ++s) {
          const int64_t p = (n * spatial + s) * channels + c;
          sum += static_cast<double>(gp[p]) * xp[p];
        }
      } else {
        const int64_t base = (n * channels + c) * spatial;
#pragma omp simd reduction(+ : sum)
        for (int64_t s = 0; s < spatial; ++s) sum += static_cast<double>(gp[base + s]) * xp[base + s];
      }
    }
    grad_w[c] = static_cast<float>(sum);
  }
}

}  // namespace

void register_elementwise_kernels(KernelTable& table, CpuKernelContext context) {
  table.add(OpKind::relu, {[](const ForwardCall& call) {
                             relu_forward(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output);
                           },
                           [](const BackwardCall& call) {
                             if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                               relu_backward(need(call.output, call.op, "saved output"),
                                             need(call.grad_output, call.op, "grad_output"), *dx);
                           }});
  table.add(OpKind::leaky_relu, {[](const ForwardCall& call) {
                                   leaky_relu_forward(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output,
                                                      static_cast<float>(call.op.negative_slope));
                                 },
                                 [](const BackwardCall& call) {
                                   // In place, the op saved its output, positive where the input was.
                                   const Tensor* saved =
                                       at_or_null(call.inputs, 0) ? at_or_null(call.inputs, 0) : call.output;
                                   if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                     leaky_relu_backward(need(saved, call.op, "saved input or output"),
                                                         need(call.grad_output, call.op, "grad_output"), *dx,
                                                         static_cast<float>(call.op.negative_slope));
                                 }});
  for (const OpKind kind : {OpKind::sigmoid, OpKind::silu, OpKind::hardswish, OpKind::relu6, OpKind::gelu}) {
    OneDnnOps& onednn = context.onednn;
    table.add(kind, {[&onednn](const ForwardCall& call) {
                       onednn.eltwise_forward(*eltwise_form(call.op),
                                              need(at_or_null(call.inputs, 0), call.op, "input"), *call.output);
                     },
                     [&onednn](const BackwardCall& call) {
                       Tensor* dx = at_or_null(call.grad_inputs, 0);
                       if (!dx) return;
                       const EltwiseForm form = *eltwise_form(call.op);
                       const Tensor* saved = form.backward_reads_output ? call.output : at_or_null(call.inputs, 0);
                       onednn.eltwise_backward(form, need(saved, call.op, "saved tensor"),
                                               need(call.grad_output, call.op, "grad_output"), *dx);
                     }});
  }
  table.add(OpKind::hardsigmoid, {[](const ForwardCall& call) {
                                    hardsigmoid_forward(need(at_or_null(call.inputs, 0), call.op, "input"),
                                                        *call.output);
                                  },
                                  [](const BackwardCall& call) {
                                    if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                      hardsigmoid_backward(need(at_or_null(call.inputs, 0), call.op, "saved input"),
                                                           need(call.grad_output, call.op, "grad_output"), *dx);
                                  }});
  table.add(
      OpKind::dropout,
      {[](const ForwardCall& call) {
         const Tensor& x = need(at_or_null(call.inputs, 0), call.op, "input");
         if (!call.training) {
           copy(x, *call.output);  // the executor aliases instead; called anyway, it is the identity
           return;
         }
         dropout_forward(x, *call.output, at_or_null(call.aux, 0), call.seed, static_cast<float>(call.op.dropout_p));
       },
       [](const BackwardCall& call) {
         if (Tensor* dx = at_or_null(call.grad_inputs, 0))
           dropout_backward(need(at_or_null(call.aux, 0), call.op, "saved mask"),
                            need(call.grad_output, call.op, "grad_output"), *dx, static_cast<float>(call.op.dropout_p));
       }});
  for (OpKind kind : {OpKind::channel_dropout, OpKind::drop_path})
    table.add(kind, {[](const ForwardCall& call) {
                       const Tensor& x = need(at_or_null(call.inputs, 0), call.op, "input");
                       if (!call.training) {
                         copy(x, *call.output);  // the executor aliases instead; called anyway, it is the identity
                         return;
                       }
                       unit_dropout_forward(call.op, x, *call.output, at_or_null(call.aux, 0), call.seed);
                     },
                     [](const BackwardCall& call) {
                       if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                         unit_dropout_backward(call.op, need(at_or_null(call.aux, 0), call.op, "saved noise"),
                                               need(call.grad_output, call.op, "grad_output"), *dx);
                     }});
  table.add(OpKind::add, {[](const ForwardCall& call) {
                            add(need(at_or_null(call.inputs, 0), call.op, "input"),
                                need(at_or_null(call.inputs, 1), call.op, "second operand"), *call.output);
                          },
                          [](const BackwardCall& call) {
                            // Normally both gradients are aliases of dy and nothing is passed.
                            const Tensor& dy = need(call.grad_output, call.op, "grad_output");
                            for (Tensor* g : call.grad_inputs)
                              if (g) copy(dy, *g);
                          }});
  table.add(OpKind::sub, {[](const ForwardCall& call) {
                            sub(need(at_or_null(call.inputs, 0), call.op, "input"),
                                need(at_or_null(call.inputs, 1), call.op, "second operand"), *call.output);
                          },
                          [](const BackwardCall& call) {
                            const Tensor& dy = need(call.grad_output, call.op, "grad_output");
                            if (Tensor* dx = at_or_null(call.grad_inputs, 0)) copy(dy, *dx);  // normally an alias of dy
                            if (Tensor* db = at_or_null(call.grad_inputs, 1)) negate(dy, *db);
                          }});
  table.add(OpKind::mul,
            {[](const ForwardCall& call) {
               mul_maybe_broadcast(need(at_or_null(call.inputs, 0), call.op, "input"),
                                   need(at_or_null(call.inputs, 1), call.op, "second operand"), *call.output);
             },
             [](const BackwardCall& call) {
               const Tensor& dy = need(call.grad_output, call.op, "grad_output");
               if (Tensor* da = at_or_null(call.grad_inputs, 0))
                 mul_maybe_broadcast(dy, need(at_or_null(call.inputs, 1), call.op, "saved second operand"), *da);
               if (Tensor* db = at_or_null(call.grad_inputs, 1))
                 mul_grad_b(need(at_or_null(call.inputs, 0), call.op, "saved input"), dy, *db);
             }});
  table.add(OpKind::layer_scale, {[](const ForwardCall& call) {
                                    scale_channels(need(at_or_null(call.inputs, 0), call.op, "input"),
                                                   call.params.at(0)->data<float>(), *call.output);
                                  },
                                  [](const BackwardCall& call) {
                                    const Tensor& dy = need(call.grad_output, call.op, "grad_output");
                                    if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                      scale_channels(dy, call.params.at(0)->data<float>(), *dx);
                                    if (Tensor* dw = at_or_null(call.grad_params, 0))
                                      scale_channels_grad_weight(
                                          need(at_or_null(call.inputs, 0), call.op, "saved input"), dy,
                                          dw->data<float>());
                                  }});
}

}  // namespace convbench::cpu
