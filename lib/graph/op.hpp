// One node of the op graph: what it computes, which values it reads and writes, its parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/dtype.hpp"

namespace convbench {

// Every kind is listed once, in graph/op_kinds.def.
enum class OpKind {
#define CONVBENCH_OP_KIND(kind) kind,
#include "graph/op_kinds.def"
#undef CONVBENCH_OP_KIND
};

std::string_view to_string(OpKind kind);

struct FoldProgram;  // graph/fold_program.hpp

// Per-dimension vectors have one entry per spatial dim.
struct ConvAttrs {
  int64_t out_channels = 0;
  std::vector<int64_t> kernel, stride, padding, dilation;
  std::vector<int64_t> output_padding;  // conv_transpose only
  int64_t groups = 1;
  bool bias = true;
  // conv only: a frozen conv's weight and bias are buffers (not trained: no weight gradient, not
  // counted as parameters); blur fills the weight with the normalised binomial filter.
  bool frozen = false;
  bool blur_init = false;
  // Memory order of the weight the conv computes with. Shape inference sets it to the input's
  // layout (ops/conv.cpp), and the weight is stored so (ParamDecl::layout); a folded_conv's kernel,
  // computed by its fold program, stays channels_first.
  Layout weight_layout = Layout::channels_first;
};

struct NormAttrs {
  int64_t groups = 1;  // group_norm only
  double eps = 1e-5;
  double momentum = 0.1;  // batch_norm running statistics, as PyTorch
};

struct PoolAttrs {
  std::vector<int64_t> kernel, stride, padding;
};

struct LinearAttrs {
  int64_t out_features = 0;
  bool bias = true;
};

// slice along channels: channels [start, start + length) of the input.
struct SliceAttrs {
  int64_t start = 0, length = 0;
};

// space_to_depth's channel order: out channel c * b^d + offset (channel_major, PyTorch's
// pixel_unshuffle) or offset * C + c (block_major, timm's TResNet SpaceToDepth), the offset
// being the position within the b x b (x b) block, row-major.
enum class SpaceToDepthOrder { channel_major, block_major };
struct SpaceToDepthAttrs {
  int64_t block_size = 2;
  SpaceToDepthOrder order = SpaceToDepthOrder::channel_major;
};

// gelu's form: the exact one (erf) or PyTorch's approximate="tanh".
enum class GeluApproximation { none, tanh };

// Attribute fields are plain members (unused ones keep their defaults) so that every op is one
// flat, copyable record, like ggml's op_params.
struct Op {
  OpKind kind = OpKind::relu;
  std::string name;
  std::vector<int> inputs;   // value ids
  int output = -1;           // value id
  std::vector<int> params;   // ids into Graph::params: conv, linear {weight, bias?}; norms {weight, bias}
  std::vector<int> buffers;  // ids into Graph::buffers: batch_norm {running_mean, running_var}

  ConvAttrs conv;
  NormAttrs norm;
  PoolAttrs pool;
  LinearAttrs linear;
  double negative_slope = 0.01;  // leaky_relu
  GeluApproximation gelu_approximate = GeluApproximation::none;
  double dropout_p = 0.0;
  int64_t upsample_scale = 2;
  // upsample's mode linear (PyTorch's bilinear in 2-D, trilinear in 3-D; nearest otherwise), its
  // align_corners, and the output's spatial size given instead of the scale (empty: by scale).
  bool upsample_linear = false;
  bool align_corners = false;
  std::vector<int64_t> upsample_size;
  SliceAttrs slice;
  SpaceToDepthAttrs space_to_depth;  // and depth_to_space's, its inverse
  int64_t shuffle_groups = 1;        // channel_shuffle
  // The op writes its output over its (first) input's storage: set by the memory policies
  // inplace_act and inplace_abn where autograd allows it (variants/memory_policy.cpp), never by a
  // spec. The saving rule may change with it (an in-place leaky_relu saves its output).
  bool in_place = false;
  // cast: the dtype it converts its input to (only the autocast transform makes casts).
  DType cast_to = DType::float32;
  // Set by the autocast transform (variants/autocast_graph.hpp) on an op of autocast class lower
  // that has parameters: the op computes with copies of its float32 parameters cast to this
  // dtype, which torch.autocast caches until the forward ends (and backward keeps those the op
  // saves); its parameter gradients come back in this dtype and are cast to float32.
  std::optional<DType> param_cast;
  // folded_conv: how its kernel is computed from its parameters (the source's branch weights);
  // `conv` holds the folded conv's geometry. Shared: a graph and its copies hold one program.
  std::shared_ptr<const FoldProgram> fold;
};

}  // namespace convbench
