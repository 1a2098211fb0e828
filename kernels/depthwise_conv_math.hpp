// The arithmetic of convbench's depthwise convolution kernels (kernels/depthwise_conv.cu), written
// once for the GPU and the host: a kernel thread calls one of these functions for the element it
// owns, and tests/depthwise_conv_math_test.cpp calls the same functions for every element on the
// CPU, in the kernels' decomposition (the same unrolled kernel sizes, the same weight-gradient
// chunks), against the reference backend. So the index arithmetic is checked on every machine,
// and a GPU is needed only for what is CUDA's own (launch sizes, shared memory, the merges).
//
// Every function reads tensors through `as_float` and accumulates in float, as PyTorch's
// depthwise kernels do (their accscalar_t is float for float, half and bfloat16).
#pragma once

#include <cstdint>

#include "kernels.hpp"  // beside this file: found from the kernels and from the tests

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define CONVBENCH_DW_HD __host__ __device__ __forceinline__
#else
#define CONVBENCH_DW_HD inline
#endif
// Unrolled in the device pass only: a host compiler (GCC, -Werror) rejects the unknown pragma.
#if defined(__CUDA_ARCH__)
#define CONVBENCH_DW_UNROLL _Pragma("unroll")
#else
#define CONVBENCH_DW_UNROLL
#endif

namespace convbench::kernels {

CONVBENCH_DW_HD float as_float(float v) { return v; }
#if defined(__CUDACC__)
CONVBENCH_DW_HD float as_float(__half v) { return __half2float(v); }
CONVBENCH_DW_HD float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }
#endif

// A kernel extent known at compile time (KD, KH, KW > 0: the loops unroll) or read from the shape (0).
template <int Compile>
CONVBENCH_DW_HD int extent(int runtime) {
  return Compile > 0 ? Compile : runtime;
}

// One element's logical position: batch n, channel c, spatial (d, h, w).
struct DwPosition {
  int n = 0, c = 0, d = 0, h = 0, w = 0;
};

// Memory position of `p` in a tensor of `channels` channels and spatial `size`, in either layout.
CONVBENCH_DW_HD int dw_offset(const DwPosition& p, int channels, const Dims3& size, bool channels_last) {
  return channels_last ? (((p.n * size[0] + p.d) * size[1] + p.h) * size[2] + p.w) * channels + p.c
                       : (((p.n * channels + p.c) * size[0] + p.d) * size[1] + p.h) * size[2] + p.w;
}

// The logical position of memory position `offset` (the inverse of dw_offset).
CONVBENCH_DW_HD DwPosition dw_position(int offset, int channels, const Dims3& size, bool channels_last) {
  DwPosition p;
  int rest = offset;
  if (channels_last) {
    p.c = rest % channels;
    rest /= channels;
  }
  p.w = rest % size[2];
  rest /= size[2];
  p.h = rest % size[1];
  rest /= size[1];
  p.d = rest % size[0];
  rest /= size[0];
  if (channels_last) {
    p.n = rest;
  } else {
    p.c = rest % channels;
    p.n = rest / channels;
  }
  return p;
}

// The output index along one dim that reads input index `i` through tap `t`, or -1 when none does.
CONVBENCH_DW_HD int dw_output_index(int i, int t, int stride, int pad, int dilation, int out) {
  const int shifted = i + pad - t * dilation;
  if (shifted < 0 || shifted % stride != 0) return -1;
  const int o = shifted / stride;
  return o < out ? o : -1;
}

// y at output position `o` (o.c: the output channel): the taps of o.c's filter over input
// channel o.c / multiplier, plus the bias when there is one. w is (K, 1, kd, kh, kw).
template <int KD, int KH, int KW, class T>
CONVBENCH_DW_HD float depthwise_output(const DepthwiseShape& s, const T* x, const T* w, const T* bias,
                                       const DwPosition& o) {
  const int kd = extent<KD>(s.kernel[0]), kh = extent<KH>(s.kernel[1]), kw = extent<KW>(s.kernel[2]);
  const T* filter = w + o.c * kd * kh * kw;
  DwPosition in{o.n, o.c / s.multiplier, 0, 0, 0};
  float acc = 0.0f;
  CONVBENCH_DW_UNROLL
  for (int td = 0; td < kd; ++td) {
    in.d = o.d * s.stride[0] - s.padding[0] + td * s.dilation[0];
    if (in.d < 0 || in.d >= s.in[0]) continue;
    CONVBENCH_DW_UNROLL
    for (int th = 0; th < kh; ++th) {
      in.h = o.h * s.stride[1] - s.padding[1] + th * s.dilation[1];
      if (in.h < 0 || in.h >= s.in[1]) continue;
      CONVBENCH_DW_UNROLL
      for (int tw = 0; tw < kw; ++tw) {
        in.w = o.w * s.stride[2] - s.padding[2] + tw * s.dilation[2];
        if (in.w < 0 || in.w >= s.in[2]) continue;
        acc += as_float(x[dw_offset(in, s.c, s.in, s.channels_last)]) * as_float(filter[(td * kh + th) * kw + tw]);
      }
    }
  }
  return bias ? acc + as_float(bias[o.c]) : acc;
}

// The input gradient at input position `i` (i.c: the input channel), gathered from every output
// that read it (no atomics: each element is written by one thread, in a fixed order).
template <int KD, int KH, int KW, class T>
CONVBENCH_DW_HD float depthwise_grad_input(const DepthwiseShape& s, const T* w, const T* dy, const DwPosition& i) {
  const int kd = extent<KD>(s.kernel[0]), kh = extent<KH>(s.kernel[1]), kw = extent<KW>(s.kernel[2]);
  const int k = s.out_channels();
  DwPosition out{i.n, 0, 0, 0, 0};
  float acc = 0.0f;
  CONVBENCH_DW_UNROLL
  for (int td = 0; td < kd; ++td) {
    out.d = dw_output_index(i.d, td, s.stride[0], s.padding[0], s.dilation[0], s.out[0]);
    if (out.d < 0) continue;
    CONVBENCH_DW_UNROLL
    for (int th = 0; th < kh; ++th) {
      out.h = dw_output_index(i.h, th, s.stride[1], s.padding[1], s.dilation[1], s.out[1]);
      if (out.h < 0) continue;
      CONVBENCH_DW_UNROLL
      for (int tw = 0; tw < kw; ++tw) {
        out.w = dw_output_index(i.w, tw, s.stride[2], s.padding[2], s.dilation[2], s.out[2]);
        if (out.w < 0) continue;
        const int tap = (td * kh + th) * kw + tw;
        for (int m = 0; m < s.multiplier; ++m) {
          out.c = i.c * s.multiplier + m;
          acc += as_float(w[out.c * kd * kh * kw + tap]) * as_float(dy[dw_offset(out, k, s.out, s.channels_last)]);
        }
      }
    }
  }
  return acc;
}

// One output element's terms of the weight gradient: for output channel k at the output
// position of `row` (n * output volume + spatial index), acc[j] += dy * x for the taps
// tap_begin + j, j < Taps, of the group. A thread adds the rows of its chunk one after another.
template <int KD, int KH, int KW, int Taps, class T>
CONVBENCH_DW_HD void depthwise_grad_weight_terms(const DepthwiseShape& s, const T* x, const T* dy, int k, int row,
                                                 int tap_begin, float* acc) {
  const int kh = extent<KH>(s.kernel[1]), kw = extent<KW>(s.kernel[2]);
  const int volume = s.out[0] * s.out[1] * s.out[2];
  DwPosition o;
  o.n = row / volume;
  int sp = row - o.n * volume;
  o.d = sp / (s.out[1] * s.out[2]);
  sp -= o.d * s.out[1] * s.out[2];
  o.h = sp / s.out[2];
  o.w = sp - o.h * s.out[2];
  o.c = k;
  const float g = as_float(dy[dw_offset(o, s.out_channels(), s.out, s.channels_last)]);
  DwPosition in{o.n, k / s.multiplier, 0, 0, 0};
  CONVBENCH_DW_UNROLL
  for (int j = 0; j < Taps; ++j) {
    const int tap = tap_begin + j;
    const int td = tap / (kh * kw), th = tap / kw % kh, tw = tap % kw;
    in.d = o.d * s.stride[0] - s.padding[0] + td * s.dilation[0];
    in.h = o.h * s.stride[1] - s.padding[1] + th * s.dilation[1];
    in.w = o.w * s.stride[2] - s.padding[2] + tw * s.dilation[2];
    if (in.d < 0 || in.d >= s.in[0] || in.h < 0 || in.h >= s.in[1] || in.w < 0 || in.w >= s.in[2]) continue;
    acc[j] += g * as_float(x[dw_offset(in, s.c, s.in, s.channels_last)]);
  }
}

// Calls f(std::integral_constant-like tags) with the compile-time kernel extents the kernels are
// built for (3x3, 5x5, 7x7 in 2-D; 3x3x3 in 3-D; each loop unrolled), or (0, 0, 0) for any other
// kernel: the one dispatch both the launches and the host test use.
template <int V>
struct DwExtent {
  static constexpr int value = V;
};
template <class F>
void with_depthwise_extents(const DepthwiseShape& s, F&& f) {
  const int kd = s.kernel[0], kh = s.kernel[1], kw = s.kernel[2];
  if (kd == 1 && kh == 3 && kw == 3) return f(DwExtent<1>{}, DwExtent<3>{}, DwExtent<3>{});
  if (kd == 1 && kh == 5 && kw == 5) return f(DwExtent<1>{}, DwExtent<5>{}, DwExtent<5>{});
  if (kd == 1 && kh == 7 && kw == 7) return f(DwExtent<1>{}, DwExtent<7>{}, DwExtent<7>{});
  if (kd == 3 && kh == 3 && kw == 3) return f(DwExtent<3>{}, DwExtent<3>{}, DwExtent<3>{});
  return f(DwExtent<0>{}, DwExtent<0>{}, DwExtent<0>{});
}

}  // namespace convbench::kernels
