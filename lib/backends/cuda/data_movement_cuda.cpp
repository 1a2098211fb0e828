// The CUDA backend's concat, upsample and layout conversion (kernels/concat.cu, kernels/upsample.cu,
// kernels/layout.cu).
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

void register_data_movement_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::concat,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               int offset_channels = 0;
               for (size_t i = 0; i < call.inputs.size(); ++i) {
                 const Tensor& x = f.input(i);
                 kernels::concat_copy_in(f.dtype, act_shape(x.desc), static_cast<int>(f.y.desc.channels()),
                                         offset_channels, x.raw(), f.y.raw(), stream);
                 offset_channels += static_cast<int>(x.desc.channels());
               }
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               int offset_channels = 0;
               for (size_t i = 0; i < b.op.inputs.size(); ++i) {
                 const TensorDesc& in = call.graph.desc(b.op.inputs[i]);
                 if (Tensor* gi = at(call.grad_inputs, i))
                   kernels::concat_copy_out(b.dtype, act_shape(in), static_cast<int>(b.g.desc.channels()),
                                            offset_channels, b.g.raw(), gi->raw(), stream);
                 offset_channels += static_cast<int>(in.channels());
               }
             }});

  // convert_layout: the source's shape and layout say which way (kernels::convert_layout writes
  // the other layout); backward converts the gradient back the same way.
  table.add(OpKind::convert_layout, {[stream](const ForwardCall& call) {
                                       const Fwd f(call);
                                       const Tensor& x = f.input(0);
                                       kernels::convert_layout(f.dtype, act_shape(x.desc), x.raw(), f.y.raw(), stream);
                                     },
                                     [stream](const BackwardCall& call) {
                                       const Bwd b(call);
                                       if (!b.grad_x) return;
                                       kernels::convert_layout(b.dtype, act_shape(b.g.desc), b.g.raw(), b.grad_x->raw(),
                                                               stream);
                                     }});

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
