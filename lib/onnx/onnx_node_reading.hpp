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
// The name constant input k is stored under: its initializer's, through the Reshapes, Unsqueezes
// and Identities that renamed it (timm's gamma.reshape(1, -1, 1, 1) reads "gamma"), else the input's.
std::string stored_name(const At& at, int k);
std::vector<int64_t> integers(const At& at, const OnnxTensor& t, const std::string& what);
// The one value input k holds where it is a constant of one element (a 0-d or 1-element tensor: a
// Clip's bound, a Dropout's ratio, a survival rate); nullopt otherwise.
std::optional<double> scalar_constant(const At& at, int k);
// Constant input k's one value, refused as "<what> is not one number" where it holds another count.
double one_number(const At& at, int k, const std::string& what);
// A size an op's field takes: 1 to 2^31.
int64_t field_size(const At& at, int64_t v, const std::string& what);
// A unique op name: the weight's name without ".weight", else the node's, else type and index.
std::string op_name(OnnxContext& cx, const Node& n, int index, const std::string& weight);
// Adds the op the node becomes; its output `output` (the first by default) names the op's value.
ImportedOp& add_op(OnnxContext& cx, const At& at, const std::string& op, const std::string& name,
                   std::vector<std::string> inputs, OpFieldValues fields, std::optional<int64_t> channels,
                   int output = 0);
std::optional<int64_t> channels_of(const OnnxContext& cx, const std::string& value);
// The op of that name (the newest first: nearly always the one just added), or nullptr.
ImportedOp* op_named(OnnxContext& cx, const std::string& name);
// Constant input k's values as the starting values of the op's parameter or buffer `suffix`.
void take_values(OnnxContext& cx, const At& at, int k, const std::string& suffix, ImportedOp& op);
// A norm's epsilon (and batch norm's momentum) as the op's eps and momentum fields, where they are
// not PyTorch's defaults.
void take_norm_constants(const At& at, bool batch_norm, OpFieldValues& f);

// Whether constant input k is one value per channel of a value of `channels` channels, broadcast
// along the channel axis: dims (C, 1, ...) aligned to the value's last dims, or (1, C, 1, ...).
bool is_per_channel_constant(const At& at, int k, int64_t channels);

// Shape arithmetic on known shapes (onnx_shape_arithmetic.cpp): Gather from a Shape, Unsqueeze
// and Concat of such vectors and constants, ConstantOfShape of them. False when the node computes
// no shape (a Concat of channels, an Unsqueeze of a weight), which is then translated as usual.
bool translate_shape_arithmetic(OnnxContext& cx, const At& at, const std::string& type);
// Input k's integers where a node reads them (a Slice's starts and ends, a Reshape's shape): a
// constant's, or a shape value's whose every dim is a number (refused otherwise).
std::vector<int64_t> known_integers(const At& at, int k, const std::string& what);
// Input k as dims (a shape value's, or a constant's integers), numbers, the batch or unknown.
std::vector<OnnxContext::ShapeDim> shape_dims_input(const At& at, int k, const std::string& what);
// ShuffleNet's channel shuffle, x.view(N, g, C / g, ...).transpose(1, 2).contiguous().view(N, C,
// ...) (onnx_channel_shuffle.cpp): the Reshape to groups, the Transpose of the two group axes,
// and the Reshape back, read as one channel_shuffle. False when the node is no step of it.
bool translate_shuffle_reshape(OnnxContext& cx, const At& at);
bool translate_shuffle_transpose(OnnxContext& cx, const At& at);
// A pooled value viewed through as_strided, as the default exporter writes ConvNeXt's head
// (onnx_strided_view.cpp): the Reshape to -1, and the Gather of indices 0, 1, ... in the value's
// shape, read as the value itself. False when the node is no step of it.
bool translate_flat_view(OnnxContext& cx, const At& at);
bool translate_strided_view(OnnxContext& cx, const At& at);
// The dims of the tensor input k has where only its shape is read (RandomUniformLike's): a
// constant's, or a ConstantOfShape's; nullopt when it is neither.
std::optional<std::vector<OnnxContext::ShapeDim>> shape_only_input(const At& at, int k);

// Whether any input of the node is a channels-last view (onnx_channels_last.cpp).
bool reads_channels_last(const At& at);
// ConvNeXt's channels-last stretch as PyTorch exports its LayerNorm2d and CNBlock: Transpose to
// N x spatial x C, LayerNormalization over the last axis (layer_norm), MatMul by a weight and the
// Add of its bias (a 1x1 conv, nn.Linear on the channels), a Mul by one value per channel
// (layer_scale), and the Transpose back; read as the same ops on the channels-first value. False
// when the node is none of these (a pointwise op on the view is then translated as usual).
bool translate_channels_last(OnnxContext& cx, const At& at, const std::string& type);

// nn.GELU's erf form as exported before opset 20 (onnx_gelu.cpp): Div by sqrt(2), Erf, Add 1,
// the products with x and 1/2: one gelu. False when the node is no step of it.
bool translate_gelu_erf(OnnxContext& cx, const At& at, const std::string& type);

// Dropout drawn in the graph, as PyTorch's exporters write torchvision's StochasticDepth(p, "row")
// and nn.Dropout/Dropout2d/3d in training (onnx_stochastic_depth.cpp): RandomUniformLike of a
// tensor of the units' shape, Less than the survival rate, Cast, Div by the survival rate, and the
// Mul of the value by it: one drop_path, channel_dropout or dropout (by the noise's shape) with
// p = 1 - the survival rate. False when the node is no step of it.
bool translate_stochastic_depth(OnnxContext& cx, const At& at, const std::string& type);

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
