// ShuffleNet's channel shuffle as PyTorch exports it (torchvision's shufflenetv2.channel_shuffle):
// x.view(N, g, C / g, H, W), transpose(1, 2), contiguous, view(N, C, H, W). The exporters write a
// Reshape to N x g x C/g x spatial (its shape a constant, or computed from the value's Shape), a
// Transpose of axes 1 and 2, and a Reshape back to N x C x spatial: read here as one
// channel_shuffle with g groups, which is what the three compute together.
#include "onnx/onnx_node_reading.hpp"

namespace convbench::onnx_reading {
namespace {

using Dim = OnnxContext::ShapeDim;

bool is_number(const Dim& d, int64_t v) { return d.kind == Dim::Kind::number && d.value == v; }

// The batch dim of a Reshape's target: the batch itself, 0 (copy it: allowzero 0), -1 (inferred),
// or a number (the batch fixed at export; the value's own batch is checked when the graph is built).
bool batch_like(const Dim& d) { return d.kind != Dim::Kind::unknown; }

}  // namespace

bool translate_shuffle_reshape(OnnxContext& cx, const At& at) {
  const Node& n = at.node;
  if (!has_input(n, 0) || !has_input(n, 1)) return false;
  const int rank = cx.dims + 2;
  if (const auto back = cx.shuffled.find(n.input(0)); back != cx.shuffled.end()) {
    const auto to = shape_dims_input(at, 1, "the shape");
    const auto channels = channels_of(cx, back->second.value);
    if (static_cast<int>(to.size()) != rank || !batch_like(to[0]) || !channels || !is_number(to[1], *channels))
      at.refuse(
          "a Reshape of the shuffled groups to another shape than N x C x spatial: convbench reads "
          "ShuffleNet's view back");
    OpFieldValues f;
    f.set("groups", back->second.groups);
    add_op(cx, at, "channel_shuffle", op_name(cx, n, at.index, ""), {back->second.value}, std::move(f), channels);
    return true;
  }
  const auto value = cx.values.find(n.input(0));
  if (value == cx.values.end() || cx.channels_last.count(n.input(0))) return false;
  const auto to = shape_dims_input(at, 1, "the shape");
  const auto channels = channels_of(cx, value->second);
  // N x g x C/g x spatial: one more dim than the value, the channels split in two.
  int64_t product = 0;  // a hostile file's dims may be any int64: a product past it is no match
  if (static_cast<int>(to.size()) != rank + 1 || !channels || !batch_like(to[0]) || to[1].kind != Dim::Kind::number ||
      to[2].kind != Dim::Kind::number || to[1].value < 1 ||
      __builtin_mul_overflow(to[1].value, to[2].value, &product) || product != *channels)
    return false;
  cx.shuffle_groups[n.output(0)] = {value->second, to[1].value};
  return true;
}

bool translate_shuffle_transpose(OnnxContext& cx, const At& at) {
  const auto view = has_input(at.node, 0) ? cx.shuffle_groups.find(at.node.input(0)) : cx.shuffle_groups.end();
  if (view == cx.shuffle_groups.end()) return false;
  std::vector<int64_t> swap = {0, 2, 1};
  for (int i = 3; i < cx.dims + 3; ++i) swap.push_back(i);
  if (ints_attribute(at.node, "perm") != swap)
    at.refuse("a Transpose of the channel groups other than of their two axes (ShuffleNet's transpose(1, 2))");
  cx.shuffled[at.node.output(0)] = view->second;
  return true;
}

}  // namespace convbench::onnx_reading
