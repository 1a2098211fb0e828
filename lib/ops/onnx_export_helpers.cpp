#include "ops/onnx_export_helpers.hpp"

#include <algorithm>

namespace convbench::onnx_export {

std::vector<int64_t> twice(const std::vector<int64_t>& v) {
  std::vector<int64_t> p = v;
  p.insert(p.end(), v.begin(), v.end());
  return p;
}

std::string param_tensor(W& w, int id) {
  const Param& p = w.graph.params.at(static_cast<size_t>(id));
  return w.weights(p.name, p.desc.shape, w.param(id));
}

std::string buffer_tensor(W& w, int id) {
  const Param& b = w.graph.buffers.at(static_cast<size_t>(id));
  return w.weights(b.name, b.desc.shape, w.buffer(id));
}

std::string scalar(W& w, const Op& op, const std::string& what, double v) {
  return w.floats(op.name + "." + what, {}, {static_cast<float>(v)});
}

void unary(W& w, const Op& op, const std::string& type) { w.node(type, op.name, {in(w, op)}, {out(w, op)}); }

void binary(W& w, const Op& op, const std::string& type) {
  w.node(type, op.name, {in(w, op, 0), in(w, op, 1)}, {out(w, op)});
}

void conv_nodes(W& w, const Op& op, const ConvAttrs& a, const std::vector<std::string>& weights, bool transpose) {
  std::vector<std::string> inputs = {in(w, op)};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  OnnxNode n = w.node(transpose ? "ConvTranspose" : "Conv", op.name, inputs, {out(w, op)});
  n.ints("kernel_shape", a.kernel);
  n.ints("strides", a.stride);
  n.ints("pads", twice(a.padding));
  n.ints("dilations", a.dilation);
  n.integer("group", a.groups);
  if (transpose && std::any_of(a.output_padding.begin(), a.output_padding.end(), [](int64_t p) { return p != 0; }))
    n.ints("output_padding", a.output_padding);
}

std::string batch_norm_node(W& w, const Op& op, const std::string& output) {
  OnnxNode n = w.node("BatchNormalization", op.name,
                      {in(w, op), param_tensor(w, op.params.at(0)), param_tensor(w, op.params.at(1)),
                       buffer_tensor(w, op.buffers.at(0)), buffer_tensor(w, op.buffers.at(1))},
                      {output});
  n.number("epsilon", op.norm.eps);
  n.number("momentum", 1 - op.norm.momentum);  // ONNX keeps momentum x old: PyTorch's 1 - momentum
  return output;
}

}  // namespace convbench::onnx_export
