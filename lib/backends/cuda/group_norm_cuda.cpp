// The CUDA backend's group norm (kernels/group_norm.cu).
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

void register_group_norm_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::group_norm, {[stream](const ForwardCall& call) {
                                   const Fwd f(call);
                                   const Tensor& x = f.input(0);
                                   kernels::GroupNormForward a{act_shape(x.desc),
                                                               static_cast<int>(f.op.norm.groups),
                                                               x.raw(),
                                                               need(at(call.params, 0), f.op, "weight").raw(),
                                                               need(at(call.params, 1), f.op, "bias").raw(),
                                                               f.y.raw(),
                                                               float_data(at(call.aux, 0)),
                                                               float_data(at(call.aux, 1)),
                                                               f.op.norm.eps};
                                   kernels::group_norm_forward(f.dtype, a, call.workspace, stream);
                                 },
                                 [stream](const BackwardCall& call) {
                                   const Bwd b(call);
                                   const Tensor& x = b.saved_input();
                                   kernels::GroupNormBackward a{act_shape(x.desc),
                                                                static_cast<int>(b.op.norm.groups),
                                                                x.raw(),
                                                                b.g.raw(),
                                                                float_data(at(call.aux, 0)),
                                                                float_data(at(call.aux, 1)),
                                                                need(at(call.params, 0), b.op, "weight").raw(),
                                                                raw(b.grad_x),
                                                                raw(at(call.grad_params, 0)),
                                                                raw(at(call.grad_params, 1)),
                                                                b.op.norm.eps};
                                   kernels::group_norm_backward(b.dtype, a, call.workspace, stream);
                                 }});
}

}  // namespace convbench::cuda
