// The CUDA backend's copies: layout conversion, space_to_depth and its inverse depth_to_space, channel_shuffle
// (kernels/layout.cu), and cast between float dtypes (kernels/precision.cu).
#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

namespace {

kernels::SpaceToDepthShape space_to_depth_shape(const TensorDesc& in, const TensorDesc& out,
                                                const SpaceToDepthAttrs& a) {
  kernels::SpaceToDepthShape s;
  s.n = static_cast<int>(in.batch());
  s.c = static_cast<int>(in.channels());
  s.in = spatial3(in);
  s.out = spatial3(out);
  s.b = static_cast<int>(a.block_size);
  s.bd = in.spatial_rank() == 3 ? s.b : 1;
  s.channel_major = a.order == SpaceToDepthOrder::channel_major;
  s.channels_last = in.layout == Layout::channels_last;
  return s;
}

// A cast converts element by element in memory order: both tensors must store them alike.
void same_layout(const TensorDesc& a, const TensorDesc& b, const Op& op) {
  if (a.shape != b.shape || (a.layout != b.layout && a.rank() >= 3))
    throw std::invalid_argument("cuda backend: " + op.name + ": cast: the two tensors differ in shape or layout");
}

}  // namespace

void register_layout_kernels(KernelTable& table, cudaStream_t stream) {
  table.add(OpKind::space_to_depth,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               kernels::space_to_depth_forward(f.dtype, space_to_depth_shape(x.desc, f.y.desc, f.op.space_to_depth),
                                               x.raw(), f.y.raw(), stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               if (!b.grad_x) return;
               kernels::space_to_depth_backward(b.dtype,
                                                space_to_depth_shape(b.grad_x->desc, b.g.desc, b.op.space_to_depth),
                                                b.g.raw(), b.grad_x->raw(), stream);
             }});

  table.add(OpKind::channel_shuffle,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               kernels::channel_shuffle(f.dtype, act_shape(x.desc), static_cast<int>(f.op.shuffle_groups), x.raw(),
                                        f.y.raw(), false, stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               if (!b.grad_x) return;
               kernels::channel_shuffle(b.dtype, act_shape(b.g.desc), static_cast<int>(b.op.shuffle_groups), b.g.raw(),
                                        b.grad_x->raw(), true, stream);
             }});

  // depth_to_space: space_to_depth the other way (the large tensor is space_to_depth's input).
  table.add(OpKind::depth_to_space,
            {[stream](const ForwardCall& call) {
               const Fwd f(call);
               const Tensor& x = f.input(0);
               kernels::space_to_depth_backward(f.dtype, space_to_depth_shape(f.y.desc, x.desc, f.op.space_to_depth),
                                                x.raw(), f.y.raw(), stream);
             },
             [stream](const BackwardCall& call) {
               const Bwd b(call);
               if (!b.grad_x) return;
               kernels::space_to_depth_forward(b.dtype,
                                               space_to_depth_shape(b.g.desc, b.grad_x->desc, b.op.space_to_depth),
                                               b.g.raw(), b.grad_x->raw(), stream);
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

  // cast (autocast's casts, and the executor's cast copies of weights and their gradients): the
  // same layout on both sides, so memory order is element order; backward casts the gradient back.
  table.add(OpKind::cast, {[stream](const ForwardCall& call) {
                             const Fwd f(call);
                             const Tensor& x = f.input(0);
                             same_layout(x.desc, f.y.desc, f.op);
                             kernels::cast(x.desc.dtype, f.dtype, element_count(f.y.desc), x.raw(), f.y.raw(), stream);
                           },
                           [stream](const BackwardCall& call) {
                             const Bwd b(call);
                             if (!b.grad_x) return;
                             same_layout(b.g.desc, b.grad_x->desc, b.op);
                             kernels::cast(b.dtype, b.grad_x->desc.dtype, element_count(b.g.desc), b.g.raw(),
                                           b.grad_x->raw(), stream);
                           }});
}

}  // namespace convbench::cuda
