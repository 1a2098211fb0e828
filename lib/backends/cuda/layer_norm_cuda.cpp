// The CUDA backend's layer norm over channels (kernels/layer_norm.cu).
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

void register_layer_norm_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::layer_norm, {[stream](const ForwardCall& call) {
                                   const Fwd f(call);
                                   const Tensor& x = f.input(0);
                                   kernels::layer_norm_forward(f.dtype,
                                                               {.shape = act_shape(x.desc),
                                                                .x = x.raw(),
                                                                .gamma = need(at(call.params, 0), f.op, "weight").raw(),
                                                                .beta = need(at(call.params, 1), f.op, "bias").raw(),
                                                                .y = f.y.raw(),
                                                                .save_mean = float_data(at(call.aux, 0)),
                                                                .save_rstd = float_data(at(call.aux, 1)),
                                                                .eps = f.op.norm.eps},
                                                               call.workspace, stream);
                                 },
                                 [stream](const BackwardCall& call) {
                                   const Bwd b(call);
                                   const Tensor& x = b.saved_input();
                                   kernels::layer_norm_backward(
                                       b.dtype,
                                       {.shape = act_shape(x.desc),
                                        .x = x.raw(),
                                        .g = b.g.raw(),
                                        .save_mean = float_data(at(call.aux, 0)),
                                        .save_rstd = float_data(at(call.aux, 1)),
                                        .gamma = need(at(call.params, 0), b.op, "weight").raw(),
                                        .grad_x = raw(b.grad_x),
                                        .grad_gamma = raw(at(call.grad_params, 0)),
                                        .grad_beta = raw(at(call.grad_params, 1))},
                                       call.workspace, stream);
                                 }});
}

}  // namespace convbench::cuda
