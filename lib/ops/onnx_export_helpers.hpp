// What several ops' ONNX exports (OpDefinition::onnx_export) share: their values' tensor names,
// ONNX's pads, parameters as initializers, scalar constants, the Conv node (conv, conv_transpose and
// folded_conv) and the BatchNormalization node (batch_norm and batch_norm_act).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/onnx_node_writer.hpp"

namespace convbench::onnx_export {

using W = OnnxNodeWriter;

inline const TensorDesc& in_desc(const W& w, const Op& op, size_t k = 0) { return w.graph.desc(op.inputs.at(k)); }
inline const TensorDesc& out_desc(const W& w, const Op& op) { return w.graph.desc(op.output); }
inline std::string in(const W& w, const Op& op, size_t k = 0) { return w.tensor(op.inputs.at(k)); }
inline std::string out(const W& w, const Op& op) { return w.tensor(op.output); }

// ONNX pads: every begin, then every end.
std::vector<int64_t> twice(const std::vector<int64_t>& v);

// A parameter (or a frozen conv's buffer) as an initializer under its own name.
std::string param_tensor(W& w, int id);
std::string buffer_tensor(W& w, int id);

// A scalar float constant (an initializer of shape []), as PyTorch's exporter writes them.
std::string scalar(W& w, const Op& op, const std::string& what, double v);

// One node of `type` from the op's input to its output, named after the op.
void unary(W& w, const Op& op, const std::string& type);
// One node of `type` from the op's two inputs to its output.
void binary(W& w, const Op& op, const std::string& type);

// The Conv (or ConvTranspose) node of attributes `a` with `weights` (weight, then bias).
void conv_nodes(W& w, const Op& op, const ConvAttrs& a, const std::vector<std::string>& weights, bool transpose);

// The op's BatchNormalization node, with its parameters and running statistics, written to `output`.
std::string batch_norm_node(W& w, const Op& op, const std::string& output);

}  // namespace convbench::onnx_export
