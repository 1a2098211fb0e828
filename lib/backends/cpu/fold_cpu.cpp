// folded_conv (fold: online) on the cpu: the kernel from the parameters by the fold program in
// float (ops/fold_eval.hpp, OpenMP over output channels), then the cpu's conv (oneDNN, or the own
// 3-D depthwise kernel); backward: the conv's backward into the kernel's gradient, then the
// program's adjoint into each parameter's gradient. The registers, the kernel's gradient and (in
// inference) the kernel itself live in the call's workspace, followed by the conv's workspace.
#include "backends/cpu/cpu_kernels.hpp"
#include "graph/fold_program.hpp"
#include "ops/fold_eval.hpp"
#include "runtime/workspace_arena.hpp"

namespace convbench::cpu {
namespace {

constexpr int64_t kFloat = 4;

std::vector<const float*> operands(const std::vector<const Tensor*>& params, const Op& op) {
  std::vector<const float*> v;
  for (const Tensor* t : params) v.push_back(need(t, op, "parameter").data<float>());
  return v;
}

}  // namespace

int64_t fold_workspace_bytes(OneDnnOps& onednn, const Graph& graph, const Op& op, Phase phase, bool training) {
  if (op.kind != OpKind::folded_conv) return 0;
  if (phase == Phase::backward && !training) return 0;
  const Op conv = folded_conv_as_conv(op);
  return fold_workspace(*op.fold, kFloat, kFloat, phase == Phase::backward, training).total() +
         conv_workspace_bytes(onednn, graph, conv, phase, training);
}

void register_fold_kernels(KernelTable& table, CpuKernelContext context) {
  OneDnnOps& onednn = context.onednn;
  auto forward = [context, &onednn](const ForwardCall& call) {
    const FoldProgram& p = *call.op.fold;
    const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
    const Op conv = folded_conv_as_conv(call.op);
    WorkspaceArena arena(call.workspace,
                         fold_workspace_bytes(onednn, call.graph, call.op, Phase::forward, call.training), false);
    // The kernel: the aux tensor in training (kept for backward), else in the workspace; the bias
    // (backward needs none of it) in the workspace.
    Tensor kernel = call.training ? need(at_or_null(call.aux, 0), call.op, "kernel (aux)")
                                  : arena.tensor(fold_kernel_desc(p, dtype)),
           bias;
    if (p.has_bias()) bias = arena.tensor(fold_bias_desc(p, dtype));
    auto* registers = static_cast<float*>(arena.take(FoldLayout(p).elements * kFloat));
    fold_forward(p, operands(call.params, call.op), registers, kernel.data<float>(),
                 p.has_bias() ? bias.data<float>() : nullptr);
    std::vector<const Tensor*> weights = {&kernel};
    if (p.has_bias()) weights.push_back(&bias);
    conv_forward(context, forward_call_as(call, conv, weights, arena.rest()));
  };
  auto backward = [context, &onednn](const BackwardCall& call) {
    const FoldProgram& p = *call.op.fold;
    const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
    const Op conv = folded_conv_as_conv(call.op);
    WorkspaceArena arena(call.workspace, fold_workspace_bytes(onednn, call.graph, call.op, Phase::backward, true),
                         false);
    Tensor grad_kernel = arena.tensor(fold_kernel_desc(p, dtype)), grad_bias;
    if (p.has_bias()) grad_bias = arena.tensor(fold_bias_desc(p, dtype));
    const int64_t elements = FoldLayout(p).elements;
    auto* registers = static_cast<float*>(arena.take(elements * kFloat));
    auto* register_grads = static_cast<float*>(arena.take(elements * kFloat));
    std::vector<Tensor*> grad_weights = {&grad_kernel};
    if (p.has_bias()) grad_weights.push_back(&grad_bias);
    conv_backward(context, backward_call_as(call, conv, {at_or_null(call.aux, 0)}, grad_weights, arena.rest()));
    // The adjoint of the composition, from the registers recomputed from the parameters.
    const std::vector<const float*> ops = operands(call.params, call.op);
    std::vector<float*> grads;
    for (size_t i = 0; i < ops.size(); ++i) grads.push_back(at_or_null(call.grad_params, i)->data<float>());
    fold_run_steps(p, ops, registers);
    fold_backward(p, ops, registers, register_grads, grad_kernel.data<float>(),
                  p.has_bias() ? grad_bias.data<float>() : nullptr, grads);
  };
  table.add(OpKind::folded_conv, {forward, backward});
}

}  // namespace convbench::cpu
