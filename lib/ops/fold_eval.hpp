// Runs a fold program (graph/fold_program.hpp) on the host: forward (the folded conv's weight
// and bias from the operands) and its adjoint (each operand's gradient from the weight's and
// bias's). The build-time fold and the reference backend run it in double, the cpu backend in
// float; kernels/fold.cu is the CUDA version of the same loops.
//
// The registers live in one flat buffer the caller provides (the executor's workspace on the cpu
// backend, so the memory they take is measured), laid out by FoldLayout.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/fold_program.hpp"
#include "graph/op.hpp"
#include "graph/tensor_desc.hpp"

namespace convbench {

// What every backend's folded_conv runs after composing its kernel: the folded conv as a plain
// conv op (the same inputs, output and geometry), and the descriptors of the composed weight
// (program.weight_shape()) and bias (out channels), channels-first in the row's dtype.
Op folded_conv_as_conv(const Op& op);
TensorDesc fold_kernel_desc(const FoldProgram& program, DType dtype);
TensorDesc fold_bias_desc(const FoldProgram& program, DType dtype);

// Offsets of each register's kernel and bias in the flat register buffer, in elements.
struct FoldLayout {
  std::vector<int64_t> kernel, bias;
  int64_t elements = 0;
  explicit FoldLayout(const FoldProgram& program);
};

// Whether step `s` may run on the adjoint path (batch_norm is fold-at-build-time only).
bool fold_has_adjoint(const FoldProgram& program);

// Runs every step into `registers` (FoldLayout(program).elements values; zeroed here).
// `operands[i]` holds operand i's values.
template <class T>
void fold_run_steps(const FoldProgram& program, const std::vector<const T*>& operands, T* registers);

// Cuts the folded conv's weight (program.weight_shape()) and bias (out channels; only when the
// program has a bias) out of the result register.
template <class T>
void fold_emit(const FoldProgram& program, const T* registers, T* weight, T* bias);

// Both: the folded weight and bias from the operands.
template <class T>
void fold_forward(const FoldProgram& program, const std::vector<const T*>& operands, T* registers, T* weight, T* bias);

// The adjoint: from the gradient of the folded weight (and bias), every operand's gradient
// (`operand_grads[i]`, written). `registers` must hold the forward's registers (fold_run_steps);
// `register_grads` is a second buffer of the same size, used as scratch.
template <class T>
void fold_backward(const FoldProgram& program, const std::vector<const T*>& operands, const T* registers,
                   T* register_grads, const T* weight_grad, const T* bias_grad, const std::vector<T*>& operand_grads);

}  // namespace convbench

namespace convbench {

// What one folded_conv call keeps in its workspace, in bytes, each piece aligned to 256 bytes as
// the workspace arena (runtime/workspace_arena.hpp) places it:
//   forward:  the folded weight in inference (training keeps it as an aux tensor for backward),
//             the folded bias, and the registers;
//   backward: the weight's and bias's gradients, the registers and their gradients.
// `register_bytes` is what one register element takes on the backend (0 where the registers are
// not in the workspace: the reference backend holds them as host doubles, as all its values).
struct FoldWorkspace {
  int64_t kernel = 0, registers = 0;
  int64_t total() const { return kernel + registers; }
};
FoldWorkspace fold_workspace(const FoldProgram& program, int64_t kernel_element_bytes, int64_t register_bytes,
                             bool backward, bool training);

}  // namespace convbench
