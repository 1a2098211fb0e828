// The CUDA backend's linear op (kernels/linear.cu): activations with spatial size 1 are the
// (N, in) and (N, out) matrices in either layout.
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {
namespace {

kernels::LinearShape linear_shape(const TensorDesc& in, const Op& op) {
  element_count(in);  // throws beyond the kernels' int indices
  return {static_cast<int>(in.batch()), static_cast<int>(in.channels()), static_cast<int>(op.linear.out_features)};
}

}  // namespace

void register_linear_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::linear,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               const Tensor& w = need(at(call.params, 0), f.op, "weight");
               const void* bias = f.op.linear.bias ? need(at(call.params, 1), f.op, "bias").raw() : nullptr;
               kernels::linear_forward(f.dtype, linear_shape(x.desc, f.op), x.raw(), w.raw(), bias, f.y.raw(), stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               Tensor* grad_w = at(call.grad_params, 0);
               Tensor* grad_bias = b.op.linear.bias ? at(call.grad_params, 1) : nullptr;
               const Tensor* x = at(call.inputs, 0);
               if (grad_w && !x) throw std::invalid_argument("cuda backend: " + b.op.name + ": missing saved input");
               kernels::linear_backward(b.dtype, linear_shape(call.graph.desc(b.op.inputs.at(0)), b.op),
                                        x ? x->raw() : nullptr, need(at(call.params, 0), b.op, "weight").raw(),
                                        b.g.raw(), raw(b.grad_x), raw(grad_w), raw(grad_bias), stream);
             }});
}

}  // namespace convbench::cuda
