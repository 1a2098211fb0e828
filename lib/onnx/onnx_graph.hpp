// What onnx_model.cpp (the file, checked) hands onnx_nodes.cpp (each node, translated): the
// constant tensors (initializers and Constant nodes' outputs) with their shapes and, when small,
// their values; which convbench value each ONNX tensor name holds; and the channels of each value,
// which later ops' fields need (a Slice's end, an InstanceNormalization's groups).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx/onnx_model.hpp"

namespace convbench {

struct OnnxTensor {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::optional<std::vector<double>> values;  // when it has at most kSmallTensor elements
};
inline constexpr int64_t kSmallTensor = 64;

struct OnnxContext {
  std::string file;
  int64_t opset = 0;
  int dims = 0;                                 // spatial dims of the block input
  std::map<std::string, OnnxTensor> constants;  // by ONNX name
  std::map<std::string, std::string> values;    // ONNX tensor name -> convbench value name
  std::map<std::string, int64_t> channels;      // convbench value name -> its channels
  std::set<std::string> names;                  // op names taken
  std::vector<ImportedOp> ops;
};

// "graph.node[3] (Conv \"/conv1/Conv\")"
std::string onnx_node_label(const onnx::NodeProto& node, int index);
// Reads a tensor's shape and, when small, its values; checks the data it holds against its shape.
// `where`: the key path for messages.
OnnxTensor read_onnx_tensor(const onnx::TensorProto& t, const std::string& file, const std::string& where);
// Translates one node into zero or more ops of cx (onnx_nodes.cpp).
void translate_onnx_node(const onnx::NodeProto& node, int index, OnnxContext& cx);

}  // namespace convbench
