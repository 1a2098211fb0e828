// Layout conversion, space_to_depth and its inverse depth_to_space, channel_shuffle, and cast, forward
// and backward.
#include <algorithm>
#include <stdexcept>

#include "backends/cpu/cpu_kernels.hpp"
#include "runtime/half_float.hpp"
#include "runtime/host_io.hpp"

namespace convbench::cpu {
namespace {

// Per sample, a rows x cols matrix to its cols x rows transpose: channels-first (C x S) to
// channels-last (S x C) and back. Square tiles keep both the reads and the writes within a few
// cache lines at a time, whichever side is strided.
void transpose_per_sample(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batch * row_tiles * col_tiles;
#pragma omp parallel for schedule(static) if (batch * rows * cols > (1 << 15))
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t ct = t % col_tiles, rt = (t / col_tiles) % row_tiles, n = t / (col_tiles * row_tiles);
    const float* s = src + n * rows * cols;
    float* d = dst + n * rows * cols;
    const int64_t r_end = std::min(rows, (rt + 1) * kTile), c_end = std::min(cols, (ct + 1) * kTile);
    for (int64_t r = rt * kTile; r < r_end; ++r)
      for (int64_t c = ct * kTile; c < c_end; ++c) d[c * rows + r] = s[r * cols + c];
  }
}

// `src` in its layout to `dst` in the other (the same logical shape).
void convert_layout(const Tensor& src, Tensor& dst) {
  const TensorDesc& d = src.desc;
  if (dst.desc.layout == d.layout || dst.desc.shape != d.shape)
    throw std::invalid_argument("cpu backend: convert_layout needs the same shape in the other layout");
  const bool to_last = d.layout == Layout::channels_first;
  const int64_t c = d.channels(), s = d.spatial_size();
  transpose_per_sample(src.data<float>(), dst.data<float>(), d.batch(), to_last ? c : s, to_last ? s : c);
}

// space_to_depth: output memory position p reads input memory position source(p); output channel
// oc holds input channel c at block offset off, oc = c * b^d + off (channel_major) or
// off * C + c (block_major).
struct SpaceToDepthMap {
  SpatialDims in, out;
  int64_t batch, in_channels, out_channels, b, bd;
  bool channel_major, last;

  int64_t source(int64_t p) const {
    int64_t n, oc, sp;
    if (last) {
      oc = p % out_channels;
      sp = p / out_channels % out.volume();
      n = p / (out_channels * out.volume());
    } else {
      sp = p % out.volume();
      oc = p / out.volume() % out_channels;
      n = p / (out.volume() * out_channels);
    }
    const int64_t block = bd * b * b;
    const int64_t c = channel_major ? oc / block : oc % in_channels;
    const int64_t off = channel_major ? oc % block : oc / in_channels;
    const int64_t ow = sp % out.w, oh = sp / out.w % out.h, od = sp / (out.w * out.h);
    const int64_t x = ow * b + off % b, y = oh * b + off / b % b, z = od * bd + off / (b * b);
    const int64_t isp = (z * in.h + y) * in.w + x;
    return last ? (n * in.volume() + isp) * in_channels + c : (n * in_channels + c) * in.volume() + isp;
  }
};

SpaceToDepthMap space_to_depth_map(const TensorDesc& in, const TensorDesc& out, const SpaceToDepthAttrs& a) {
  return {spatial_dims(in),
          spatial_dims(out),
          in.batch(),
          in.channels(),
          out.channels(),
          a.block_size,
          in.rank() == 5 ? a.block_size : 1,
          a.order == SpaceToDepthOrder::channel_major,
          in.layout == Layout::channels_last};
}

// Forward: y[p] = x[source(p)]; backward: dx[source(p)] = dy[p] (a permutation: every dx element
// is written once).
void space_to_depth(const Tensor& x, Tensor& y, const SpaceToDepthAttrs& a) {
  const SpaceToDepthMap m = space_to_depth_map(x.desc, y.desc, a);
  const float* __restrict xp = x.data<float>();
  float* __restrict yp = y.data<float>();
  const int64_t n = y.desc.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (int64_t p = 0; p < n; ++p) yp[p] = xp[m.source(p)];
}

void space_to_depth_backward(const Tensor& dy, Tensor& dx, const SpaceToDepthAttrs& a) {
  const SpaceToDepthMap m = space_to_depth_map(dx.desc, dy.desc, a);
  const float* __restrict gp = dy.data<float>();
  float* __restrict dp = dx.data<float>();
  const int64_t n = dy.desc.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (int64_t p = 0; p < n; ++p) dp[m.source(p)] = gp[p];
}

// channel_shuffle: input channel c = i * (C/g) + j moves to channel j * g + i (forward), or the
// gradient comes back the same way (backward: `inverse`). Whole planes are copied in
// channels-first; in channels-last each position's row of C is permuted.
void shuffle_channels(const Tensor& src, Tensor& dst, int64_t groups, bool inverse) {
  const int64_t batch = src.desc.batch(), channels = src.desc.channels(), spatial = src.desc.spatial_size();
  const int64_t per_group = channels / groups;
  const float* __restrict sp = src.data<float>();
  float* __restrict dp = dst.data<float>();
  // Position of input channel c in the output.
  auto moved = [&](int64_t c) { return (c % per_group) * groups + c / per_group; };
  if (src.desc.layout == Layout::channels_first) {
#pragma omp parallel for schedule(static) if (src.desc.numel() > (1 << 15))
    for (int64_t nc = 0; nc < batch * channels; ++nc) {
      const int64_t n = nc / channels, c = nc % channels;
      const int64_t from = inverse ? moved(c) : c, to = inverse ? c : moved(c);
      std::copy_n(sp + (n * channels + from) * spatial, spatial, dp + (n * channels + to) * spatial);
    }
    return;
  }
#pragma omp parallel for schedule(static) if (src.desc.numel() > (1 << 15))
  for (int64_t p = 0; p < batch * spatial; ++p) {
    const float* row = sp + p * channels;
    float* out = dp + p * channels;
    for (int64_t c = 0; c < channels; ++c) {
      if (inverse)
        out[c] = row[moved(c)];
      else
        out[moved(c)] = row[c];
    }
  }
}

// `src` into `dst` of another dtype, element by element (float16 and bfloat16 rounded to nearest
// even, host_io's conversions). A cast keeps the layout, so positions match one to one.
void cast_copy(const Tensor& src, Tensor& dst) {
  if (src.desc.shape != dst.desc.shape || src.desc.layout != dst.desc.layout)
    throw std::invalid_argument("cpu backend: cast: the two tensors differ in shape or layout");
  const int64_t n = src.desc.numel();
  const DType from = src.desc.dtype, to = dst.desc.dtype;
  const void* s = src.raw();
  void* d = dst.raw();
  const bool wide_from = from == DType::float32 || from == DType::tf32,
             wide_to = to == DType::float32 || to == DType::tf32;
  // Mixed precision's casts (float32 <-> bfloat16) in loops the compiler vectorises; the
  // element-by-element conversion through double below took 8.6 ms for the seed block's input,
  // 7x its memory traffic.
  if (wide_from && to == DType::bfloat16) {
    const float* sp = src.data<float>();
    auto* dp = dst.data<uint16_t>();
#pragma omp parallel for simd schedule(static) if (n > (1 << 15))
    for (int64_t i = 0; i < n; ++i) dp[i] = float_to_bf16(sp[i]);
    return;
  }
  if (from == DType::bfloat16 && wide_to) {
    const auto* sp = src.data<uint16_t>();
    float* dp = dst.data<float>();
#pragma omp parallel for simd schedule(static) if (n > (1 << 15))
    for (int64_t i = 0; i < n; ++i) dp[i] = bf16_to_float(sp[i]);
    return;
  }
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (int64_t i = 0; i < n; ++i) store_element(d, i, to, load_element(s, i, from));
}

}  // namespace

void register_layout_kernels(KernelTable& table) {
  table.add(OpKind::cast, {[](const ForwardCall& call) {
                             cast_copy(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output);
                           },
                           [](const BackwardCall& call) {
                             if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                               cast_copy(need(call.grad_output, call.op, "grad_output"), *dx);
                           }});
  table.add(OpKind::space_to_depth,
            {[](const ForwardCall& call) {
               space_to_depth(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output, call.op.space_to_depth);
             },
             [](const BackwardCall& call) {
               if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                 space_to_depth_backward(need(call.grad_output, call.op, "grad_output"), *dx, call.op.space_to_depth);
             }});
  table.add(OpKind::channel_shuffle, {[](const ForwardCall& call) {
                                        shuffle_channels(need(at_or_null(call.inputs, 0), call.op, "input"),
                                                         *call.output, call.op.shuffle_groups, false);
                                      },
                                      [](const BackwardCall& call) {
                                        if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                          shuffle_channels(need(call.grad_output, call.op, "grad_output"), *dx,
                                                           call.op.shuffle_groups, true);
                                      }});
  // depth_to_space: space_to_depth the other way (the large tensor is space_to_depth's input).
  table.add(OpKind::depth_to_space, {[](const ForwardCall& call) {
                                       space_to_depth_backward(need(at_or_null(call.inputs, 0), call.op, "input"),
                                                               *call.output, call.op.space_to_depth);
                                     },
                                     [](const BackwardCall& call) {
                                       if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                         space_to_depth(need(call.grad_output, call.op, "grad_output"), *dx,
                                                        call.op.space_to_depth);
                                     }});
  table.add(OpKind::convert_layout, {[](const ForwardCall& call) {
                                       convert_layout(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output);
                                     },
                                     [](const BackwardCall& call) {
                                       if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                                         convert_layout(need(call.grad_output, call.op, "grad_output"), *dx);
                                     }});
}

}  // namespace convbench::cpu
