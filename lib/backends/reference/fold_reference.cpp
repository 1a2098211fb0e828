// folded_conv (fold: online): the kernel from the parameters by the fold program, in double, then
// the reference conv; backward: the reference conv's backward into the kernel's gradient, then
// the program's adjoint into each parameter's gradient. The kernel lives in the aux tensors in
// training and in the workspace in inference; its gradient in the workspace.
#include "backends/reference/reference_kernels.hpp"
#include "graph/fold_program.hpp"
#include "ops/fold_eval.hpp"
#include "runtime/workspace_arena.hpp"

namespace convbench::reference {
namespace {

std::vector<std::vector<double>> operand_values(const std::vector<const Tensor*>& params) {
  std::vector<std::vector<double>> v;
  for (const Tensor* t : params) v.push_back(load(required(t, "folded_conv", "parameter")));
  return v;
}

std::vector<const double*> pointers(const std::vector<std::vector<double>>& v) {
  std::vector<const double*> p;
  for (const auto& x : v) p.push_back(x.data());
  return p;
}

void folded_conv_forward(const ForwardCall& call) {
  const FoldProgram& p = *call.op.fold;
  const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
  const std::vector<std::vector<double>> operands = operand_values(call.params);
  std::vector<double> registers(static_cast<size_t>(FoldLayout(p).elements));
  std::vector<double> w(static_cast<size_t>(fold_kernel_desc(p, dtype).numel())),
      b(static_cast<size_t>(p.out().out_channels));
  fold_forward(p, pointers(operands), registers.data(), w.data(), b.data());
  WorkspaceArena arena(call.workspace, fold_workspace(p, element_bytes(dtype), 0, false, call.training).total(), false);
  // The kernel: the aux tensor in training (kept for backward), else in the workspace; the bias
  // (backward needs none of it) in the workspace.
  Tensor kernel = call.training ? required(optional_at(call.aux, 0), "folded_conv", "kernel (aux)")
                                : arena.tensor(fold_kernel_desc(p, dtype)),
         bias;
  if (p.has_bias()) bias = arena.tensor(fold_bias_desc(p, dtype));
  store(kernel, w);
  if (p.has_bias()) store(bias, b);
  const Op conv = folded_conv_as_conv(call.op);
  std::vector<const Tensor*> weights = {&kernel};
  if (p.has_bias()) weights.push_back(&bias);
  conv_forward(forward_call_as(call, conv, weights, nullptr));
}

void folded_conv_backward(const BackwardCall& call) {
  const FoldProgram& p = *call.op.fold;
  const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
  WorkspaceArena arena(call.workspace, fold_workspace(p, element_bytes(dtype), 0, true, true).total(), false);
  Tensor grad_kernel = arena.tensor(fold_kernel_desc(p, dtype)), grad_bias;
  if (p.has_bias()) grad_bias = arena.tensor(fold_bias_desc(p, dtype));
  const Op conv = folded_conv_as_conv(call.op);
  std::vector<Tensor*> grad_weights = {&grad_kernel};
  if (p.has_bias()) grad_weights.push_back(&grad_bias);
  conv_backward(backward_call_as(call, conv, {&required(optional_at(call.aux, 0), "folded_conv", "kernel (aux)")},
                                 grad_weights, nullptr));
  // The adjoint of the composition, from the registers recomputed from the parameters.
  const std::vector<std::vector<double>> operands = operand_values(call.params);
  const FoldLayout layout(p);
  std::vector<double> registers(static_cast<size_t>(layout.elements)), register_grads(registers.size());
  fold_run_steps(p, pointers(operands), registers.data());
  const std::vector<double> gw = load(grad_kernel);
  const std::vector<double> gb = p.has_bias() ? load(grad_bias) : std::vector<double>{};
  std::vector<std::vector<double>> grads;
  std::vector<double*> grad_ptrs;
  for (const auto& o : operands) grads.emplace_back(o.size());
  for (auto& g : grads) grad_ptrs.push_back(g.data());
  fold_backward(p, pointers(operands), registers.data(), register_grads.data(), gw.data(),
                p.has_bias() ? gb.data() : nullptr, grad_ptrs);
  for (size_t i = 0; i < grads.size(); ++i)
    store(required(optional_at(call.grad_params, i), "folded_conv", "parameter gradient"), grads[i]);
}

}  // namespace

void register_fold_kernels(KernelTable& table) {
  table.add(OpKind::folded_conv, {folded_conv_forward, folded_conv_backward});
}

int64_t fold_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  if (op.kind != OpKind::folded_conv) return 0;
  if (phase == Phase::backward && !training) return 0;
  return fold_workspace(*op.fold, element_bytes(graph.desc(op.inputs.at(0)).dtype), 0, phase == Phase::backward,
                        training)
      .total();
}

}  // namespace convbench::reference
