// The writer each op's ONNX export (OpDefinition::onnx_export, in the op's own file in lib/ops)
// writes its nodes with: ops/onnx_node_writer.hpp's interface, here over the ONNX project's
// protobuf classes, which lib/ops does not see. It names every convbench value's tensor and makes
// names for helper tensors that never collide.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/graph.hpp"
#include "ops/onnx_node_writer.hpp"
#include "ops/param_values.hpp"

namespace convbench {

class OnnxWriter final : public OnnxNodeWriter {
 public:
  // Reserves every value's, parameter's and buffer's name, so a helper tensor never takes one.
  OnnxWriter(const Graph& graph, const GraphValues& values, onnx::GraphProto& out, int32_t elem_type);

  onnx::GraphProto& out;
  const int32_t elem_type;  // the graph's dtype as an ONNX element type

  const std::string& tensor(int v) const override { return tensors_.at(static_cast<size_t>(v)); }
  std::string fresh(const std::string& base) override;
  OnnxNode node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                const std::vector<std::string>& outputs) override;
  std::string weights(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& v) override;
  std::string int64s(const std::string& base, const std::vector<int64_t>& v) override;
  std::string floats(const std::string& base, const std::vector<int64_t>& dims, const std::vector<float>& v) override;

 private:
  void set_ints(int node, const std::string& name, const std::vector<int64_t>& v) override;
  void set_integer(int node, const std::string& name, int64_t v) override;
  void set_number(int node, const std::string& name, double v) override;
  void set_text(int node, const std::string& name, const std::string& v) override;
  onnx::AttributeProto& attribute(int node, const std::string& name, onnx::AttributeProto::AttributeType type);

  std::vector<std::string> tensors_;
  std::set<std::string> taken_;
};

// Writes op `op` of w.graph as ONNX nodes, as its definition's onnx_export says; OnnxExportError
// when the op has no ONNX form.
void write_onnx_op(OnnxWriter& w, const Op& op);

}  // namespace convbench
