// A variant's op graph written as an ONNX model (`convbench export`, lib/onnx/README.md): one node
// or a few per op, convbench's starting weights and running statistics as initializers named as
// convbench names its parameters ("<op>.weight": what the importer, onnx_nodes.cpp, reads back
// as the op's name), the model checked by the ONNX project's own checker and strict shape
// inference before anyone writes it.
//
// The model computes the graph's inference forward: batch_norm with its running statistics,
// dropout as identity. ONNX tensors are logical N, C, spatial: a channels-last graph is written as
// its channels-first twin (convert_layout is an Identity), which computes the same values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <onnx/onnx_pb.h>

#include "graph/graph.hpp"
#include "ops/param_values.hpp"

namespace convbench {

// Opset 17: what Debian 12's libonnx (1.12) checks, and every convbench op has a form in it.
// GroupNormalization (opset 18) is left out on purpose: its scale and bias are per group until
// opset 21, where convbench's (PyTorch's) are per channel, so group_norm is written as PyTorch's
// exporter writes it (Reshape, InstanceNormalization, Reshape, Mul, Add).
inline constexpr int64_t kOnnxExportOpset = 17;
inline constexpr int64_t kOnnxExportIrVersion = 8;

// An op the export cannot express, or a model the ONNX checker refuses; `op` names the op ("" for
// the graph as a whole). The caller adds which block and variant it was.
class OnnxExportError : public std::runtime_error {
 public:
  OnnxExportError(std::string op, const std::string& message) : std::runtime_error(message), op_(std::move(op)) {}
  const std::string& op() const { return op_; }

 private:
  std::string op_;
};

struct OnnxExportInfo {
  std::string model_name;  // graph name in the file: "<block>/<variant>"
  std::string producer_version;
  std::string doc;  // the model's doc_string: spec, seed, what the model computes
};

// The model of `graph` with `values` (initial_graph_values of the graph) as its initializers,
// checked (onnx::checker, strict shape inference against the graph's own output shape).
// OnnxExportError when an op cannot be written or the checker refuses the result.
onnx::ModelProto export_onnx_model(const Graph& graph, const GraphValues& values, const OnnxExportInfo& info);

}  // namespace convbench
