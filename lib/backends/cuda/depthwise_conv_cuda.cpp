#include "backends/cuda/depthwise_conv_cuda.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/cuda_op_kernels.hpp"
#include "kernels/kernels.hpp"

namespace convbench::cuda {

std::string_view to_string(DepthwiseConvPath path) {
  switch (path) {
    case DepthwiseConvPath::automatic: return "auto";
    case DepthwiseConvPath::own: return "own";
    case DepthwiseConvPath::cudnn: return "cudnn";
  }
  return "?";
}

std::optional<DepthwiseConvPath> parse_depthwise_conv_path(std::string_view name) {
  for (DepthwiseConvPath p : {DepthwiseConvPath::automatic, DepthwiseConvPath::own, DepthwiseConvPath::cudnn})
    if (to_string(p) == name) return p;
  return std::nullopt;
}

bool is_depthwise_conv(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::conv || op.inputs.empty()) return false;
  const TensorDesc& x = graph.desc(op.inputs[0]);
  const TensorDesc& y = graph.desc(op.output);
  const int rank = x.spatial_rank();
  if (rank != 2 && rank != 3) return false;
  const int64_t channels = x.channels();
  return channels > 0 && op.conv.groups == channels && y.channels() % channels == 0 && float_storage(x.dtype);
}

bool runs_own_depthwise(const Graph& graph, const Op& op, DepthwiseConvPath path) {
  if (path == DepthwiseConvPath::cudnn || !is_depthwise_conv(graph, op)) return false;
  if (path == DepthwiseConvPath::own) return true;
  return graph.desc(op.inputs[0]).layout == Layout::channels_first;
}

kernels::DepthwiseShape depthwise_shape(const Graph& graph, const Op& op) {
  const TensorDesc& x = graph.desc(op.inputs.at(0));
  const TensorDesc& y = graph.desc(op.output);
  element_count(x);  // both throw beyond the kernels' int indices
  element_count(y);
  kernels::DepthwiseShape s;
  s.n = static_cast<int>(x.batch());
  s.c = static_cast<int>(x.channels());
  s.multiplier = static_cast<int>(y.channels() / x.channels());
  s.in = spatial3(x);
  s.out = spatial3(y);
  s.kernel = per_dim3(op.conv.kernel, 1);
  s.stride = per_dim3(op.conv.stride, 1);
  s.padding = per_dim3(op.conv.padding, 0);
  s.dilation = per_dim3(op.conv.dilation, 1);
  s.channels_last = x.layout == Layout::channels_last;
  return s;
}

int64_t own_depthwise_workspace_bytes(const Graph& graph, const Op& op, Phase phase) {
  const bool weight_grad = phase == Phase::backward && !op.conv.frozen;
  return kernels::depthwise_workspace_bytes(depthwise_shape(graph, op), weight_grad);
}

void own_depthwise_forward(const ForwardCall& call, cudaStream_t stream) {
  const Fwd f(call);
  const std::vector<const Tensor*> weights = conv_weights(call);
  const Tensor& w = need(at(weights, 0), f.op, "weight");
  const void* bias = f.op.conv.bias ? need(at(weights, 1), f.op, "bias").raw() : nullptr;
  kernels::depthwise_conv_forward(f.dtype, depthwise_shape(call.graph, f.op), f.input(0).raw(), w.raw(), bias,
                                  f.y.raw(), stream);
}

void own_depthwise_backward(const BackwardCall& call, cudaStream_t stream) {
  const Bwd b(call);
  const kernels::DepthwiseShape s = depthwise_shape(call.graph, b.op);
  const std::vector<const Tensor*> weights = conv_weights(call);
  const Tensor& w = need(at(weights, 0), b.op, "weight");
  if (b.grad_x) kernels::depthwise_conv_grad_input(b.dtype, s, w.raw(), b.g.raw(), b.grad_x->raw(), stream);
  if (Tensor* grad_w = at(call.grad_params, 0)) {
    if (call.workspace == nullptr) throw std::invalid_argument("cuda backend: " + b.op.name + ": no workspace");
    kernels::depthwise_conv_grad_weight(b.dtype, s, b.saved_input().raw(), b.g.raw(), grad_w->raw(), call.workspace,
                                        stream);
  }
  if (b.op.conv.bias)
    if (Tensor* grad_b = at(call.grad_params, 1))
      kernels::channel_sum(b.dtype, act_shape(b.g.desc), b.g.raw(), grad_b->raw(), call.workspace, stream);
}

nlohmann::json own_depthwise_details(const Graph& graph, const Op& op, DepthwiseConvPath path) {
  const kernels::DepthwiseShape s = depthwise_shape(graph, op);
  const kernels::DepthwiseWeightGradPlan plan = kernels::depthwise_weight_grad_plan(s);
  nlohmann::json d = {{"api", "convbench-depthwise"},
                      {"kernels", "kernels/depthwise_conv.cu"},
                      {"path", std::string(to_string(path))},
                      {"unrolled_taps", plan.taps_per_group > 1},
                      {"weight_layout_conversion", false}};
  if (!op.conv.frozen) d["weight_grad_chunks"] = plan.splits;
  return d;
}

}  // namespace convbench::cuda
