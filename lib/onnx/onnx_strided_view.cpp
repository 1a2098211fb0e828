// A pooled value viewed through as_strided, as PyTorch's default exporter writes torchvision's
// ConvNeXt head (its LayerNorm2d reads the pooled N x C x 1 x 1 features through a view): a
// Reshape to one dim (-1), then a Gather along axis 0 whose constant indices are 0, 1, 2, ... in
// the value's own shape. Together they give back every element in its place: the value itself.
// Only that is read: other indices would pick, repeat or reorder elements.
#include "onnx/onnx_node_reading.hpp"

namespace convbench::onnx_reading {

bool translate_flat_view(OnnxContext& cx, const At& at) {
  const Node& n = at.node;
  if (!has_input(n, 0) || !has_input(n, 1) || !is_constant_input(at, 1)) return false;
  const auto value = cx.values.find(n.input(0));
  if (value == cx.values.end() || cx.channels_last.count(n.input(0)) || !cx.spatial_one.count(value->second))
    return false;
  if (integers(at, constant_input(at, 1, "the shape"), "the shape") != std::vector<int64_t>{-1}) return false;
  cx.flat_views[n.output(0)] = value->second;
  return true;
}

bool translate_strided_view(OnnxContext& cx, const At& at) {
  const Node& n = at.node;
  const auto flat = has_input(n, 0) ? cx.flat_views.find(n.input(0)) : cx.flat_views.end();
  if (flat == cx.flat_views.end()) return false;
  const std::string why =
      "a Gather of a flattened value that is not the value itself: convbench reads a Reshape to -1 and a Gather "
      "along axis 0 of indices 0, 1, 2, ... in the value's N x C x 1 ... shape (as_strided's view of a pooled "
      "value, as the default exporter writes ConvNeXt's head)";
  if (int_attribute(n, "axis", 0) != 0) at.refuse(why);
  const OnnxTensor& indices = constant_input(at, 1, "the indices");
  const auto channels = channels_of(cx, flat->second);
  // The file's batch fixes how many elements the indices cover: a view of a symbolic batch's
  // value by indices of one batch size would be a part of it.
  if (!cx.batch)
    at.refuse("an as_strided view of a fixed batch (" + std::to_string(indices.dims.empty() ? 0 : indices.dims[0]) +
              ") in a file whose input batch is symbolic: export with a fixed batch, or without the view");
  std::vector<int64_t> want = {*cx.batch, channels.value_or(-1)};
  want.resize(static_cast<size_t>(cx.dims + 2), 1);
  if (!channels || indices.dims != want) at.refuse(why);
  // N x C of them (more than a small constant's): read as a weight's values are, within its bounds.
  const GivenValues order = read_onnx_values(cx, indices, onnx_node_label(n, at.index), ValueKind::indices);
  for (size_t i = 0; i < order->size(); ++i)
    if ((*order)[i] != static_cast<double>(i)) at.refuse(why);
  cx.values[n.output(0)] = flat->second;
  return true;
}

}  // namespace convbench::onnx_reading
