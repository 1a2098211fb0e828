// The CUDA backend's linear op: activations with spatial size 1 are the (N, in) and (N, out)
// matrices in either layout. Its products run in cuBLAS (cublas_linear.hpp, linear_gemm.hpp) when
// the backend has a handle, else in convbench's kernels (kernels/linear.cu); the bias is added,
// and its gradient summed, by convbench's kernels either way.
#include "backends/cuda/cublas_linear.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {
namespace {

kernels::LinearShape linear_shape(const TensorDesc& in, const Op& op) {
  element_count(in);  // throws beyond the kernels' int indices
  return {static_cast<int>(in.batch()), static_cast<int>(in.channels()), static_cast<int>(op.linear.out_features)};
}

}  // namespace

void register_linear_kernels(KernelTable& table, cudaStream_t stream, CublasLinear* cublas) {
  table.add(OpKind::linear,
            {[stream, cublas](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               const Tensor& w = need(at(call.params, 0), f.op, "weight");
               const void* bias = f.op.linear.bias ? need(at(call.params, 1), f.op, "bias").raw() : nullptr;
               const kernels::LinearShape s = linear_shape(x.desc, f.op);
               if (!cublas) return kernels::linear_forward(f.dtype, s, x.raw(), w.raw(), bias, f.y.raw(), stream);
               cublas->gemm(f.dtype, linear_gemm_args(s.n, s.in, s.out, LinearProduct::forward), w.raw(), x.raw(),
                            f.y.raw());
               if (bias)
                 kernels::add_channel_bias(f.dtype, kernels::ActShape{s.n, s.out, 1, false}, f.y.raw(), bias, stream);
             },
             [stream, cublas](const BackwardCall& call) {
               const Bwd b(call);
               Tensor* grad_w = at(call.grad_params, 0);
               Tensor* grad_bias = b.op.linear.bias ? at(call.grad_params, 1) : nullptr;
               const Tensor* x = at(call.inputs, 0);
               if (grad_w && !x) throw std::invalid_argument("cuda backend: " + b.op.name + ": missing saved input");
               const kernels::LinearShape s = linear_shape(call.graph.desc(b.op.inputs.at(0)), b.op);
               const Tensor& w = need(at(call.params, 0), b.op, "weight");
               if (!cublas)
                 return kernels::linear_backward(b.dtype, s, x ? x->raw() : nullptr, w.raw(), b.g.raw(), raw(b.grad_x),
                                                 raw(grad_w), raw(grad_bias), stream);
               if (b.grad_x)
                 cublas->gemm(b.dtype, linear_gemm_args(s.n, s.in, s.out, LinearProduct::grad_input), w.raw(),
                              b.g.raw(), b.grad_x->raw());
               if (grad_w)
                 cublas->gemm(b.dtype, linear_gemm_args(s.n, s.in, s.out, LinearProduct::grad_weight), x->raw(),
                              b.g.raw(), grad_w->raw());
               if (grad_bias)
                 kernels::linear_backward(b.dtype, s, nullptr, w.raw(), b.g.raw(), nullptr, nullptr, grad_bias->raw(),
                                          stream);
             }});
}

}  // namespace convbench::cuda
