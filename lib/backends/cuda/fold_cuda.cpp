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
#include "graph/fold_program.hpp"
#include "ops/fold_eval.hpp"
#include "runtime/workspace_arena.hpp"

namespace convbench::cuda {
namespace {

constexpr int64_t kFloat = 4;

// The registers of a program in one float buffer, as the device kernels see them.
struct DeviceRegisters {
  const FoldProgram& p;
  FoldLayout layout;
  float* base;
  DeviceRegisters(const FoldProgram& program, float* data) : p(program), layout(program), base(data) {}
  kernels::FoldReg reg(int index) const {
    kernels::FoldReg r;
    const auto i = static_cast<size_t>(index);
    const FoldRegister& f = p.registers.at(i);
    r.k = base + layout.kernel[i];
    r.b = f.bias ? base + layout.bias[i] : nullptr;
    r.co = f.out_channels;
    r.ci = f.in_channels;
    r.t0 = f.taps[0];
    r.t1 = f.taps[1];
    r.t2 = f.taps[2];
    return r;
  }
  // Step s's source: a register, or the identity of the fold's input (no data).
  kernels::FoldReg source(const FoldStep& s) const {
    if (s.src >= 0) return reg(s.src);
    kernels::FoldReg r;
    r.co = r.ci = p.registers.at(static_cast<size_t>(s.dst)).in_channels;
    return r;
  }
};

kernels::FoldConvGeometry geometry(const FoldStep& s) {
  kernels::FoldConvGeometry g;
  g.k0 = s.kernel[0];
  g.k1 = s.kernel[1];
  g.k2 = s.kernel[2];
  g.s0 = s.tap_step[0];
  g.s1 = s.tap_step[1];
  g.s2 = s.tap_step[2];
  g.groups = s.groups;
  g.src_channels = s.channels;
  g.src_channel = s.src_channel;
  return g;
}

kernels::FoldCut cut_of(const FoldProgram& p) {
  kernels::FoldCut c;
  c.groups = p.groups;
  for (size_t d = 0; d < 3; ++d) {
    c.first[d] = p.first_tap[d];
    c.dilation[d] = p.dilation[d];
    c.kernel[d] = p.kernel[d];
  }
  return c;
}

std::vector<const void*> operands(const std::vector<const Tensor*>& params, const Op& op) {
  std::vector<const void*> v;
  for (const Tensor* t : params) v.push_back(need(t, op, "parameter").raw());
  return v;
}

void run_steps(DType dtype, const DeviceRegisters& r, const std::vector<const void*>& ops, cudaStream_t stream) {
  CONVBENCH_CUDA_CHECK(cudaMemsetAsync(r.base, 0, static_cast<size_t>(r.layout.elements) * sizeof(float), stream));
  for (const FoldStep& s : r.p.steps) {
    const kernels::FoldReg src = r.source(s);
    switch (s.kind) {
      case FoldStepKind::compose_conv:
        kernels::fold_compose_forward(dtype, geometry(s), r.reg(s.dst), src, ops.at(static_cast<size_t>(s.weight)),
                                      s.bias >= 0 ? ops.at(static_cast<size_t>(s.bias)) : nullptr, stream);
        break;
      case FoldStepKind::accumulate:
        kernels::fold_accumulate_forward(r.reg(s.dst), src, static_cast<float>(s.scale), s.src_channel, s.dst_channel,
                                         s.channels, s.shift.data(), stream);
        break;
      case FoldStepKind::batch_norm:
        throw std::logic_error("cuda backend: a fold: online program has no batch norm step");
    }
  }
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
  const DeviceRegisters regs(p, static_cast<float*>(arena.take(FoldLayout(p).elements * kFloat)));
  run_steps(dtype, regs, operands(call.params, call.op), stream_);
  kernels::fold_cut(dtype, regs.reg(p.result), cut_of(p), kernel.raw(), p.has_bias() ? bias.raw() : nullptr, false,
                    stream_);
  ForwardCall c{call.graph,  call.op, call.inputs,   {&kernel}, {},
                call.output, {},      call.training, call.seed, arena.rest()};
  if (p.has_bias()) c.params.push_back(&bias);
  conv_forward(c);
}

void CudaBackend::folded_conv_backward(const BackwardCall& call) {
  const FoldProgram& p = *call.op.fold;
  const DType dtype = call.graph.desc(call.op.inputs.at(0)).dtype;
  WorkspaceArena arena(call.workspace, folded_conv_workspace_bytes(call.graph, call.op, Phase::backward, true), true);
  Tensor grad_kernel = arena.tensor(fold_kernel_desc(p, dtype)), grad_bias;
  if (p.has_bias()) grad_bias = arena.tensor(fold_bias_desc(p, dtype));
  const int64_t elements = FoldLayout(p).elements;
  const DeviceRegisters regs(p, static_cast<float*>(arena.take(elements * kFloat)));
  const DeviceRegisters grads(p, static_cast<float*>(arena.take(elements * kFloat)));
  BackwardCall c{call.graph, call.op,          call.inputs,      nullptr,        {},
                 {},         call.grad_output, call.grad_inputs, {&grad_kernel}, arena.rest()};
  c.params.push_back(at(call.aux, 0));
  if (p.has_bias()) c.grad_params.push_back(&grad_bias);
  conv_backward(c);
  // The adjoint of the composition, from the registers recomputed from the parameters.
  const std::vector<const void*> ops = operands(call.params, call.op);
  run_steps(dtype, regs, ops, stream_);
  CONVBENCH_CUDA_CHECK(cudaMemsetAsync(grads.base, 0, static_cast<size_t>(elements) * sizeof(float), stream_));
  kernels::fold_cut(dtype, grads.reg(p.result), cut_of(p), grad_kernel.raw(), p.has_bias() ? grad_bias.raw() : nullptr,
                    true, stream_);
  for (auto it = p.steps.rbegin(); it != p.steps.rend(); ++it) {
    const FoldStep& s = *it;
    const kernels::FoldReg gsrc = grads.source(s);
    if (s.kind == FoldStepKind::accumulate) {
      kernels::fold_accumulate_backward(grads.reg(s.dst), gsrc, static_cast<float>(s.scale), s.src_channel,
                                        s.dst_channel, s.channels, s.shift.data(), stream_);
      continue;
    }
    void* dw = need(at(call.grad_params, static_cast<size_t>(s.weight)), call.op, "gradient").raw();
    void* db =
        s.bias >= 0 ? need(at(call.grad_params, static_cast<size_t>(s.bias)), call.op, "gradient").raw() : nullptr;
    kernels::fold_compose_backward(dtype, geometry(s), grads.reg(s.dst), regs.source(s), gsrc,
                                   ops.at(static_cast<size_t>(s.weight)), dw, db, stream_);
  }
}

}  // namespace convbench::cuda
