// What an op's ONNX export (OpDefinition::onnx_export) writes its nodes with. lib/ops knows nothing
// of protobuf or the ONNX project's classes (they are lib/onnx's, a layer above): this is the
// small interface lib/onnx's OnnxWriter implements, so that each op's nodes are written in its own
// definition file while the model, its checker and the file format stay in lib/onnx.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/param_values.hpp"

namespace convbench {

class OnnxNodeWriter;

// A node just written, to set its attributes on: in the order they are set (the file keeps it).
class OnnxNode {
 public:
  OnnxNode(OnnxNodeWriter& writer, int index) : writer_(&writer), index_(index) {}
  OnnxNode& ints(const std::string& name, const std::vector<int64_t>& v);
  OnnxNode& integer(const std::string& name, int64_t v);
  OnnxNode& number(const std::string& name, double v);  // written as ONNX's float
  OnnxNode& text(const std::string& name, const std::string& v);

 private:
  OnnxNodeWriter* writer_;
  int index_;  // the node's position in the graph being written
};

class OnnxNodeWriter {
 public:
  OnnxNodeWriter(const Graph& g, const GraphValues& v) : graph(g), values(v) {}
  virtual ~OnnxNodeWriter() = default;
  OnnxNodeWriter(const OnnxNodeWriter&) = delete;
  OnnxNodeWriter& operator=(const OnnxNodeWriter&) = delete;

  const Graph& graph;
  const GraphValues& values;

  // The ONNX tensor that holds convbench value `v`.
  virtual const std::string& tensor(int v) const = 0;
  // `base`, or base_2, base_3, ... when taken; the result is taken.
  virtual std::string fresh(const std::string& base) = 0;

  virtual OnnxNode node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) = 0;

  // Initializers: in the graph's element type (weights), int64 (shapes, indices), float (scales).
  // Each returns its name (`name` itself, or fresh(name) for the helpers).
  virtual std::string weights(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<double>& v) = 0;
  virtual std::string int64s(const std::string& base, const std::vector<int64_t>& v) = 0;
  virtual std::string floats(const std::string& base, const std::vector<int64_t>& dims,
                             const std::vector<float>& v) = 0;

  // A parameter's or buffer's starting values, by its id in the graph.
  const std::vector<double>& param(int id) const { return values.params.at(static_cast<size_t>(id)); }
  const std::vector<double>& buffer(int id) const { return values.buffers.at(static_cast<size_t>(id)); }

 protected:
  friend class OnnxNode;
  virtual void set_ints(int node, const std::string& name, const std::vector<int64_t>& v) = 0;
  virtual void set_integer(int node, const std::string& name, int64_t v) = 0;
  virtual void set_number(int node, const std::string& name, double v) = 0;
  virtual void set_text(int node, const std::string& name, const std::string& v) = 0;
};

inline OnnxNode& OnnxNode::ints(const std::string& name, const std::vector<int64_t>& v) {
  writer_->set_ints(index_, name, v);
  return *this;
}
inline OnnxNode& OnnxNode::integer(const std::string& name, int64_t v) {
  writer_->set_integer(index_, name, v);
  return *this;
}
inline OnnxNode& OnnxNode::number(const std::string& name, double v) {
  writer_->set_number(index_, name, v);
  return *this;
}
inline OnnxNode& OnnxNode::text(const std::string& name, const std::string& v) {
  writer_->set_text(index_, name, v);
  return *this;
}

}  // namespace convbench
