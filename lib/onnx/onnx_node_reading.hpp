// Reading one ONNX node for its translation (onnx_nodes.cpp, onnx_group_norm.cpp): its
// attributes, its inputs as convbench values or as constants, and adding the op it becomes. Every
// problem is a refusal located at the node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_graph.hpp"
#include "util/input_error.hpp"

namespace convbench::onnx_reading {

using Node = onnx::NodeProto;

// The node being translated, for messages.
struct At {
  const OnnxContext& cx;
  const Node& node;
  int index;
  [[noreturn]] void refuse(const std::string& why) const {
    throw InputError({cx.file, 0, 0}, onnx_node_label(node, index), why);
  }
};

const onnx::AttributeProto* find_attribute(const Node& n, const std::string& name);
int64_t int_attribute(const Node& n, const std::string& name, int64_t fallback);
double float_attribute(const Node& n, const std::string& name, double fallback);
std::string string_attribute(const Node& n, const std::string& name, const std::string& fallback);
std::optional<std::vector<int64_t>> ints_attribute(const Node& n, const std::string& name);
bool has_input(const Node& n, int k);
// The convbench value input k reads (computed by an earlier node, or the block input).
std::string data_input(const At& at, int k);
// Input k as a constant (an initializer or a Constant node's output).
const OnnxTensor& constant_input(const At& at, int k, const std::string& what);
bool is_constant_input(const At& at, int k);
std::vector<int64_t> integers(const At& at, const OnnxTensor& t, const std::string& what);
// A size an op's field takes: 1 to 2^31.
int64_t field_size(const At& at, int64_t v, const std::string& what);
// A unique op name: the weight's name without ".weight", else the node's, else type and index.
std::string op_name(OnnxContext& cx, const Node& n, int index, const std::string& weight);
// Adds the op the node becomes; its first output names the op's value.
ImportedOp& add_op(OnnxContext& cx, const At& at, const std::string& op, const std::string& name,
                   std::vector<std::string> inputs, OpFieldValues fields, std::optional<int64_t> channels);
std::optional<int64_t> channels_of(const OnnxContext& cx, const std::string& value);
// Constant input k's values as the starting values of the op's parameter or buffer `suffix`.
void take_values(OnnxContext& cx, const At& at, int k, const std::string& suffix, ImportedOp& op);
// A norm's epsilon (and batch norm's momentum) as the op's eps and momentum fields, where they are
// not PyTorch's defaults.
void take_norm_constants(const At& at, bool batch_norm, OpFieldValues& f);

// PyTorch's group norm as its exporter writes it at every opset (onnx_group_norm.cpp): Reshape
// to (N, G, -1), InstanceNormalization with unit scale and zero shift, Reshape back to the input's
// Shape, then Mul by the weight and Add the bias (each Unsqueezed to (C, 1, ...)): one group_norm.
void translate_shape(OnnxContext& cx, const At& at);
void translate_unsqueeze(OnnxContext& cx, const At& at);
void translate_reshape(OnnxContext& cx, const At& at);
// When the node's input is a Reshape to groups: the group_norm op; false otherwise.
bool translate_grouped_instance_norm(OnnxContext& cx, const At& at);
// A Mul or Add of such a group_norm's output (read by nothing else) and a per-channel constant,
// taken into its weight and bias; false when the node is not one.
bool take_norm_affine(OnnxContext& cx, const At& at, const std::string& type);

}  // namespace convbench::onnx_reading
