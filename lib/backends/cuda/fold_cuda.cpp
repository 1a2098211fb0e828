// folded_conv (fold: online) on the GPU: the fold program's steps as kernels (kernels/fold.cu),
// in float (from weights in any of the GPU's dtypes), into registers in the call's workspace; the cut gives the kernel
// (the aux tensor in training, the workspace in inference), which cuDNN convolves with. Backward: cuDNN's backward into
// the kernel's gradient (workspace), the registers recomputed, and the program's adjoint into each parameter's
// gradient. Layout of the workspace: the kernel (or its gradient), the registers (and their gradients), then the conv's
// own workspace.
#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"
#include "backends/cuda/fold_program_cuda.hpp"
#include "graph/fold_program.hpp"
#include "ops/fold_eval.hpp"
#include "runtime/workspace_arena.hpp"

namespace convbench::cuda {
namespace {

constexpr int64_t kFloat = 4;

std::vector<const void*> operands(const std::vector<const Tensor*>& params, const Op& op) {
  std::vector<const void*> v;
  for (const Tensor* t : params) v.push_back(need(t, op, "parameter").raw());
  return v;
}

}  // namespace

int64_t CudaBackend::folded_conv_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  if (phase == Phase::backward && !training) return 0;
  // The kernel in the block's dtype; the registers in float.
  const int64_t kernel_bytes = element_bytes(graph.desc(op.inputs.at(0)).dtype);
  return fold_workspace(*op.fold, kernel_bytes, kFloat, phase == Phase::backward, training).total() +
         conv_workspace_bytes(graph, op, phase, training);
}

void CudaBackend::folded_conv_forward(const ForwardCall& call) {
  const FoldProgram& p = *call.op.fold;
  const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
  WorkspaceArena arena(call.workspace, folded_conv_workspace_bytes(call.graph, call.op, Phase::forward, call.training),
                       true);
  // The kernel: the aux tensor in training (kept for backward), else in the workspace; the bias
  // (backward needs none of it) in the workspace.
  Tensor kernel =
             call.training ? need(at(call.aux, 0), call.op, "kernel (aux)") : arena.tensor(fold_kernel_desc(p, dtype)),
         bias;
  if (p.has_bias()) bias = arena.tensor(fold_bias_desc(p, dtype));
  auto* registers = static_cast<float*>(arena.take(FoldLayout(p).elements * kFloat));
  fold_program_forward(p, dtype, operands(call.params, call.op), registers, kernel.raw(),
                       p.has_bias() ? bias.raw() : nullptr, stream_);
  std::vector<const Tensor*> weights = {&kernel};
  if (p.has_bias()) weights.push_back(&bias);
  conv_forward(forward_call_as(call, call.op, weights, arena.rest()));
}

void CudaBackend::folded_conv_backward(const BackwardCall& call) {
  const FoldProgram& p = *call.op.fold;
  const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
  WorkspaceArena arena(call.workspace, folded_conv_workspace_bytes(call.graph, call.op, Phase::backward, true), true);
  Tensor grad_kernel = arena.tensor(fold_kernel_desc(p, dtype)), grad_bias;
  if (p.has_bias()) grad_bias = arena.tensor(fold_bias_desc(p, dtype));
  const int64_t elements = FoldLayout(p).elements;
  auto* registers = static_cast<float*>(arena.take(elements * kFloat));
  auto* register_grads = static_cast<float*>(arena.take(elements * kFloat));
  std::vector<Tensor*> grad_weights = {&grad_kernel};
  if (p.has_bias()) grad_weights.push_back(&grad_bias);
  conv_backward(backward_call_as(call, call.op, {at(call.aux, 0)}, grad_weights, arena.rest()));
  // The adjoint of the composition, from the registers recomputed from the parameters.
  std::vector<void*> operand_grads;
  for (Tensor* g : call.grad_params) operand_grads.push_back(g ? g->raw() : nullptr);
  fold_program_backward(p, dtype, operands(call.params, call.op), registers, register_grads, grad_kernel.raw(),
                        p.has_bias() ? grad_bias.raw() : nullptr, operand_grads, stream_);
}

}  // namespace convbench::cuda
