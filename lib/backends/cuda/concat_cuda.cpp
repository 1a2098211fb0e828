// The CUDA backend's concat and slice (kernels/concat.cu).
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

void register_concat_kernels(KernelTable& table, cudaStream_t stream) {
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

  // slice: the part (N, length, S) copied out of the input at channel `start`, as concat's backward
  // does; its backward zeroes the input's gradient and copies the part back in.
  table.add(
      OpKind::slice,
      {[stream](const ForwardCall& call) {
         const Fwd f(call);
         const Tensor& x = f.input(0);
         kernels::concat_copy_out(f.dtype, act_shape(f.y.desc), static_cast<int>(x.desc.channels()),
                                  static_cast<int>(f.op.slice.start), x.raw(), f.y.raw(), stream);
       },
       [stream](const BackwardCall& call) {
         const Bwd b(call);
         if (!b.grad_x) return;
         CONVBENCH_CUDA_CHECK(cudaMemsetAsync(b.grad_x->raw(), 0, static_cast<size_t>(b.grad_x->desc.bytes()), stream));
         kernels::concat_copy_in(b.dtype, act_shape(b.g.desc), static_cast<int>(b.grad_x->desc.channels()),
                                 static_cast<int>(b.op.slice.start), b.g.raw(), b.grad_x->raw(), stream);
       }});
}

}  // namespace convbench::cuda
