// The CUDA backend's batch norm and batch_norm_act (kernels/batch_norm.cu).
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {
namespace {

// Batch norm's forward arguments, which batch_norm_act shares (it only adds its leaky ReLU).
kernels::BatchNormForward batch_norm_forward_args(const Fwd& f) {
  const ForwardCall& call = f.call;
  const Tensor& x = f.input(0);
  const Tensor& gamma = need(at(call.params, 0), f.op, "weight");
  return {act_shape(x.desc),
          x.raw(),
          gamma.desc.dtype,
          gamma.raw(),
          need(at(call.params, 1), f.op, "bias").raw(),
          need(at(call.buffers, 0), f.op, "running_mean").data<float>(),
          need(at(call.buffers, 1), f.op, "running_var").data<float>(),
          f.y.raw(),
          call.training ? float_data(at(call.aux, 0)) : nullptr,
          call.training ? float_data(at(call.aux, 1)) : nullptr,
          f.op.norm.eps,
          f.op.norm.momentum,
          call.training};
}

}  // namespace

void batch_norm_forward_from_sums(const ForwardCall& call, cudaStream_t stream) {
  const Fwd f(call);
  if (!call.training) throw std::logic_error("cuda backend: " + f.op.name + ": statistics from sums in inference");
  kernels::BatchNormForward a = batch_norm_forward_args(f);
  a.sums_in_saved = true;
  if (f.op.kind == OpKind::batch_norm_act) {
    a.leaky = true;
    a.negative_slope = static_cast<float>(f.op.negative_slope);
  }
  kernels::batch_norm_forward(f.dtype, a, call.workspace, stream);
}

void register_batch_norm_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::batch_norm,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               kernels::batch_norm_forward(f.dtype, batch_norm_forward_args(f), call.workspace, stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               const Tensor& x = b.saved_input();
               const Tensor& gamma = need(at(call.params, 0), b.op, "weight");
               kernels::BatchNormBackward a{act_shape(x.desc),
                                            x.raw(),
                                            b.g.raw(),
                                            need(at(call.aux, 0), b.op, "saved mean").data<float>(),
                                            need(at(call.aux, 1), b.op, "saved invstd").data<float>(),
                                            gamma.desc.dtype,
                                            gamma.raw(),
                                            raw(b.grad_x),
                                            raw(at(call.grad_params, 0)),
                                            raw(at(call.grad_params, 1))};
               kernels::batch_norm_backward(b.dtype, a, call.workspace, stream);
             }});

  // batch_norm_act (Inplace-ABN): batch norm's forward with leaky ReLU applied as it writes (the
  // output may be the input's tensor), and a backward from the saved output alone.
  table.add(OpKind::batch_norm_act, {[stream](const ForwardCall& call) {
                                       const Fwd f(call);
                                       kernels::BatchNormForward a = batch_norm_forward_args(f);
                                       a.leaky = true;
                                       a.negative_slope = static_cast<float>(f.op.negative_slope);
                                       kernels::batch_norm_forward(f.dtype, a, call.workspace, stream);
                                     },
                                     [stream](const BackwardCall& call) {
                                       const Bwd b(call);
                                       const Tensor& y = need(call.output, b.op, "saved output");
                                       const Tensor& gamma = need(at(call.params, 0), b.op, "weight");
                                       kernels::BatchNormActBackward a{
                                           act_shape(y.desc),
                                           y.raw(),
                                           b.g.raw(),
                                           need(at(call.aux, 1), b.op, "saved invstd").data<float>(),
                                           gamma.desc.dtype,
                                           gamma.raw(),
                                           need(at(call.params, 1), b.op, "bias").raw(),
                                           static_cast<float>(b.op.negative_slope),
                                           raw(b.grad_x),
                                           raw(at(call.grad_params, 0)),
                                           raw(at(call.grad_params, 1))};
                                       kernels::batch_norm_act_backward(b.dtype, a, call.workspace, stream);
                                     }});
}

}  // namespace convbench::cuda
