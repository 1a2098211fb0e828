// What the CUDA backend's op kernels share (cuda_backend.cpp and the op family files
// *_cuda.cpp): tensor shapes in the int form the kernels and cuDNN's legacy API take, the
// tensors of a call, and the family registration functions.
#pragma once

#include <cuda_runtime_api.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "runtime/backend.hpp"

namespace convbench::cuda {

// cuDNN's legacy API describes tensors with int dims and strides, and the kernels index with
// int: no tensor may hold more elements than an int counts.
inline constexpr int64_t kMaxElements = std::numeric_limits<int>::max();

// Elements of a tensor as an int (throws beyond 2^31-1: the kernels and cuDNN index with int).
int element_count(const TensorDesc& d);
kernels::ActShape act_shape(const TensorDesc& d);
// Spatial sizes padded to three dims, 2-D tensors getting depth 1 (as the reference backend).
kernels::Dims3 spatial3(const TensorDesc& d);
// A per-dim attribute (kernel, stride, padding, dilation) padded the same way: `fill` for the
// missing depth, and for every dim when `values` is empty (the reference backend's per_dim).
kernels::Dims3 per_dim3(const std::vector<int64_t>& values, int fill);
// Whether the kernels store `d` (float32 and tf32 as float, float16, bfloat16).
bool float_storage(DType d);
kernels::PoolShape pool_shape(const TensorDesc& in, const TensorDesc& out, const PoolAttrs& a);
// `op`'s scale, mode and align_corners.
kernels::UpsampleShape upsample_shape(const TensorDesc& in, const TensorDesc& out, const Op& op);
float* float_data(Tensor* t);
const float* float_data(const Tensor* t);
void* raw(Tensor* t);

template <class T>
T& need(T* p, const Op& op, const char* what) {
  if (p == nullptr) throw std::invalid_argument("cuda backend: " + op.name + ": missing " + what);
  return *p;
}

template <class T>
T* at(const std::vector<T*>& list, size_t index) {
  return index < list.size() ? list[index] : nullptr;
}

// What every forward kernel starts from: the op, its output and dtype, its inputs.
struct Fwd {
  explicit Fwd(const ForwardCall& c) : call(c), op(c.op), y(need(c.output, c.op, "output")), dtype(y.desc.dtype) {}
  const Tensor& input(size_t i) const { return need(at(call.inputs, i), op, "input"); }
  const ForwardCall& call;
  const Op& op;
  Tensor& y;
  const DType dtype;
};

// What every backward kernel starts from: the op, the output's gradient and its dtype, the first
// input's gradient (nullptr when none is needed).
struct Bwd {
  explicit Bwd(const BackwardCall& c)
      : call(c),
        op(c.op),
        g(need(c.grad_output, c.op, "grad_output")),
        dtype(g.desc.dtype),
        grad_x(at(c.grad_inputs, 0)) {}
  const Tensor& saved_input() const { return need(at(call.inputs, 0), op, "saved input"); }
  const BackwardCall& call;
  const Op& op;
  const Tensor& g;
  const DType dtype;
  Tensor* grad_x;
};

// Each op family's kernels, forward and backward side by side, queued on `stream`.
// Family <f>'s function is register_<f>_kernels, in <f>_cuda.cpp.
void register_batch_norm_kernels(KernelTable& table, cudaStream_t stream);
// A batch_norm or batch_norm_act training forward whose saved statistics hold its input's
// per-channel sum and sum of squares, which the conv before it wrote (--conv-fusion conv_bn_stats).
void batch_norm_forward_from_sums(const ForwardCall& call, cudaStream_t stream);
void register_group_norm_kernels(KernelTable& table, cudaStream_t stream);
void register_layer_norm_kernels(KernelTable& table, cudaStream_t stream);
void register_elementwise_kernels(KernelTable& table, cudaStream_t stream);
void register_concat_kernels(KernelTable& table, cudaStream_t stream);
void register_upsample_kernels(KernelTable& table, cudaStream_t stream);
void register_layout_kernels(KernelTable& table, cudaStream_t stream);
void register_pool_kernels(KernelTable& table, cudaStream_t stream);
// The linear op's products in cuBLAS when `cublas` is given (the backend's --linear choice), else
// in convbench's kernels.
class CublasLinear;
void register_linear_kernels(KernelTable& table, cudaStream_t stream, CublasLinear* cublas);

}  // namespace convbench::cuda
