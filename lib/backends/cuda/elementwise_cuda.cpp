// The CUDA backend's activations (every kind kernels/elementwise.cu lists), dropout, channel dropout,
// add, sub and mul (kernels/elementwise.cu), and layer_scale (kernels/channel_reduce.cu).
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"
#include "ops/op_registry.hpp"

namespace convbench::cuda {

void register_elementwise_kernels(KernelTable& table, cudaStream_t stream) {
  // Every activation elementwise.cu has kernels for; backward reads what the op's definition
  // saves (its output or its input; an in-place leaky_relu saves its output, which is positive
  // where its input was, so the same backward functor reads it). The forward may run in place.
  for (const OpKind kind : kernels::activation_kinds()) {
    table.add(kind, {[stream](const ForwardCall& call) {
                       const Fwd f(call);
                       kernels::activation_forward(f.op, f.dtype, f.input(0).raw(), f.y.raw(), element_count(f.y.desc),
                                                   stream);
                     },
                     [stream](const BackwardCall& call) {
                       const Bwd b(call);
                       if (!b.grad_x) return;
                       const Tensor& saved = call.output ? *call.output : b.saved_input();
                       kernels::activation_backward(b.op, b.dtype, saved.raw(), b.g.raw(), b.grad_x->raw(),
                                                    element_count(b.g.desc), stream);
                     }});
  }

  // The dropouts in inference: the identity (the executor normally aliases instead).
  auto identity = [stream](const Tensor& x, Tensor& y) {
    CONVBENCH_CUDA_CHECK(
        cudaMemcpyAsync(y.raw(), x.raw(), static_cast<size_t>(y.desc.bytes()), cudaMemcpyDeviceToDevice, stream));
  };
  table.add(OpKind::dropout,
            {[stream, identity](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               if (!call.training) return identity(x, f.y);
               Tensor* mask = at(call.aux, 0);
               kernels::dropout_forward(f.dtype, act_shape(x.desc), x.raw(), f.y.raw(),
                                        mask ? mask->data<uint8_t>() : nullptr, static_cast<float>(f.op.dropout_p),
                                        static_cast<float>(1.0 / (1.0 - f.op.dropout_p)), call.seed, stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               if (!b.grad_x) return;
               kernels::dropout_backward(b.dtype, b.g.raw(), need(at(call.aux, 0), b.op, "saved mask").data<uint8_t>(),
                                         b.grad_x->raw(), static_cast<float>(1.0 / (1.0 - b.op.dropout_p)),
                                         element_count(b.g.desc), stream);
             }});

  for (OpKind kind : {OpKind::channel_dropout, OpKind::drop_path}) {
    const kernels::NoiseUnit unit =
        kind == OpKind::drop_path ? kernels::NoiseUnit::sample : kernels::NoiseUnit::channel;
    table.add(kind, {[stream, unit, identity](const ForwardCall& call) {
                       const Fwd f(call);
                       const Tensor& x = f.input(0);
                       if (!call.training) return identity(x, f.y);
                       kernels::unit_dropout_forward(f.dtype, act_shape(x.desc), x.raw(), f.y.raw(),
                                                     raw(at(call.aux, 0)), static_cast<float>(f.op.dropout_p),
                                                     static_cast<float>(1.0 / (1.0 - f.op.dropout_p)), call.seed, unit,
                                                     stream);
                     },
                     [stream, unit](const BackwardCall& call) {
                       const Bwd b(call);
                       if (!b.grad_x) return;
                       kernels::unit_dropout_backward(b.dtype, act_shape(b.g.desc), b.g.raw(),
                                                      need(at(call.aux, 0), b.op, "saved noise").raw(), b.grad_x->raw(),
                                                      unit, stream);
                     }});
  }

  // add and sub: the executor aliases add's gradients and sub's first; any tensor it does pass is
  // written.
  auto copy_grad = [stream](const Tensor& g, Tensor& to) {
    CONVBENCH_CUDA_CHECK(
        cudaMemcpyAsync(to.raw(), g.raw(), static_cast<size_t>(g.desc.bytes()), cudaMemcpyDeviceToDevice, stream));
  };
  table.add(OpKind::add, {[stream](const ForwardCall& call) {
                            const Fwd f(call);
                            kernels::add(f.dtype, f.input(0).raw(), f.input(1).raw(), f.y.raw(),
                                         element_count(f.y.desc), stream);
                          },
                          [copy_grad](const BackwardCall& call) {
                            const Bwd b(call);
                            if (b.grad_x) copy_grad(b.g, *b.grad_x);
                            if (Tensor* grad_b = at(call.grad_inputs, 1)) copy_grad(b.g, *grad_b);
                          }});
  table.add(OpKind::sub, {[stream](const ForwardCall& call) {
                            const Fwd f(call);
                            kernels::sub(f.dtype, f.input(0).raw(), f.input(1).raw(), f.y.raw(),
                                         element_count(f.y.desc), stream);
                          },
                          [copy_grad, stream](const BackwardCall& call) {
                            const Bwd b(call);
                            if (b.grad_x) copy_grad(b.g, *b.grad_x);
                            if (Tensor* grad_b = at(call.grad_inputs, 1))
                              kernels::negate(b.dtype, b.g.raw(), grad_b->raw(), element_count(b.g.desc), stream);
                          }});

  // mul: b is a's shape or broadcast over a's space; each gradient reads the other operand.
  // layer_scale: a per-channel product, and its weight gradient a per-channel dot product.
  table.add(OpKind::layer_scale,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               const Tensor& w = need(at(call.params, 0), f.op, "weight");
               kernels::scale_channels(f.dtype, w.desc.dtype, act_shape(x.desc), x.raw(), w.raw(), f.y.raw(), stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               const Tensor& w = need(at(call.params, 0), b.op, "weight");
               if (b.grad_x)
                 kernels::scale_channels(b.dtype, w.desc.dtype, act_shape(b.g.desc), b.g.raw(), w.raw(),
                                         b.grad_x->raw(), stream);
               if (Tensor* grad_w = at(call.grad_params, 0))
                 kernels::channel_dot(b.dtype, act_shape(b.g.desc), b.g.raw(), b.saved_input().raw(), grad_w->raw(),
                                      call.workspace, stream);
             }});
  table.add(OpKind::mul,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& a = f.input(0);
               const Tensor& b = f.input(1);
               kernels::mul(f.dtype, act_shape(a.desc), b.desc.shape != a.desc.shape, a.raw(), b.raw(), f.y.raw(),
                            stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               const TensorDesc& b_desc = call.graph.desc(b.op.inputs.at(1));
               const bool broadcast = b_desc.shape != b.g.desc.shape;
               if (b.grad_x)
                 kernels::mul(b.dtype, act_shape(b.g.desc), broadcast, b.g.raw(),
                              need(at(call.inputs, 1), b.op, "saved second operand").raw(), b.grad_x->raw(), stream);
               if (Tensor* grad_b = at(call.grad_inputs, 1)) {
                 const Tensor& a = b.saved_input();
                 if (broadcast)
                   kernels::mul_grad_b_broadcast(b.dtype, act_shape(a.desc), b.g.raw(), a.raw(), grad_b->raw(), stream);
                 else
                   kernels::mul(b.dtype, act_shape(a.desc), false, b.g.raw(), a.raw(), grad_b->raw(), stream);
               }
             }});
}

}  // namespace convbench::cuda
