#include "backends/cuda/conv_problem.hpp"

#include "graph/fold_program.hpp"
#include "ops/fold_eval.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace convbench::cuda {
namespace {

int checked_int(int64_t value, const char* what) {
  if (value < 0 || value > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string("cuda backend: ") + what + " " + std::to_string(value) +
                                " does not fit cuDNN's int");
  return static_cast<int>(value);
}

}  // namespace

CudnnDims cudnn_dims(const TensorDesc& desc) {
  CudnnDims d;
  const std::vector<int64_t> strides = desc.strides();
  for (size_t i = 0; i < desc.shape.size(); ++i) {
    d.dims.push_back(checked_int(desc.shape[i], "dimension"));
    d.strides.push_back(checked_int(strides[i], "stride"));
  }
  return d;
}

std::vector<int> to_int_vector(const std::vector<int64_t>& values, const char* what) {
  std::vector<int> out;
  for (int64_t v : values) out.push_back(checked_int(v, what));
  return out;
}

bool weight_in_layout_order(const TensorDesc& weight, Layout layout) {
  if (weight.layout == layout || weight.rank() < 3) return true;
  return weight.spatial_size() == 1 || weight.channels() == 1;
}

std::string_view to_string(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::forward: return "forward";
    case ConvDirection::backward_data: return "backward_data";
    case ConvDirection::backward_filter: return "backward_filter";
  }
  return "?";
}

ConvProblem conv_problem(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::conv && op.kind != OpKind::conv_transpose && op.kind != OpKind::folded_conv)
    throw std::invalid_argument("cuda backend: " + op.name + " is not a convolution");
  ConvProblem p;
  p.transposed = op.kind == OpKind::conv_transpose;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const TensorDesc& out = graph.desc(op.output);
  p.x = p.transposed ? out : in;
  p.y = p.transposed ? in : out;
  // A frozen conv's weight is a buffer (ops/conv.cpp); a folded_conv's is the kernel its fold
  // program computes (ops/folded_conv.cpp), in the block's dtype.
  if (op.kind == OpKind::folded_conv)
    p.w = fold_kernel_desc(*op.fold, in.dtype);
  else
    p.w = graph.conv_weight(op);
  if (op.param_cast) p.w.dtype = *op.param_cast;  // cuDNN reads autocast's cast copy
  const size_t dims = static_cast<size_t>(in.spatial_rank());
  auto or_fill = [dims](const std::vector<int64_t>& v, int64_t fill) {
    return v.empty() ? std::vector<int64_t>(dims, fill) : v;
  };
  p.padding = or_fill(op.conv.padding, 0);
  p.stride = or_fill(op.conv.stride, 1);
  p.dilation = or_fill(op.conv.dilation, 1);
  p.groups = op.conv.groups;
  p.y_op = p.y;
  p.y_extra.assign(dims, 0);
  if (p.transposed) {
    const std::vector<int64_t> output_padding = or_fill(op.conv.output_padding, 0);
    for (size_t d = 0; d < dims; ++d) {
      p.y_extra[d] = output_padding[d] / p.stride[d];
      p.y.shape[2 + d] += p.y_extra[d];
    }
  }
  return p;
}

std::vector<ConvDirection> conv_directions(OpKind kind, Phase phase, bool grad_input, bool weight_grad) {
  using D = ConvDirection;
  const bool transposed = kind == OpKind::conv_transpose;
  if (phase == Phase::forward) return {transposed ? D::backward_data : D::forward};
  std::vector<D> out;
  if (grad_input) out.push_back(transposed ? D::forward : D::backward_data);
  if (weight_grad) out.push_back(D::backward_filter);
  return out;
}

int64_t align_up(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

ConvWorkspaceLayout conv_workspace_layout(int64_t converted_weight_bytes, int64_t padded_y_bytes,
                                          const std::vector<int64_t>& direction_bytes) {
  ConvWorkspaceLayout l;
  l.weight_bytes = converted_weight_bytes;
  l.padded_offset = align_up(converted_weight_bytes);
  l.padded_bytes = padded_y_bytes;
  l.cudnn_offset = l.padded_offset + align_up(padded_y_bytes);
  for (int64_t b : direction_bytes) l.cudnn_bytes = std::max(l.cudnn_bytes, b);
  if (l.cudnn_bytes > 0)
    l.total = l.cudnn_offset + l.cudnn_bytes;
  else if (l.padded_bytes > 0)
    l.total = l.padded_offset + l.padded_bytes;
  else
    l.total = l.weight_bytes;
  return l;
}

bool SameCudnnProblem::operator()(const ConvProblem& a, const ConvProblem& b) const {
  return a.x == b.x && a.w == b.w && a.y == b.y && a.padding == b.padding && a.stride == b.stride &&
         a.dilation == b.dilation && a.groups == b.groups;
}

size_t CudnnProblemHash::operator()(const ConvProblem& p) const {
  // FNV-1a over the fields SameCudnnProblem compares.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) {
    h ^= static_cast<uint64_t>(v);
    h *= 1099511628211ull;
  };
  for (const TensorDesc* d : {&p.x, &p.w, &p.y}) {
    mix(static_cast<int64_t>(d->dtype));
    mix(static_cast<int64_t>(d->layout));
    for (int64_t v : d->shape) mix(v);
  }
  for (const std::vector<int64_t>* v : {&p.padding, &p.stride, &p.dilation}) {
    mix(-1);  // separates the vectors: (1, 2 | 3) and (1 | 2, 3) differ
    for (int64_t x : *v) mix(x);
  }
  mix(p.groups);
  return static_cast<size_t>(h);
}

}  // namespace convbench::cuda
