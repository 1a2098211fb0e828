// The cpu backend's convolutions and transposed convolutions: its own depthwise kernel where it
// beats oneDNN (depthwise_conv_cpu.cpp), oneDNN's primitives otherwise (onednn_conv.cpp).
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"

namespace convbench::cpu {

void conv_forward(OneDnnOps& onednn, const ForwardCall& call) {
  if (is_own_depthwise_conv(call.graph, call.op))
    depthwise_conv_forward(call);
  else
    onednn.conv_forward(call);
}

void conv_backward(OneDnnOps& onednn, const BackwardCall& call) {
  if (is_own_depthwise_conv(call.graph, call.op))
    depthwise_conv_backward(call);
  else
    onednn.conv_backward(call);
}

int64_t conv_workspace_bytes(OneDnnOps& onednn, const Graph& graph, const Op& op, Phase phase, bool training) {
  if (is_own_depthwise_conv(graph, op)) return 0;
  return onednn.workspace_bytes(graph, op, phase, training);
}

void register_conv_kernels(KernelTable& table, CpuKernelContext context) {
  OneDnnOps& onednn = context.onednn;
  auto forward = [&onednn](const ForwardCall& call) { conv_forward(onednn, call); };
  auto backward = [&onednn](const BackwardCall& call) { conv_backward(onednn, call); };
  table.add(OpKind::conv, {forward, backward});
  table.add(OpKind::conv_transpose, {forward, backward});
}

}  // namespace convbench::cpu
