// A fold program (graph/fold_program.hpp) on the device: its steps as kernels/fold.cu's kernels
// in float registers, the cut into the folded conv's weight and bias, and the adjoint into each
// operand's gradient: the device side of folded_conv (fold_cuda.cpp runs cuDNN's conv around it).
// Apart from the backend, so that the CPU emulator runs it too (tests/sim), against the host's
// fold_forward and fold_backward (ops/fold_eval.hpp) in double.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "graph/dtype.hpp"
#include "graph/fold_program.hpp"

namespace convbench::cuda {

// The folded weight (program.weight_shape(), in `dtype`) and bias (out channels, when the
// program has one; else ignored) from the operands (each in `dtype`). `registers` holds
// FoldLayout(program).elements floats, overwritten.
void fold_program_forward(const FoldProgram& program, DType dtype, const std::vector<const void*>& operands,
                          float* registers, void* weight, void* bias, cudaStream_t stream);

// The adjoint: each operand's gradient (`operand_grads`, written; an accumulate step's
// operand-free identity has none) from the weight's and bias's gradients. `registers` and
// `register_grads` each hold FoldLayout(program).elements floats; the registers are recomputed
// from the operands here.
void fold_program_backward(const FoldProgram& program, DType dtype, const std::vector<const void*>& operands,
                           float* registers, float* register_grads, void* weight_grad, void* bias_grad,
                           const std::vector<void*>& operand_grads, cudaStream_t stream);

}  // namespace convbench::cuda
