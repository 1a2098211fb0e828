// What an op's ONNX import (OpDefinition::onnx_import) reads a node's attributes with. The
// importer (lib/onnx/onnx_nodes.cpp) implements it over the ONNX project's classes, which lib/ops
// does not see; its refusals name the node and the file, as every other refusal of the importer.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "ops/op_fields.hpp"

namespace convbench {

class OnnxNodeAttributes {
 public:
  virtual ~OnnxNodeAttributes() = default;
  // The attribute's value, or `fallback` (ONNX's default) when the node leaves it out.
  virtual double number(const std::string& name, double fallback) const = 0;
  virtual std::string text(const std::string& name, const std::string& fallback) const = 0;
  // Refuses the node: what convbench's op cannot compute as the node does.
  [[noreturn]] virtual void refuse(const std::string& why) const = 0;
};

// The ONNX operator the importer reads one-to-one as an op (one node, one data input, the op's
// output), and how its attributes become the op's fields (empty: it has none). Ops whose ONNX
// form is several nodes (silu's Sigmoid and Mul, gelu's erf chain, group_norm's Reshapes) are
// read by the importer's pattern readers in lib/onnx.
struct OnnxImport {
  std::string_view node;
  std::function<OpFieldValues(const OnnxNodeAttributes&)> fields;
};

}  // namespace convbench
