// The cpu backend's convolutions and transposed convolutions: its own depthwise kernel where it
// beats oneDNN (depthwise_conv_cpu.cpp), oneDNN's primitives otherwise (onednn_conv.cpp).
// Under mixed precision oneDNN computes in bfloat16 itself; the own depthwise kernel is float32
// and runs on widened copies (widened_calls.hpp).
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"
#include "backends/cpu/widened_calls.hpp"

namespace convbench::cpu {

void conv_forward(CpuKernelContext context, const ForwardCall& call) {
  if (is_own_depthwise_conv(call.graph, call.op))
    run_widened(call, context.widening_scratch, depthwise_conv_forward);
  else
    context.onednn.conv_forward(call);
}

void conv_backward(CpuKernelContext context, const BackwardCall& call) {
  if (is_own_depthwise_conv(call.graph, call.op))
    run_widened(call, context.widening_scratch, depthwise_conv_backward);
  else
    context.onednn.conv_backward(call);
}

int64_t conv_workspace_bytes(OneDnnOps& onednn, const Graph& graph, const Op& op, Phase phase, bool training) {
  if (is_own_depthwise_conv(graph, op)) return 0;
  return onednn.workspace_bytes(graph, op, phase, training);
}

void register_conv_kernels(KernelTable& table, CpuKernelContext context) {
  auto forward = [context](const ForwardCall& call) { conv_forward(context, call); };
  auto backward = [context](const BackwardCall& call) { conv_backward(context, call); };
  table.add(OpKind::conv, {forward, backward});
  table.add(OpKind::conv_transpose, {forward, backward});
}

}  // namespace convbench::cpu
