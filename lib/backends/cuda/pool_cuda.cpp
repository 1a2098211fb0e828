// The CUDA backend's max, avg and global avg pooling (kernels/pool.cu).
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

void register_pool_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::max_pool,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               Tensor* indices = call.training ? at(call.aux, 0) : nullptr;
               kernels::max_pool_forward(f.dtype, pool_shape(x.desc, f.y.desc, f.op.pool), x.raw(), f.y.raw(),
                                         indices ? indices->data<int64_t>() : nullptr, stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               if (!b.grad_x) return;
               const Tensor* indices = at(call.aux, 0);
               const Tensor* x = at(call.inputs, 0);
               if (!indices && !x)
                 throw std::invalid_argument("cuda backend: " + b.op.name + ": missing saved indices and input");
               kernels::max_pool_backward(b.dtype, pool_shape(b.grad_x->desc, b.g.desc, b.op.pool), b.g.raw(),
                                          indices ? indices->data<int64_t>() : nullptr, x ? x->raw() : nullptr,
                                          b.grad_x->raw(), stream);
             }});

  table.add(OpKind::avg_pool, {[stream](const ForwardCall& call) {
                                 const Fwd f(call);
                                 const Tensor& x = f.input(0);
                                 kernels::avg_pool_forward(f.dtype, pool_shape(x.desc, f.y.desc, f.op.pool), x.raw(),
                                                           f.y.raw(), stream);
                               },
                               [stream](const BackwardCall& call) {
                                 const Bwd b(call);
                                 if (!b.grad_x) return;
                                 kernels::avg_pool_backward(b.dtype, pool_shape(b.grad_x->desc, b.g.desc, b.op.pool),
                                                            b.g.raw(), b.grad_x->raw(), stream);
                               }});

  table.add(OpKind::global_avg_pool, {[stream](const ForwardCall& call) {
                                        const Fwd f(call);
                                        const Tensor& x = f.input(0);
                                        kernels::global_avg_pool_forward(f.dtype, act_shape(x.desc), x.raw(), f.y.raw(),
                                                                         stream);
                                      },
                                      [stream](const BackwardCall& call) {
                                        const Bwd b(call);
                                        if (!b.grad_x) return;
                                        kernels::global_avg_pool_backward(b.dtype, act_shape(b.grad_x->desc), b.g.raw(),
                                                                          b.grad_x->raw(), stream);
                                      }});
}

}  // namespace convbench::cuda
