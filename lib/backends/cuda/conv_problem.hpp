// The host-side arithmetic of the CUDA backend's convolutions, kept free of cuDNN calls so that
// it is testable without a GPU: how a tensor is described to cuDNN (dims and strides for either
// layout, 2-D or 3-D), how conv and conv_transpose map onto cuDNN's x * w -> y, which cuDNN
// directions an op runs in each phase, and how the op's workspace is laid out.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "graph/graph.hpp"
#include "runtime/backend.hpp"

namespace convbench::cuda {

// A tensor as cuDNN's legacy API takes it: logical dims (N, C, spatial...) and element strides,
// both as int. Throws std::invalid_argument when a dim or stride does not fit an int.
struct CudnnDims {
  std::vector<int> dims, strides;
};
CudnnDims cudnn_dims(const TensorDesc& desc);
// A per-dim attribute (padding, stride, dilation) as int; throws like cudnn_dims.
std::vector<int> to_int_vector(const std::vector<int64_t>& values, const char* what);

// Whether a weight (K, C/groups, kernel...) lies in memory in the order `layout` gives it: it has
// that layout, or the two orders coincide (one kernel tap, or one input channel per group as in
// depthwise convs). cuDNN is given filters in the activations' order; a weight that is not in it
// is converted in the op's workspace first, as PyTorch does with weight.contiguous(format). A
// conv's own weight is stored in its input's layout (ConvAttrs::weight_layout); only a
// folded_conv's channels_first kernel in a channels_last block takes this path.
bool weight_in_layout_order(const TensorDesc& weight, Layout layout);

// cuDNN's three convolution calls.
enum class ConvDirection { forward, backward_data, backward_filter };
std::string_view to_string(ConvDirection direction);

// One convolution in cuDNN's terms: y = conv(x, w). For a conv, x is the op's input and y its
// output. A conv_transpose is the data gradient of the conv that maps its output to its input,
// so there x is the op's output and y its input; the weight (C_in, C_out/groups, k...) is that
// conv's filter (K = C_in) unchanged.
//
// With output_padding >= stride (valid below the dilation) that conv would need asymmetric
// padding, which cuDNN's legacy API lacks. With the symmetric padding it has instead, the conv
// produces output_padding / stride more positions per dim at the end, of which the op's input
// are the leading ones: so cuDNN's y is the op input zero-padded at the end by `y_extra` (data
// direction), or cropped from such a padded result (the op's input gradient). `y_op` is the op's
// own tensor; y == y_op whenever no padding is needed.
struct ConvProblem {
  TensorDesc x, w, y;
  TensorDesc y_op;
  std::vector<int64_t> y_extra;  // per spatial dim
  std::vector<int64_t> padding, stride, dilation;
  int64_t groups = 1;
  bool transposed = false;
  bool padded() const { return y != y_op; }
};
// `op` must be a conv or conv_transpose of `graph`.
ConvProblem conv_problem(const Graph& graph, const Op& op);

// The key of CudnnConv's plan cache, looked up on every convolution call: two problems share a
// plan when cuDNN sees the same thing (x, w and y with their dtype, shape and layout, padding,
// stride, dilation, groups). Compared and hashed field by field: building a text key cost
// several allocations per call. y_op and y_extra are the op's view of y and do not reach cuDNN.
struct SameCudnnProblem {
  bool operator()(const ConvProblem& a, const ConvProblem& b) const;
};
struct CudnnProblemHash {
  size_t operator()(const ConvProblem& p) const;
};

// The cuDNN directions an op runs in a phase, in the order it runs them. `grad_input`: the op's
// input needs a gradient (the first conv of a block usually does not, and then skips it).
//   conv:            forward {forward};       backward {backward_data?, backward_filter}
//   conv_transpose:  forward {backward_data}; backward {forward?, backward_filter}
// A frozen conv (`weight_grad` false) skips backward_filter.
std::vector<ConvDirection> conv_directions(OpKind kind, Phase phase, bool grad_input, bool weight_grad = true);

// Offsets inside the workspace the executor gives a conv op for one phase: first the weight (or
// its gradient) in the activations' memory order when a conversion is needed, then the padded y
// of a conv_transpose that needs one (ConvProblem::padded), then cuDNN's scratch. The directions
// of a phase run one after another on one stream, so they share every region: the scratch is
// the largest direction's, the converted weight of the data direction and the filter gradient
// of backward-filter reuse one region of the weight's size, and so do the padded y of one
// direction and of the next.
struct ConvWorkspaceLayout {
  int64_t weight_offset = 0, weight_bytes = 0;
  int64_t padded_offset = 0, padded_bytes = 0;
  int64_t cudnn_offset = 0, cudnn_bytes = 0;
  int64_t total = 0;  // what workspace_bytes() reports: 0 when nothing is needed
};
ConvWorkspaceLayout conv_workspace_layout(int64_t converted_weight_bytes, int64_t padded_y_bytes,
                                          const std::vector<int64_t>& direction_bytes);

// Rounds up to a multiple of `alignment` (cuDNN wants aligned scratch).
int64_t align_up(int64_t bytes, int64_t alignment = 256);

}  // namespace convbench::cuda
