// What onnx_export.cpp (the model) hands onnx_export_ops.cpp (each op's nodes): the graph being
// written, its values, the ONNX name of each convbench value, and small builders for nodes,
// attributes and initializers with names that never collide.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/graph.hpp"
#include "ops/param_values.hpp"

namespace convbench {

class OnnxWriter {
 public:
  // Reserves every value's, parameter's and buffer's name, so a helper tensor never takes one.
  OnnxWriter(const Graph& graph, const GraphValues& values, onnx::GraphProto& out, int32_t elem_type);

  const Graph& graph;
  const GraphValues& values;
  onnx::GraphProto& out;
  const int32_t elem_type;  // the graph's dtype as an ONNX element type

  // The ONNX tensor that holds convbench value `v`.
  const std::string& tensor(int v) const { return tensors_.at(static_cast<size_t>(v)); }
  // `base`, or base_2, base_3, ... when taken; the result is taken.
  std::string fresh(const std::string& base);

  onnx::NodeProto& node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  static void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
  static void integer(onnx::NodeProto& n, const std::string& name, int64_t v);
  static void number(onnx::NodeProto& n, const std::string& name, double v);
  static void text(onnx::NodeProto& n, const std::string& name, const std::string& v);

  // Initializers: in the graph's element type (weights), int64 (shapes, indices), float (scales).
  // Each returns its name (`name` itself, or fresh(name) for the helpers).
  std::string weights(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& v);
  std::string int64s(const std::string& base, const std::vector<int64_t>& v);
  std::string floats(const std::string& base, const std::vector<int64_t>& dims, const std::vector<float>& v);

  // A parameter's or buffer's starting values, by its id in the graph.
  const std::vector<double>& param(int id) const { return values.params.at(static_cast<size_t>(id)); }
  const std::vector<double>& buffer(int id) const { return values.buffers.at(static_cast<size_t>(id)); }

 private:
  std::vector<std::string> tensors_;
  std::set<std::string> taken_;
};

// Writes op `op` of w.graph as ONNX nodes (onnx_export_ops.cpp); OnnxExportError when it cannot.
void write_onnx_op(OnnxWriter& w, const Op& op);

}  // namespace convbench
