// The CUDA backend's upsampling, nearest and linear (kernels/upsample.cu).
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

void register_upsample_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::upsample, {[stream](const ForwardCall& call) {
                                 const Fwd f(call);
                                 const Tensor& x = f.input(0);
                                 const kernels::UpsampleShape s = upsample_shape(x.desc, f.y.desc, f.op);
                                 if (s.linear)
                                   kernels::upsample_linear_forward(f.dtype, s, x.raw(), f.y.raw(), stream);
                                 else
                                   kernels::upsample_forward(f.dtype, s, x.raw(), f.y.raw(), stream);
                               },
                               [stream](const BackwardCall& call) {
                                 const Bwd b(call);
                                 if (!b.grad_x) return;
                                 const kernels::UpsampleShape s = upsample_shape(b.grad_x->desc, b.g.desc, b.op);
                                 if (s.linear)  // workspace: kernel_workspace_bytes (cuda_backend.cpp)
                                   kernels::upsample_linear_backward(b.dtype, s, b.g.raw(), b.grad_x->raw(),
                                                                     call.workspace, stream);
                                 else
                                   kernels::upsample_backward(b.dtype, s, b.g.raw(), b.grad_x->raw(), stream);
                               }});
}

}  // namespace convbench::cuda
