// Small helpers the op definitions share: element counts in checked 64-bit arithmetic.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/checked_math.hpp"
#include "graph/tensor_desc.hpp"
#include "ops/op_definition.hpp"

namespace convbench {

inline int64_t count_product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n = checked_mul(n, x);
  return n;
}

inline int64_t count_elements(const TensorDesc& d) { return count_product(d.shape); }

}  // namespace convbench

namespace convbench {

// Elementwise ops of one input: the output has the input's shape and nothing is owned.
inline OpShape infer_same_shape(const Graph& graph, Op& op) { return OpShape{graph.desc(op.inputs.at(0)), {}, {}}; }

// "16x8x8": a value's shape without the batch, as spec messages give it (channels x spatial).
inline std::string channels_and_spatial(const TensorDesc& d) {
  return dims_string(std::vector<int64_t>(d.shape.begin() + 1, d.shape.end()));
}

// Elementwise ops of two operands (add, sub): equal shapes, the output has theirs.
inline OpShape infer_same_shape_operands(const Graph& graph, Op& op) {
  const TensorDesc& a = graph.desc(op.inputs.at(0));
  const TensorDesc& b = graph.desc(op.inputs.at(1));
  require_at(a.shape == b.shape, op.name, {"inputs", 1},
             "\"" + graph.values[static_cast<size_t>(op.inputs[1])].name + "\" is " + channels_and_spatial(b) +
                 " but \"" + graph.values[static_cast<size_t>(op.inputs[0])].name + "\" is " + channels_and_spatial(a) +
                 " (channels x spatial); " + std::string(to_string(op.kind)) + " needs equal shapes");
  require_at(a.layout == b.layout, op.name, {"inputs", 1},
             "\"" + graph.values[static_cast<size_t>(op.inputs[1])].name + "\" is " + std::string(to_string(b.layout)) +
                 " but \"" + graph.values[static_cast<size_t>(op.inputs[0])].name + "\" is " +
                 std::string(to_string(a.layout)) + "; " + std::string(to_string(op.kind)) +
                 " needs one memory layout (convert one operand with convert_layout)");
  return OpShape{a, {}, {}};
}

// Batch and group norm: FLOPs per output element, training forward 5 (mean 1, variance 2,
// normalise and affine 2), inference 2; backward-data 6, backward-weight 3.
inline OpWork normalization_work(const WorkQuery& q) {
  const int64_t n = q.output_elements();
  OpWork w;
  w.elementwise = {checked_mul(n, q.training ? 5 : 2), q.any_input_grad() ? checked_mul(n, 6) : 0, checked_mul(n, 3)};
  return w;
}

// A norm's eps (> 0, finite) and batch norm's momentum (in [0, 1], PyTorch's convention: the
// weight of the new statistics), from a spec or an ONNX file.
inline void require_norm_constants(const Op& op, bool batch_norm) {
  require_at(op.norm.eps > 0.0 && std::isfinite(op.norm.eps), op.name, {"eps"},
             "eps must be a positive number (PyTorch's default is 1e-5)");
  if (batch_norm)
    require_at(op.norm.momentum >= 0.0 && op.norm.momentum <= 1.0, op.name, {"momentum"},
               "momentum must be in [0, 1] (PyTorch's default is 0.1)");
}

}  // namespace convbench
