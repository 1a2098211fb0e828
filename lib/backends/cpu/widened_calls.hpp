// Internal to the cpu backend: how its float32 kernels take half-precision tensors. Under
// mixed precision (amp_bfloat16) most activations and their gradients are bfloat16, but apart
// from the oneDNN convolutions (which compute in bfloat16 themselves), the casts, batch norm and
// ReLU (templated on their storage), the backend's kernels are float32 loops. A call that hands such a kernel a
// bfloat16 or float16 tensor runs on float32 copies instead: every half-precision operand is widened into a scratch
// tensor, the kernel runs, and every half-precision result is rounded back (nearest even), which
// is what PyTorch's CPU kernels for bfloat16 do element by element in registers.
//
// The scratch comes from the backend's own allocator, not the step's: a step's memory is what
// the AMP step holds (the executor's allocator, which the memory model predicts byte for byte),
// and the float32 copies are this backend's way of computing, not part of the step. Their cost
// is in the op's time: a widened op moves its half-precision bytes three more times (widen,
// float32 kernel, round back), so its time is an upper bound of a native bfloat16 kernel's.
#pragma once

#include <initializer_list>

#include "runtime/allocator.hpp"
#include "runtime/backend.hpp"
#include "runtime/kernel_table.hpp"

namespace convbench::cpu {

// Runs `kernel` on the call, on float32 copies of its half-precision tensors when it has any.
void run_widened(const ForwardCall& call, Allocator& scratch, const std::function<void(const ForwardCall&)>& kernel);
void run_widened(const BackwardCall& call, Allocator& scratch, const std::function<void(const BackwardCall&)>& kernel);

// Wraps every registered kind's kernels in run_widened(), except the kinds in `native` (their
// kernels take half-precision tensors themselves).
void widen_half_precision_calls(KernelTable& table, Allocator& scratch, std::initializer_list<OpKind> native);

}  // namespace convbench::cpu
