// The device side of folded_conv (fold_program_cuda.hpp): the program's steps as kernels/fold.cu's
// kernels, one after another on the stream.
#include "backends/cuda/fold_program_cuda.hpp"

#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_check.hpp"
#include "kernels/kernels.hpp"
#include "ops/fold_eval.hpp"

namespace convbench::cuda {
namespace {

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

void fold_program_forward(const FoldProgram& program, DType dtype, const std::vector<const void*>& operands,
                          float* registers, void* weight, void* bias, cudaStream_t stream) {
  const DeviceRegisters regs(program, registers);
  run_steps(dtype, regs, operands, stream);
  kernels::fold_cut(dtype, regs.reg(program.result), cut_of(program), weight, program.has_bias() ? bias : nullptr,
                    false, stream);
}

void fold_program_backward(const FoldProgram& program, DType dtype, const std::vector<const void*>& operands,
                           float* registers, float* register_grads, void* weight_grad, void* bias_grad,
                           const std::vector<void*>& operand_grads, cudaStream_t stream) {
  const DeviceRegisters regs(program, registers);
  const DeviceRegisters grads(program, register_grads);
  run_steps(dtype, regs, operands, stream);
  CONVBENCH_CUDA_CHECK(
      cudaMemsetAsync(grads.base, 0, static_cast<size_t>(grads.layout.elements) * sizeof(float), stream));
  kernels::fold_cut(dtype, grads.reg(program.result), cut_of(program), weight_grad,
                    program.has_bias() ? bias_grad : nullptr, true, stream);
  for (auto it = program.steps.rbegin(); it != program.steps.rend(); ++it) {
    const FoldStep& s = *it;
    const kernels::FoldReg gsrc = grads.source(s);
    if (s.kind == FoldStepKind::accumulate) {
      kernels::fold_accumulate_backward(grads.reg(s.dst), gsrc, static_cast<float>(s.scale), s.src_channel,
                                        s.dst_channel, s.channels, s.shift.data(), stream);
      continue;
    }
    const auto gradient = [&](int operand) {
      void* g = operand_grads.at(static_cast<size_t>(operand));
      if (!g)
        throw std::invalid_argument("cuda backend: folded_conv: no gradient for operand " +
                                    program.operands.at(static_cast<size_t>(operand)).name);
      return g;
    };
    void* dw = gradient(s.weight);
    void* db = s.bias >= 0 ? gradient(s.bias) : nullptr;
    kernels::fold_compose_backward(dtype, geometry(s), grads.reg(s.dst), regs.source(s), gsrc,
                                   operands.at(static_cast<size_t>(s.weight)), dw, db, stream);
  }
}

}  // namespace convbench::cuda
