// Host entry points of convbench's own CUDA kernels (kernels/*.cu): every op of the IR that
// cuDNN does not compute, forward and backward, with exactly the reference backend's semantics
// (lib/backends/reference is the oracle). Each function launches on `stream` and returns at
// once; launch errors throw (CONVBENCH_CUDA_CHECK), execution errors surface at the next
// synchronising call.
//
// Storage dtypes: float32 and tf32 (both float), float16 and bfloat16 (computed in float).
// Activations are described by their logical (N, C, spatial) sizes and layout; elementwise ops
// whose operands share one layout work on memory order directly. Every tensor has fewer than
// 2^31 elements (the CUDA backend refuses larger ones), so indices are 32-bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "graph/dtype.hpp"
#include "graph/op.hpp"

// Small helpers of the shapes below are usable in kernels too.
#if defined(__CUDACC__)
#define CONVBENCH_KERNEL_HD __host__ __device__
#else
#define CONVBENCH_KERNEL_HD
#endif

namespace convbench::kernels {

// An activation's logical sizes: N, C and the product of its spatial dims.
struct ActShape {
  int n = 0, c = 0, s = 0;
  bool channels_last = false;
  CONVBENCH_KERNEL_HD int numel() const { return n * c * s; }
};

// The logical batch n, channel c and spatial index sp of an activation's element at a memory
// position, and of the ones after it: elementwise kernels that need an element's channel (batch
// and group norm, the conv bias) decode their fragment's first position once (four integer
// divisions) and step through the rest with next(), instead of two or three divisions per
// element, which made those bandwidth-bound kernels wait on the integer units.
struct ActPosition {
  int n = 0, c = 0, sp = 0;
  static CONVBENCH_KERNEL_HD ActPosition at(int64_t p, const ActShape& s) {
    ActPosition a;
    const int q = static_cast<int>(p);
    if (s.channels_last) {
      a.c = q % s.c;
      const int rest = q / s.c;
      a.sp = rest % s.s;
      a.n = rest / s.s;
    } else {
      a.sp = q % s.s;
      const int rest = q / s.s;
      a.c = rest % s.c;
      a.n = rest / s.c;
    }
    return a;
  }
  // Moves to the next memory position.
  CONVBENCH_KERNEL_HD void next(const ActShape& s) {
    if (s.channels_last) {
      if (++c < s.c) return;
      c = 0;
      if (++sp < s.s) return;
      sp = 0;
    } else {
      if (++sp < s.s) return;
      sp = 0;
      if (++c < s.c) return;
      c = 0;
    }
    ++n;
  }
};

// ---- elementwise (kernels/elementwise.cu) ---------------------------------------------------

// Pointwise activations, each a forward and a backward functor in elementwise.cu: the CUDA
// backend registers every kind activation_kinds() lists, so a new activation is added there
// alone. Backward reads the tensor the op's definition saves (relu: its output, where y > 0
// passes g and NaN passes g as the reference's y <= 0 test; leaky_relu: its input).
const std::vector<OpKind>& activation_kinds();
void activation_forward(const Op& op, DType dtype, const void* x, void* y, int count, cudaStream_t stream);
void activation_backward(const Op& op, DType dtype, const void* saved, const void* g, void* grad_x, int count,
                         cudaStream_t stream);
// out = a + b, out = a - b, out = -a, dst += src (same dtype and layout).
void add(DType dtype, const void* a, const void* b, void* out, int count, cudaStream_t stream);
void sub(DType dtype, const void* a, const void* b, void* out, int count, cudaStream_t stream);
void negate(DType dtype, const void* a, void* out, int count, cudaStream_t stream);
void accumulate(DType dtype, void* dst, const void* src, int count, cudaStream_t stream);
// out = a + b over logical elements when the three differ in dtype or layout.
struct AnyTensor {
  const void* data;
  DType dtype;
  bool channels_last;
};
void add_any(AnyTensor a, AnyTensor b, void* out, DType out_dtype, bool out_channels_last, ActShape logical,
             cudaStream_t stream);
// Sets every element to `value` (rounded to the dtype).
void fill(DType dtype, void* data, double value, int count, cudaStream_t stream);
// GradScaler's loss scaling: out = in * factor (a power of two), rounded to the dtype; and
// t *= inverse over float32 gradients, *found_inf = 1.0f when an element was inf or NaN (left as
// it was otherwise: the caller zeroes it once for all the step's gradients).
void scale(DType dtype, const void* in, void* out, float factor, int count, cudaStream_t stream);
void unscale(float* t, float inverse, float* found_inf, int count, cudaStream_t stream);

// Dropout keeps logical element i when dropout_keep(i, seed, p) (runtime/philox.hpp) and scales
// it by `scale` = 1/(1-p); mask (uint8, same layout as x) records the 0/1 decisions.
void dropout_forward(DType dtype, ActShape shape, const void* x, void* y, uint8_t* mask, float p, float scale,
                     uint64_t seed, cudaStream_t stream);
void dropout_backward(DType dtype, const void* g, const uint8_t* mask, void* grad_x, float scale, int count,
                      cudaStream_t stream);

// Channel dropout keeps channel (n, c) when dropout_keep(n*C + c, seed, p), drop path keeps sample
// n when dropout_keep(n, seed, p); each scales what it keeps by `scale`. noise (one value of the
// dtype per unit, may be null) records 0 or scale per unit, which backward multiplies the gradient
// by.
enum class NoiseUnit { channel, sample };
void unit_dropout_forward(DType dtype, ActShape shape, const void* x, void* y, void* noise, float p, float scale,
                          uint64_t seed, NoiseUnit unit, cudaStream_t stream);
void unit_dropout_backward(DType dtype, ActShape shape, const void* g, const void* noise, void* grad_x, NoiseUnit unit,
                           cudaStream_t stream);

// ---- per-channel reductions (batch norm, conv bias) ----------------------------------------

// Per-channel reductions over (N, spatial) run in two stages: independent chunks of rows
// (stage 1, partial results in the op's workspace), then one warp per channel merges the
// chunks in a fixed order (stage 2), so results do not depend on scheduling.
inline constexpr int kMaxChunks = 256;  // per channel
struct ChannelReducePlan {
  int rows = 0;    // N * spatial
  int splits = 1;  // chunks of rows
  int rows_per_split = 0;
};
ChannelReducePlan channel_reduce_plan(ActShape shape);

// grad_bias[c] = sum of g over N and space (conv bias gradient). Workspace:
int64_t channel_sum_workspace_bytes(ActShape shape);
void channel_sum(DType dtype, ActShape shape, const void* g, void* out, void* workspace, cudaStream_t stream);
// out[c] = sum of g * x over N and space (layer_scale's weight gradient, in g's dtype); the same
// workspace as channel_sum.
void channel_dot(DType dtype, ActShape shape, const void* g, const void* x, void* out, void* workspace,
                 cudaStream_t stream);
// out[n, c, s] = x[n, c, s] * w[c] (layer_scale's forward and input gradient); w of param_dtype:
// the activations' dtype, or float32 under mixed precision.
void scale_channels(DType dtype, DType param_dtype, ActShape shape, const void* x, const void* w, void* out,
                    cudaStream_t stream);
// y[n, c, s] += bias[c] (conv bias).
void add_channel_bias(DType dtype, ActShape shape, void* y, const void* bias, cudaStream_t stream);

// ---- batch norm (kernels/batch_norm.cu) -----------------------------------------------------

int64_t batch_norm_forward_workspace_bytes(ActShape shape, bool training);
int64_t batch_norm_backward_workspace_bytes(ActShape shape);
// Training: statistics of the batch (biased variance for normalising), running statistics
// updated with momentum and the UNBIASED variance, mean and 1/std saved (when given) in float.
// Inference: the running statistics normalise. gamma/beta have `param_dtype`: the activations'
// dtype, or float32 under autocast; running statistics and saved statistics are float.
struct BatchNormForward {
  ActShape shape;
  const void* x;
  DType param_dtype;
  const void* gamma;
  const void* beta;
  float* running_mean;
  float* running_var;
  void* y;
  float* save_mean;    // training, may be null
  float* save_invstd;  // training, may be null
  double eps, momentum;
  bool training;
  // batch_norm_act: leaky ReLU follows (y may then be x: in place).
  bool leaky = false;
  float negative_slope = 0.0f;
  // Training under --conv-fusion conv_bn_stats, when the conv before wrote them: save_mean and
  // save_invstd hold x's per-channel sum and sum of squares, which become the mean and 1/std in
  // place (batch_norm_math.hpp) instead of a reduction over x.
  bool sums_in_saved = false;
};
void batch_norm_forward(DType dtype, const BatchNormForward& args, void* workspace, cudaStream_t stream);
struct BatchNormBackward {
  ActShape shape;
  const void* x;
  const void* g;
  const float* save_mean;
  const float* save_invstd;
  DType param_dtype;  // of gamma and the parameter gradients
  const void* gamma;
  void* grad_x;      // may be null
  void* grad_gamma;  // may be null
  void* grad_beta;   // may be null
};
void batch_norm_backward(DType dtype, const BatchNormBackward& args, void* workspace, cudaStream_t stream);
// batch_norm_act (Inplace-ABN): from the saved output y alone, undoing leaky ReLU (y / slope where
// y <= 0) and the affine ((z - beta) / gamma) to get xhat. Workspace: batch_norm_backward's.
struct BatchNormActBackward {
  ActShape shape;
  const void* y;
  const void* g;
  const float* save_invstd;
  DType param_dtype;  // of gamma, beta and their gradients
  const void* gamma;
  const void* beta;
  float negative_slope;
  void* grad_x;      // may be null
  void* grad_gamma;  // may be null
  void* grad_beta;   // may be null
};
void batch_norm_act_backward(DType dtype, const BatchNormActBackward& args, void* workspace, cudaStream_t stream);

// ---- group norm (kernels/group_norm.cu) -----------------------------------------------------

int64_t group_norm_forward_workspace_bytes(ActShape shape, int groups);
int64_t group_norm_backward_workspace_bytes(ActShape shape, int groups);
struct GroupNormForward {
  ActShape shape;
  int groups;
  const void* x;
  const void* gamma;
  const void* beta;
  void* y;
  float* save_mean;  // (N * groups), may be null
  float* save_rstd;  // may be null
  double eps;
};
void group_norm_forward(DType dtype, const GroupNormForward& args, void* workspace, cudaStream_t stream);
struct GroupNormBackward {
  ActShape shape;
  int groups;
  const void* x;
  const void* g;
  const float* save_mean;  // null: recomputed from x (GN has no running statistics)
  const float* save_rstd;
  const void* gamma;
  void* grad_x;      // may be null
  void* grad_gamma;  // may be null
  void* grad_beta;   // may be null
  double eps;
};
void group_norm_backward(DType dtype, const GroupNormBackward& args, void* workspace, cudaStream_t stream);

// ---- layer norm (kernels/layer_norm.cu): over the channels at each position ----------------

int64_t layer_norm_forward_workspace_bytes(ActShape shape);
int64_t layer_norm_backward_workspace_bytes(ActShape shape);
struct LayerNormForward {
  ActShape shape;
  const void* x;
  const void* gamma;
  const void* beta;
  void* y;
  float* save_mean;  // (N * S), may be null (inference: the workspace holds them)
  float* save_rstd;  // may be null
  double eps;
};
void layer_norm_forward(DType dtype, const LayerNormForward& args, void* workspace, cudaStream_t stream);
struct LayerNormBackward {
  ActShape shape;
  const void* x;
  const void* g;
  const float* save_mean;  // required
  const float* save_rstd;
  const void* gamma;
  void* grad_x;      // may be null
  void* grad_gamma;  // may be null
  void* grad_beta;   // may be null
};
void layer_norm_backward(DType dtype, const LayerNormBackward& args, void* workspace, cudaStream_t stream);

// ---- concat (kernels/concat.cu) -------------------------------------------------------------

// Copies the part (N, C_part, S) to or from channels [offset, offset + C_part) of the whole
// (N, C_whole, S); both in the same layout.
void concat_copy_in(DType dtype, ActShape part, int whole_channels, int offset, const void* src, void* whole,
                    cudaStream_t stream);
void concat_copy_out(DType dtype, ActShape part, int whole_channels, int offset, const void* whole, void* dst,
                     cudaStream_t stream);

// ---- pooling and upsampling (kernels/pool.cu, kernels/upsample.cu) --------------------------

// Spatial sizes padded to three dims (2-D tensors get depth 1), as in the reference backend.
struct Dims3 {
  int v[3] = {0, 0, 0};
  CONVBENCH_KERNEL_HD int& operator[](int i) { return v[i]; }
  CONVBENCH_KERNEL_HD const int& operator[](int i) const { return v[i]; }
};
struct PoolShape {
  int n = 0, c = 0;
  Dims3 in{}, out{}, kernel{}, stride{}, padding{};
  bool channels_last = false;
};
// Max pooling: padding never wins, the first maximum in window order wins, NaN wins; indices
// (int64, the output's layout) are flat positions within the input plane, as PyTorch's.
void max_pool_forward(DType dtype, const PoolShape& shape, const void* x, void* y, int64_t* indices,
                      cudaStream_t stream);
// grad_x[i] = sum of g over the windows whose maximum is i; without saved indices the maxima
// are found again in the saved input x.
void max_pool_backward(DType dtype, const PoolShape& shape, const void* g, const int64_t* indices, const void* x,
                       void* grad_x, cudaStream_t stream);
// Average pooling with count_include_pad: every window divides by the kernel volume.
void avg_pool_forward(DType dtype, const PoolShape& shape, const void* x, void* y, cudaStream_t stream);
void avg_pool_backward(DType dtype, const PoolShape& shape, const void* g, void* grad_x, cudaStream_t stream);

struct UpsampleShape {
  int n = 0, c = 0;
  Dims3 in{}, out{};
  int scale = 2;
  bool channels_last = false;
  bool linear = false;  // linear (bilinear, trilinear) to `out` instead of nearest by `scale`
  bool align_corners = false;
};
// Nearest neighbour: output position o reads input o / scale along every dim.
void upsample_forward(DType dtype, const UpsampleShape& shape, const void* x, void* y, cudaStream_t stream);
// grad_x[i] = sum of g over the scale^d block that reads i.
void upsample_backward(DType dtype, const UpsampleShape& shape, const void* g, void* grad_x, cudaStream_t stream);
// Linear, as PyTorch's upsample_{bi,tri}linear: each output mixes the 2^d input positions around
// its source coordinate. Backward scatters each output gradient to them with atomicAdd into a
// float workspace (one float per input element), then writes grad_x in its dtype.
void upsample_linear_forward(DType dtype, const UpsampleShape& shape, const void* x, void* y, cudaStream_t stream);
int64_t upsample_linear_backward_workspace_bytes(const UpsampleShape& shape);
void upsample_linear_backward(DType dtype, const UpsampleShape& shape, const void* g, void* grad_x, void* workspace,
                              cudaStream_t stream);

// ---- depthwise convolution (kernels/depthwise_conv.cu, kernels/depthwise_conv_math.hpp) -------

// A conv with groups == C (input channels) and K = multiplier * C output channels: output
// channel k filters input channel k / multiplier with its own kd x kh x kw taps. 2-D problems
// have depth 1 (in, out and kernel 1, stride 1, padding 0, dilation 1 along it).
struct DepthwiseShape {
  int n = 0, c = 0, multiplier = 1;
  Dims3 in{}, out{}, kernel{}, stride{}, padding{}, dilation{};
  bool channels_last = false;
  CONVBENCH_KERNEL_HD int out_channels() const { return c * multiplier; }
  CONVBENCH_KERNEL_HD int taps() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// The weight gradient is a sum over N x output volume rows per (output channel, tap). Stage 1:
// blocks of (output channels, tap group, chunk of rows) write partial sums; stage 2: one warp per
// (channel, tap) adds a channel's chunks in a fixed order (a tree over the warp), so a step's
// gradient is the same bits every time. For the unrolled kernel sizes a thread keeps every tap's
// sum (one tap group); otherwise each tap is its own group. Chunks: enough blocks to fill a large
// GPU (about 1024), at least 8 rows per thread, at most 256 chunks (the merge stays short).
struct DepthwiseWeightGradPlan {
  int taps_per_group = 1, tap_groups = 1;
  int rows = 0;  // N x output volume
  int rows_per_split = 0, splits = 1;
};
DepthwiseWeightGradPlan depthwise_weight_grad_plan(const DepthwiseShape& s);
// Workspace of the weight gradient's partial sums (0 when `weight_grad` is false).
int64_t depthwise_workspace_bytes(const DepthwiseShape& s, bool weight_grad);
// y = conv(x, w) + bias (bias may be null), one thread per output element.
void depthwise_conv_forward(DType dtype, const DepthwiseShape& s, const void* x, const void* w, const void* bias,
                            void* y, cudaStream_t stream);
// dx, one thread per input element gathering from the outputs that read it.
void depthwise_conv_grad_input(DType dtype, const DepthwiseShape& s, const void* w, const void* dy, void* dx,
                               cudaStream_t stream);
// dw (K, 1, kd, kh, kw), overwritten; `workspace` holds depthwise_workspace_bytes(s, true).
void depthwise_conv_grad_weight(DType dtype, const DepthwiseShape& s, const void* x, const void* dy, void* dw,
                                void* workspace, cudaStream_t stream);

// ---- global average pooling (kernels/pool.cu) ------------------------------------------------

// y[n, c] = mean of x over the spatial positions of plane (n, c); y has N * C elements (its
// spatial sizes are 1, so both layouts store it as n * C + c).
void global_avg_pool_forward(DType dtype, ActShape x_shape, const void* x, void* y, cudaStream_t stream);
// grad_x[n, c, s] = g[n, c] / S.
void global_avg_pool_backward(DType dtype, ActShape x_shape, const void* g, void* grad_x, cudaStream_t stream);

// ---- linear (kernels/linear.cu) -------------------------------------------------------------

// y (N, out) = x (N, in) W^T (+ bias), W (out, in) row-major; activations with spatial size 1 are
// these matrices in either layout. Backward: grad_x = g W, grad_w = g^T x, grad_b = sum over n of
// g; each may be null. Accumulation in float, one thread per result element.
struct LinearShape {
  int n = 0, in = 0, out = 0;
};
void linear_forward(DType dtype, LinearShape shape, const void* x, const void* w, const void* bias, void* y,
                    cudaStream_t stream);
void linear_backward(DType dtype, LinearShape shape, const void* x, const void* w, const void* g, void* grad_x,
                     void* grad_w, void* grad_b, cudaStream_t stream);

// ---- layout (kernels/layout.cu) -------------------------------------------------------------

// A smaller tensor (N, C, small) placed at the origin of a larger one (N, C, big), same layout.
struct BoxShape {
  int n = 0, c = 0;
  Dims3 small{}, big{};
  bool channels_last = false;
};
// Writes every element of `big`: the small tensor's value inside the leading box, zero outside.
void pad_box(DType dtype, const BoxShape& shape, const void* small, void* big, cudaStream_t stream);
// Copies the leading box of `big` into `small`.
void crop_box(DType dtype, const BoxShape& shape, const void* big, void* small, cudaStream_t stream);

// Copies a (N, C, spatial) tensor into the other memory order (channels_first <-> last);
// the CUDA backend uses it for conv weights (K, C/groups, kernel...).
void convert_layout(DType dtype, ActShape shape, const void* src, void* dst, cudaStream_t stream);

// ---- space_to_depth (kernels/layout.cu) ----------------------------------------------------

// Input (n, c, in) -> output (n, c * bd * b * b, out = in / b): output channel oc holds input
// channel c at offset off within the bd x b x b block (row-major), oc = c * block + off
// (channel_major) or off * C + c; bd is b in 3-D, 1 in 2-D (depth 1). Both tensors in one layout.
struct SpaceToDepthShape {
  int n = 0, c = 0;
  Dims3 in{}, out{};
  int b = 2, bd = 1;
  bool channel_major = true;
  bool channels_last = false;
};
void space_to_depth_forward(DType dtype, const SpaceToDepthShape& shape, const void* x, void* y, cudaStream_t stream);
// The inverse permutation: grad_x[source(p)] = g[p].
void space_to_depth_backward(DType dtype, const SpaceToDepthShape& shape, const void* g, void* grad_x,
                             cudaStream_t stream);

// channel_shuffle (ShuffleNet): forward, output channel j * groups + i = input channel
// i * (C/groups) + j; backward (`backward`), the gradient taken back the same way. Both layouts.
void channel_shuffle(DType dtype, ActShape shape, int groups, const void* src, void* dst, bool backward,
                     cudaStream_t stream);

// ---- mul (kernels/elementwise.cu) ----------------------------------------------------------

// out = x * y over x's elements (`shape`, its layout); y has x's shape, or with `broadcast` one
// value per (n, c) (N, C, 1, ...). Forward (a * b) and grad_a (g * b), and grad_b = g * a when b
// has a's shape.
void mul(DType dtype, ActShape shape, bool broadcast, const void* x, const void* y, void* out, cudaStream_t stream);
// grad_b[n, c] = sum over space of g * a, for a b broadcast over a's space (`shape` is a's).
void mul_grad_b_broadcast(DType dtype, ActShape shape, const void* g, const void* a, void* grad_b, cudaStream_t stream);

// ---- mixed precision (kernels/precision.cu) -------------------------------------------------

// dst = src converted from one float dtype to another (round to nearest even), in memory order.
void cast(DType from, DType to, int64_t count, const void* src, void* dst, cudaStream_t stream);

// ---- fold programs (kernels/fold.cu) --------------------------------------------------------

// folded_conv's kernel from its parameters (graph/fold_program.hpp, ops/fold_eval.cpp is the
// host version): float registers K[out][in][t0][t1][t2] and bias[out]. One thread per element
// written, each gathering its own sum, so no two threads write one element; the steps run one
// after another on the stream. Registers are float; weights, the cut kernel and their gradients
// are in the block's storage dtype (float32, tf32, float16, bfloat16).
struct FoldReg {
  float* k = nullptr;  // nullptr: the identity map of the fold's input (channel c -> c, tap 0)
  float* b = nullptr;  // nullptr: no bias
  int64_t co = 0, ci = 0, t0 = 1, t1 = 1, t2 = 1;
};
struct FoldConvGeometry {
  int64_t k0 = 1, k1 = 1, k2 = 1;  // the conv's kernel
  int64_t s0 = 1, s1 = 1, s2 = 1;  // its tap step in the source's taps (source stride x dilation)
  int64_t groups = 1;
  int64_t src_channels = 0;  // the conv's input channels
  int64_t src_channel = 0;   // from the identity (FoldReg k null): its first channel the conv reads
};
// dst = conv(w, bias) of src: K_dst[c2][c0][s*q + t] = sum_j,q w[c2][j][q] K_src[g0 + j][c0][t].
void fold_compose_forward(DType dtype, const FoldConvGeometry& g, FoldReg dst, FoldReg src, const void* w,
                          const void* bias, cudaStream_t stream);
// dst[dst_channel + c][.][t + shift] += scale * src[src_channel + c][.][t], c < channels.
void fold_accumulate_forward(FoldReg dst, FoldReg src, float scale, int64_t src_channel, int64_t dst_channel,
                             int64_t channels, const int64_t shift[3], cudaStream_t stream);
// The cut: weight[co][j][q] = K[co][g(co) * in/groups + j][first + dilation * q] (and the bias);
// with `scatter`, the adjoint: K[...] = weight[...] (K zeroed before).
struct FoldCut {
  int64_t groups = 1;
  int64_t first[3] = {0, 0, 0}, dilation[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
};
void fold_cut(DType dtype, FoldReg r, const FoldCut& cut, void* weight, void* bias, bool scatter, cudaStream_t stream);
// The adjoint of an accumulate: gsrc[src_channel + c][.][t] += scale * gdst[dst_channel + c][.][t + shift].
void fold_accumulate_backward(FoldReg gdst, FoldReg gsrc, float scale, int64_t src_channel, int64_t dst_channel,
                              int64_t channels, const int64_t shift[3], cudaStream_t stream);
// The adjoint of a compose: dw (written), dbias (written, may be null), gsrc (+=; k null: the
// identity, nothing to do).
void fold_compose_backward(DType dtype, const FoldConvGeometry& g, FoldReg gdst, FoldReg src, FoldReg gsrc,
                           const void* w, void* dw, void* dbias, cudaStream_t stream);

}  // namespace convbench::kernels
