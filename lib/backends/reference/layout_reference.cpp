// convert_layout and cast: the reference backend loads and stores tensors in logical order, whatever
// their layout and dtype, so converting either is a load from one tensor and a store into the other
// (rounded to its dtype), both ways.
// space_to_depth: a permutation of the elements, each output element read from one input element;
// depth_to_space: the same permutation the other way. channel_shuffle: a permutation of channels.
#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

void copy_forward(const ForwardCall& call) {
  store(required(call.output, "convert_layout/cast", "output"),
        load(required(optional_at(call.inputs, 0), "convert_layout/cast", "input")));
}

void copy_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  store(*grad_x, load(required(call.grad_output, "convert_layout/cast", "grad_output")));
}

// The input element (logical index) that space_to_depth's output element `o` (logical index)
// reads: output channel oc holds input channel c at block offset `off` (row-major within the
// b x b (x b) block), oc = c * b^d + off (channel_major) or off * C + c (block_major).
int64_t space_to_depth_source(int64_t o, const TensorDesc& in, const TensorDesc& out, const SpaceToDepthAttrs& a) {
  const Extent3 os = spatial_extent(out), is = spatial_extent(in);
  const int64_t b = a.block_size, bd = in.spatial_rank() == 3 ? b : 1;
  const int64_t block_volume = bd * b * b, channels = in.channels();
  const int64_t sp = o % volume(os), oc = o / volume(os) % out.channels(), n = o / (volume(os) * out.channels());
  const bool channel_major = a.order == SpaceToDepthOrder::channel_major;
  const int64_t c = channel_major ? oc / block_volume : oc % channels;
  const int64_t off = channel_major ? oc % block_volume : oc / channels;
  const Extent3 p = unflatten(sp, os), q = unflatten(off, Extent3{bd, b, b});
  const int64_t z = p[0] * bd + q[0], y = p[1] * b + q[1], x = p[2] * b + q[2];
  return ((n * channels + c) * is[0] + z) * is[1] * is[2] + y * is[2] + x;
}

void space_to_depth_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "space_to_depth", "input");
  Tensor& out = required(call.output, "space_to_depth", "output");
  const std::vector<double> x = load(xt);
  std::vector<double> y(x.size());
  for (size_t o = 0; o < y.size(); ++o)
    y[o] = x[static_cast<size_t>(
        space_to_depth_source(static_cast<int64_t>(o), xt.desc, out.desc, call.op.space_to_depth))];
  store(out, y);
}

// The inverse permutation: every input element receives the gradient of the one output element
// that read it.
void space_to_depth_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const Tensor& gt = required(call.grad_output, "space_to_depth", "grad_output");
  const std::vector<double> g = load(gt);
  std::vector<double> gx(g.size());
  for (size_t o = 0; o < g.size(); ++o)
    gx[static_cast<size_t>(
        space_to_depth_source(static_cast<int64_t>(o), grad_x->desc, gt.desc, call.op.space_to_depth))] = g[o];
  store(*grad_x, gx);
}

// depth_to_space is space_to_depth's inverse permutation: its forward scatters as space_to_depth's
// backward does (the large tensor is space_to_depth's input), its backward gathers.
void depth_to_space_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "depth_to_space", "input");
  Tensor& out = required(call.output, "depth_to_space", "output");
  const std::vector<double> x = load(xt);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[static_cast<size_t>(space_to_depth_source(static_cast<int64_t>(i), out.desc, xt.desc, call.op.space_to_depth))] =
        x[i];
  store(out, y);
}

void depth_to_space_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const Tensor& gt = required(call.grad_output, "depth_to_space", "grad_output");
  const std::vector<double> g = load(gt);
  std::vector<double> gx(g.size());
  for (size_t i = 0; i < gx.size(); ++i)
    gx[i] = g[static_cast<size_t>(
        space_to_depth_source(static_cast<int64_t>(i), gt.desc, grad_x->desc, call.op.space_to_depth))];
  store(*grad_x, gx);
}

// channel_shuffle's output channel of input channel c: c = i * (C/g) + j goes to j * g + i.
int64_t shuffled_channel(int64_t c, int64_t channels, int64_t groups) {
  const int64_t per_group = channels / groups;
  return (c % per_group) * groups + c / per_group;
}

// Forward scatters each input channel to its place; backward gathers the gradient back.
void channel_shuffle_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "channel_shuffle", "input");
  const NCS v(xt.desc);
  const std::vector<double> x = load(xt);
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s)
        y[v.index(n, shuffled_channel(c, v.channels, call.op.shuffle_groups), s)] = x[v.index(n, c, s)];
  store(required(call.output, "channel_shuffle", "output"), y);
}

void channel_shuffle_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const std::vector<double> g = load(required(call.grad_output, "channel_shuffle", "grad_output"));
  const NCS v(grad_x->desc);
  std::vector<double> gx(g.size());
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s)
        gx[v.index(n, c, s)] = g[v.index(n, shuffled_channel(c, v.channels, call.op.shuffle_groups), s)];
  store(*grad_x, gx);
}

}  // namespace

void register_layout_kernels(KernelTable& table) {
  table.add(OpKind::convert_layout, {copy_forward, copy_backward});
  table.add(OpKind::cast, {copy_forward, copy_backward});
  table.add(OpKind::space_to_depth, {space_to_depth_forward, space_to_depth_backward});
  table.add(OpKind::depth_to_space, {depth_to_space_forward, depth_to_space_backward});
  table.add(OpKind::channel_shuffle, {channel_shuffle_forward, channel_shuffle_backward});
}

}  // namespace convbench::reference
