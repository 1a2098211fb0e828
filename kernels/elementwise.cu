// Elementwise kernels: the activations (relu, leaky_relu, sigmoid, silu, hardswish, hardsigmoid, relu6,
// gelu), add, sub, negate, accumulate, fill,
// GradScaler's scale and unscale, dropout, channel dropout, mul (below), and an
// add for operands of different dtypes or layouts. Operands of one layout are processed in
// memory order, 16 bytes per access where alignment allows; dropout alone needs logical indices
// (its mask is a function of the logical element), which it computes from memory positions.
#include <cmath>
#include <stdexcept>
#include <string>
#include "kernels/common.cuh"

#include "runtime/philox.hpp"

namespace convbench::kernels {
namespace {

template <class T, class Op>
__global__ void unary_kernel(const T* a, T* out, int64_t count, bool vec, Op op) {
  constexpr int N = Vec<T>::N;
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float va[N], vo[N];
  load_frag(a, p0, count, vec, va);
#pragma unroll
  for (int k = 0; k < N; ++k) vo[k] = op(va[k]);
  store_frag(out, p0, count, vec, vo);
}

template <class T>
__global__ void fill_kernel(T* out, int64_t count, bool vec, float value) {
  constexpr int N = Vec<T>::N;
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float vo[N];
#pragma unroll
  for (int k = 0; k < N; ++k) vo[k] = value;
  store_frag(out, p0, count, vec, vo);
}

template <class T, class Op>
__global__ void binary_kernel(const T* a, const T* b, T* out, int64_t count, bool vec, Op op) {
  constexpr int N = Vec<T>::N;
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float va[N], vb[N], vo[N];
  load_frag(a, p0, count, vec, va);
  load_frag(b, p0, count, vec, vb);
#pragma unroll
  for (int k = 0; k < N; ++k) vo[k] = op(va[k], vb[k]);
  store_frag(out, p0, count, vec, vo);
}

// max(x, 0) written as the reference's std::max(x, 0.0): NaN and -0 pass through unchanged.
struct Relu {
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};
struct ReluBackward {  // (y, g)
  __device__ float operator()(float y, float g) const { return y <= 0.0f ? 0.0f : g; }
};
struct LeakyRelu {
  float slope;
  __device__ float operator()(float x) const { return x > 0.0f ? x : x * slope; }
};
struct LeakyReluBackward {  // (x, g)
  float slope;
  __device__ float operator()(float x, float g) const { return x > 0.0f ? g : g * slope; }
};
struct Sigmoid {  // expf, not __expf: within the reference's float tolerance at every x
  __device__ float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};
struct SigmoidBackward {  // (y, g)
  __device__ float operator()(float y, float g) const { return g * y * (1.0f - y); }
};
// The activations whose backward reads their input (the (x, g) functors), each as PyTorch's
// kernel computes it, boundaries included: hardswish_backward, hardsigmoid_backward,
// hardtanh_backward (relu6: g strictly inside (0, 6)) and gelu_backward.
struct Silu {
  __device__ float operator()(float x) const { return x / (1.0f + expf(-x)); }
};
struct SiluBackward {
  __device__ float operator()(float x, float g) const {
    const float s = 1.0f / (1.0f + expf(-x));
    return g * s * (1.0f + x * (1.0f - s));
  }
};
struct Hardswish {
  __device__ float operator()(float x) const { return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
};
struct HardswishBackward {
  __device__ float operator()(float x, float g) const {
    return x < -3.0f ? 0.0f : x <= 3.0f ? g * (x / 3.0f + 0.5f) : g;
  }
};
struct Hardsigmoid {
  __device__ float operator()(float x) const { return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
};
struct HardsigmoidBackward {
  __device__ float operator()(float x, float g) const { return x > -3.0f && x < 3.0f ? g / 6.0f : 0.0f; }
};
struct Relu6 {  // as hardtanh: NaN passes through
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x > 6.0f ? 6.0f : x; }
};
struct Relu6Backward {
  __device__ float operator()(float x, float g) const { return x > 0.0f && x < 6.0f ? g : 0.0f; }
};
constexpr float kSqrtHalf = 0.70710678118654752f;       // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.39894228040143268f;     // 1 / sqrt(2 pi)
constexpr float kGeluTanhScale = 0.79788456080286536f;  // sqrt(2 / pi)
constexpr float kGeluTanhCubic = 0.044715f;
struct Gelu {
  bool tanh_form;
  __device__ float operator()(float x) const {
    if (tanh_form) return 0.5f * x * (1.0f + tanhf(kGeluTanhScale * (x + kGeluTanhCubic * x * x * x)));
    return 0.5f * x * (1.0f + erff(x * kSqrtHalf));
  }
};
struct GeluBackward {
  bool tanh_form;
  __device__ float operator()(float x, float g) const {
    if (tanh_form) {
      const float t = tanhf(kGeluTanhScale * (x + kGeluTanhCubic * x * x * x));
      const float inner_slope = kGeluTanhScale * (1.0f + 3.0f * kGeluTanhCubic * x * x);
      return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner_slope);
    }
    const float cdf = 0.5f * (1.0f + erff(x * kSqrtHalf));
    return g * (cdf + x * kInvSqrt2Pi * expf(-0.5f * x * x));
  }
};
struct Plus {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Minus {
  __device__ float operator()(float a, float b) const { return a - b; }
};
struct Negate {
  __device__ float operator()(float a) const { return -a; }
};
// GradScaler's scale: a power of two, so the product is exact in float and only the store rounds,
// as the host backends' double product does.
struct Scaled {
  float factor;
  __device__ float operator()(float x) const { return x * factor; }
};
// torch._amp_foreach_non_finite_check_and_unscale_: x * inverse, and *found_inf = 1 when x was
// inf or NaN (many threads may store the same 1; it is left as it was otherwise).
struct Unscaled {
  float inverse;
  float* found_inf;
  __device__ float operator()(float x) const {
    if (!isfinite(x)) *found_inf = 1.0f;
    return x * inverse;
  }
};

template <class Op>
void launch_unary(DType dtype, const void* a, void* out, int count, Op op, cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = all_aligned16(a, out);
    CONVBENCH_LAUNCH(frag_blocks<T>(count), kThreads, 0, stream, unary_kernel<T, Op>)
    (static_cast<const T*>(a), static_cast<T*>(out), count, vec, op);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

template <class Op>
void launch_binary(DType dtype, const void* a, const void* b, void* out, int count, Op op, cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = all_aligned16(a, b, out);
    CONVBENCH_LAUNCH(frag_blocks<T>(count), kThreads, 0, stream, binary_kernel<T, Op>)
    (static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), count, vec, op);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

// ---- mixed dtypes and layouts --------------------------------------------------------------

__device__ float load_any(const void* base, int i, DType dtype) {
  switch (dtype) {
    case DType::float16: return __half2float(static_cast<const __half*>(base)[i]);
    case DType::bfloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

__device__ void store_any(void* base, int i, DType dtype, float v) {
  switch (dtype) {
    case DType::float16: static_cast<__half*>(base)[i] = __float2half_rn(v); return;
    case DType::bfloat16: static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v); return;
    default: static_cast<float*>(base)[i] = v; return;
  }
}

// One thread per logical element l = (n * C + c) * S + sp.
__global__ void add_any_kernel(AnyTensor a, AnyTensor b, void* out, DType out_dtype, bool out_cl, ActShape s) {
  const int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= static_cast<int64_t>(s.numel())) return;
  const int li = static_cast<int>(l);
  const int sp = li % s.s, nc = li / s.s, c = nc % s.c, n = nc / s.c;
  auto at = [&](bool channels_last) {
    ActShape t = s;
    t.channels_last = channels_last;
    return offset_of(n, c, sp, t);
  };
  const float v = load_any(a.data, at(a.channels_last), a.dtype) + load_any(b.data, at(b.channels_last), b.dtype);
  store_any(out, at(out_cl), out_dtype, v);
}

// ---- dropout -------------------------------------------------------------------------------

// Memory position -> logical element index, which is what the mask is a function of.
__device__ __forceinline__ uint64_t logical_index(int p, const ActShape& s) {
  if (!s.channels_last) return static_cast<uint64_t>(p);
  const int c = p % s.c, ns = p / s.c, n = ns / s.s, sp = ns % s.s;
  return (static_cast<uint64_t>(n) * s.c + c) * s.s + sp;
}

template <class T>
__global__ void dropout_forward_kernel(ActShape s, const T* x, T* y, uint8_t* mask, float p, float scale, uint64_t seed,
                                       bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float vx[N], vy[N];
  load_frag(x, p0, count, vec, vx);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (p0 + k >= count) break;
    const int pos = static_cast<int>(p0 + k);
    const float m = dropout_keep(logical_index(pos, s), seed, p) ? 1.0f : 0.0f;
    vy[k] = vx[k] * m * scale;  // the reference's x * m * scale: a dropped NaN stays NaN
    if (mask) mask[pos] = static_cast<uint8_t>(m);
  }
  store_frag(y, p0, count, vec, vy);
}

template <class T>
__global__ void dropout_backward_kernel(const T* g, const uint8_t* mask, T* gx, float scale, int64_t count, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float vg[N], vo[N];
  load_frag(g, p0, count, vec, vg);
#pragma unroll
  for (int k = 0; k < N; ++k) vo[k] = p0 + k < count ? vg[k] * static_cast<float>(mask[p0 + k]) * scale : 0.0f;
  store_frag(gx, p0, count, vec, vo);
}

// ---- channel dropout and drop path ---------------------------------------------------------

// One thread per element: its unit (channel dropout's (n, c), numbered n*C + c; drop path's sample
// n) is kept when dropout_keep(unit, seed, p); the thread of the unit's first logical position
// writes the unit's noise (0 or scale) when saved.
template <class T>
__global__ void unit_dropout_forward_kernel(ActShape s, const T* x, T* y, T* noise, float p, float scale, uint64_t seed,
                                            bool per_sample) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.numel())) return;
  const int pos = static_cast<int>(idx);
  int n, c, sp;
  decode(s, pos, s.s, n, c, sp);
  const int unit = per_sample ? n : n * s.c + c;
  const float m = dropout_keep(static_cast<uint64_t>(unit), seed, p) ? scale : 0.0f;
  y[pos] = from_float<T>(to_float(x[pos]) * m);
  if (noise != nullptr && sp == 0 && (!per_sample || c == 0)) noise[unit] = from_float<T>(m);
}

// grad_x = g * the saved noise of the element's unit.
template <class T>
__global__ void unit_dropout_backward_kernel(ActShape s, const T* g, const T* noise, T* grad_x, bool per_sample) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.numel())) return;
  const int pos = static_cast<int>(idx);
  int n, c, sp;
  decode(s, pos, s.s, n, c, sp);
  grad_x[pos] = from_float<T>(to_float(g[pos]) * to_float(noise[per_sample ? n : n * s.c + c]));
}

}  // namespace

const std::vector<OpKind>& activation_kinds() {
  static const std::vector<OpKind> kinds = {OpKind::relu,      OpKind::leaky_relu,  OpKind::sigmoid, OpKind::silu,
                                            OpKind::hardswish, OpKind::hardsigmoid, OpKind::relu6,   OpKind::gelu};
  return kinds;
}

void activation_forward(const Op& op, DType dtype, const void* x, void* y, int count, cudaStream_t stream) {
  switch (op.kind) {
    case OpKind::relu: return launch_unary(dtype, x, y, count, Relu{}, stream);
    case OpKind::leaky_relu:
      return launch_unary(dtype, x, y, count, LeakyRelu{static_cast<float>(op.negative_slope)}, stream);
    case OpKind::sigmoid: return launch_unary(dtype, x, y, count, Sigmoid{}, stream);
    case OpKind::silu: return launch_unary(dtype, x, y, count, Silu{}, stream);
    case OpKind::hardswish: return launch_unary(dtype, x, y, count, Hardswish{}, stream);
    case OpKind::hardsigmoid: return launch_unary(dtype, x, y, count, Hardsigmoid{}, stream);
    case OpKind::relu6: return launch_unary(dtype, x, y, count, Relu6{}, stream);
    case OpKind::gelu:
      return launch_unary(dtype, x, y, count, Gelu{op.gelu_approximate == GeluApproximation::tanh}, stream);
    default: throw std::logic_error("activation_forward: no CUDA kernel for " + std::string(to_string(op.kind)));
  }
}

void activation_backward(const Op& op, DType dtype, const void* saved, const void* g, void* grad_x, int count,
                         cudaStream_t stream) {
  switch (op.kind) {
    case OpKind::relu: return launch_binary(dtype, saved, g, grad_x, count, ReluBackward{}, stream);
    case OpKind::leaky_relu:
      return launch_binary(dtype, saved, g, grad_x, count, LeakyReluBackward{static_cast<float>(op.negative_slope)},
                           stream);
    case OpKind::sigmoid: return launch_binary(dtype, saved, g, grad_x, count, SigmoidBackward{}, stream);
    case OpKind::silu: return launch_binary(dtype, saved, g, grad_x, count, SiluBackward{}, stream);
    case OpKind::hardswish: return launch_binary(dtype, saved, g, grad_x, count, HardswishBackward{}, stream);
    case OpKind::hardsigmoid: return launch_binary(dtype, saved, g, grad_x, count, HardsigmoidBackward{}, stream);
    case OpKind::relu6: return launch_binary(dtype, saved, g, grad_x, count, Relu6Backward{}, stream);
    case OpKind::gelu:
      return launch_binary(dtype, saved, g, grad_x, count, GeluBackward{op.gelu_approximate == GeluApproximation::tanh},
                           stream);
    default: throw std::logic_error("activation_backward: no CUDA kernel for " + std::string(to_string(op.kind)));
  }
}

void add(DType dtype, const void* a, const void* b, void* out, int count, cudaStream_t stream) {
  launch_binary(dtype, a, b, out, count, Plus{}, stream);
}

void sub(DType dtype, const void* a, const void* b, void* out, int count, cudaStream_t stream) {
  launch_binary(dtype, a, b, out, count, Minus{}, stream);
}

void negate(DType dtype, const void* a, void* out, int count, cudaStream_t stream) {
  launch_unary(dtype, a, out, count, Negate{}, stream);
}

void accumulate(DType dtype, void* dst, const void* src, int count, cudaStream_t stream) {
  launch_binary(dtype, dst, src, dst, count, Plus{}, stream);
}

void fill(DType dtype, void* data, double value, int count, cudaStream_t stream) {
  if (count <= 0) return;
  // Stores only: the old contents are never read (half the traffic of a unary op in place, and
  // nothing for compute-sanitizer's initcheck to flag). +0 is all-zero bits in every float type.
  if (value == 0.0 && !std::signbit(value)) {
    CONVBENCH_CUDA_CHECK(cudaMemsetAsync(data, 0, static_cast<size_t>(count) * element_bytes(dtype), stream));
    return;
  }
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(frag_blocks<T>(count), kThreads, 0, stream, fill_kernel<T>)
    (static_cast<T*>(data), count, all_aligned16(data), static_cast<float>(value));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void scale(DType dtype, const void* in, void* out, float factor, int count, cudaStream_t stream) {
  launch_unary(dtype, in, out, count, Scaled{factor}, stream);
}

void unscale(float* t, float inverse, float* found_inf, int count, cudaStream_t stream) {
  launch_unary(DType::float32, t, t, count, Unscaled{inverse, found_inf}, stream);
}

void add_any(AnyTensor a, AnyTensor b, void* out, DType out_dtype, bool out_channels_last, ActShape logical,
             cudaStream_t stream) {
  for (DType d : {a.dtype, b.dtype, out_dtype})
    dispatch_float(d, [](auto) {});  // throws for a dtype the kernel cannot load
  if (logical.numel() <= 0) return;
  CONVBENCH_LAUNCH(blocks_for(logical.numel()), kThreads, 0, stream, add_any_kernel)
  (a, b, out, out_dtype, out_channels_last, logical);
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void dropout_forward(DType dtype, ActShape shape, const void* x, void* y, uint8_t* mask, float p, float scale,
                     uint64_t seed, cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = all_aligned16(x, y);
    CONVBENCH_LAUNCH(frag_blocks<T>(shape.numel()), kThreads, 0, stream, dropout_forward_kernel<T>)
    (shape, static_cast<const T*>(x), static_cast<T*>(y), mask, p, scale, seed, vec);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void dropout_backward(DType dtype, const void* g, const uint8_t* mask, void* grad_x, float scale, int count,
                      cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = all_aligned16(g, grad_x);
    CONVBENCH_LAUNCH(frag_blocks<T>(count), kThreads, 0, stream, dropout_backward_kernel<T>)
    (static_cast<const T*>(g), mask, static_cast<T*>(grad_x), scale, count, vec);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void unit_dropout_forward(DType dtype, ActShape shape, const void* x, void* y, void* noise, float p, float scale,
                          uint64_t seed, NoiseUnit unit, cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  const bool per_sample = unit == NoiseUnit::sample;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(shape.numel()), kThreads, 0, stream, unit_dropout_forward_kernel<T>)
    (shape, static_cast<const T*>(x), static_cast<T*>(y), static_cast<T*>(noise), p, scale, seed, per_sample);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void unit_dropout_backward(DType dtype, ActShape shape, const void* g, const void* noise, void* grad_x, NoiseUnit unit,
                           cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  const bool per_sample = unit == NoiseUnit::sample;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(shape.numel()), kThreads, 0, stream, unit_dropout_backward_kernel<T>)
    (shape, static_cast<const T*>(g), static_cast<const T*>(noise), static_cast<T*>(grad_x), per_sample);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

// mul: out = a * b, b either a's shape or (N, C, 1, ...) broadcast over space (one value per
// (n, c), stored alike in both layouts), and its backward: grad_a = g * b, grad_b = g * a, summed
// over space for a broadcast b (one block per (n, c), a fixed-order block sum: deterministic).
namespace {

// One thread per element of x (memory order): out = x * y, y indexed as b.
template <class T>
__global__ void mul_kernel(ActShape s, bool broadcast, const T* x, const T* y, T* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(s.numel())) return;
  const int p = static_cast<int>(i);
  int yi = p;
  if (broadcast) {
    int n, c, sp;
    decode(s, p, s.s, n, c, sp);
    yi = n * s.c + c;
  }
  out[p] = from_float<T>(to_float(x[p]) * to_float(y[yi]));
}

// Block (n * C + c): grad_b[n, c] = sum over space of g * a.
template <class T>
__global__ void mul_grad_b_broadcast_kernel(ActShape s, const T* g, const T* a, T* grad_b) {
  __shared__ float scratch[32];
  const int nc = blockIdx.x, n = nc / s.c, c = nc % s.c;
  float sum = 0.0f;
  for (int sp = threadIdx.x; sp < s.s; sp += blockDim.x) {
    const int p = offset_of(n, c, sp, s);
    sum += to_float(g[p]) * to_float(a[p]);
  }
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) grad_b[nc] = from_float<T>(sum);
}

}  // namespace

void mul(DType dtype, ActShape shape, bool broadcast, const void* x, const void* y, void* out, cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  dispatch_float(dtype, [&](auto t) {
    using T = decltype(t);
    CONVBENCH_LAUNCH(blocks_for(shape.numel()), kThreads, 0, stream, mul_kernel<T>)
    (shape, broadcast, static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void mul_grad_b_broadcast(DType dtype, ActShape shape, const void* g, const void* a, void* grad_b,
                          cudaStream_t stream) {
  if (shape.n * shape.c <= 0) return;
  dispatch_float(dtype, [&](auto t) {
    using T = decltype(t);
    CONVBENCH_LAUNCH(static_cast<unsigned>(shape.n * shape.c), kThreads, 0, stream, mul_grad_b_broadcast_kernel<T>)
    (shape, static_cast<const T*>(g), static_cast<const T*>(a), static_cast<T*>(grad_b));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels
