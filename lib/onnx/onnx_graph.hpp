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
  // Where its data is (the model, which outlives the translation, holds it): read whole only for
  // the tensors that become a parameter's starting values (read_onnx_values).
  const onnx::TensorProto* proto = nullptr;
  int64_t elements() const;
};
inline constexpr int64_t kSmallTensor = 64;

struct OnnxContext {
  std::string file;
  std::string folder;          // the model's folder: external data must lie in it
  bool allow_links = false;    // follow symbolic links to external data (OnnxReadOptions)
  int64_t external_bytes = 0;  // read from external data files so far (at most kMaxOnnxBytes)
  // Every constant's values read so far, by tensor: a weight that many nodes use (tied, or a
  // hostile file's one initializer under 20,000 convs) is read and held once, and shared.
  std::map<const onnx::TensorProto*, GivenValues> values_read;
  int64_t held_value_bytes = 0;  // what values_read holds (at most kMaxOnnxValueBytes)
  int64_t opset = 0;
  int dims = 0;                                 // spatial dims of the block input
  std::map<std::string, OnnxTensor> constants;  // by ONNX name
  std::map<std::string, std::string> values;    // ONNX tensor name -> convbench value name
  std::map<std::string, int64_t> channels;      // convbench value name -> its channels
  std::set<std::string> names;                  // op names taken
  std::vector<ImportedOp> ops;
  std::map<std::string, int64_t> uses;  // ONNX value name -> node inputs and graph outputs reading it
  // convbench values whose spatial dims are all 1 (a global pool and what follows it pointwise):
  // the operand of a Mul that broadcasts over space, whichever side the exporter wrote it on.
  std::set<std::string> spatial_one;
  // The input's batch where the file fixes it (the default exporter's static shapes).
  std::optional<int64_t> batch;
  // A spatial_one value reshaped to one dim (onnx_strided_view.cpp), by the Reshape's output.
  std::map<std::string, std::string> flat_views;

  // Shape arithmetic (onnx_shape_arithmetic.cpp): the integer vectors an exporter computes from a
  // value's Shape (the stochastic depth's noise of N x 1 x ... with the batch left symbolic), by
  // ONNX name, each dim a number or the block's batch; and what ConstantOfShape fills to such a
  // shape (only its shape matters to the nodes that read it).
  struct ShapeDim {
    enum class Kind { number, batch, unknown } kind = Kind::unknown;
    int64_t value = 0;  // when a number
    bool operator==(const ShapeDim&) const = default;
  };
  struct ShapeValue {
    std::vector<ShapeDim> dims;
    bool scalar = false;  // a 0-d result (a Gather of one index), one dim
  };
  std::map<std::string, ShapeValue> shapes;
  std::map<std::string, std::vector<ShapeDim>> filled;

  // ConvNeXt's channels-last stretch (onnx_channels_last.cpp): the ONNX values that are a
  // convbench value viewed as N x spatial x C (after a Transpose), the 2-D weights transposed by a
  // Transpose node (by its output, the weight it transposes), and the 1x1 convs read from a MatMul
  // whose Add of a bias may still come.
  std::set<std::string> channels_last;
  std::map<std::string, std::string> transposed_weights;
  std::set<std::string> open_bias;

  // ShuffleNet's channel shuffle (onnx_channel_shuffle.cpp): a value reshaped to N x g x C/g x
  // ..., and that view with its two group axes transposed, by ONNX name.
  struct GroupView {
    std::string value;
    int64_t groups = 0;
  };
  std::map<std::string, GroupView> shuffle_groups, shuffled;

  // nn.GELU's erf form before opset 20 (onnx_gelu.cpp): each ONNX value of it, by how far it has
  // come, with the convbench value x it is of.
  struct GeluStep {
    enum class Step { scaled, erf, one_plus, half_one_plus, x_one_plus } step;
    std::string x;
    bool channels_last = false;  // x is a channels-last view (ConvNeXt's GELU): so is the gelu
  };
  std::map<std::string, GeluStep> gelu;

  // torchvision's stochastic depth in a training export (onnx_stochastic_depth.cpp): each ONNX
  // value of its noise, by how far the pattern has come, with the survival rate it compares with.
  struct Noise {
    enum class Step { uniform, mask, scaled } step;
    double keep = 0;
    std::vector<ShapeDim> dims;  // the noise's shape: whose units it drops
  };
  std::map<std::string, Noise> noise;

  // PyTorch's group norm, as its exporter writes it (onnx_group_norm.cpp):
  struct GroupedView {
    std::string value;  // the convbench value (or op) it stands for
    int64_t groups = 0;
  };
  std::map<std::string, std::string> shape_of;       // a Shape node's output -> the value it measures
  std::map<std::string, GroupedView> grouped;        // Reshape to (N, G, -1) output -> the value viewed
  std::map<std::string, GroupedView> grouped_norms;  // its InstanceNormalization's output -> the group_norm op
  std::set<std::string> open_affine;                 // group_norm ops whose Mul and Add may still be taken in
};

// "graph.node[3] (Conv \"/conv1/Conv\")"
std::string onnx_node_label(const onnx::NodeProto& node, int index);
// Reads a tensor's shape and, when small, its values; checks the data it holds against its shape.
// `where`: the key path for messages.
OnnxTensor read_onnx_tensor(const onnx::TensorProto& t, const std::string& file, const std::string& where);
// Every value of a constant that gives a parameter or buffer its starting values (a weight, a
// norm's scale or running mean), as doubles in the tensor's own order: the model's data, or the
// bytes an external data file holds for it (inside the model's folder, at most kMaxOnnxBytes in
// all). Read once per tensor and shared by every use; at most kMaxOnnxValueBytes held in all.
// `where`: the key path for messages.
// `kind` indices: an integer tensor's (a large Gather's indices, exact below 2^53) instead.
enum class ValueKind { weight, indices };
GivenValues read_onnx_values(OnnxContext& cx, const OnnxTensor& t, const std::string& where,
                             ValueKind kind = ValueKind::weight);
// Counts `count` more values (doubles) as held for the block, refusing at `where` past
// kMaxOnnxValueBytes: read_onnx_values calls it for each tensor it reads, the translations for
// each copy they make (a transposed or per-channel weight).
void hold_onnx_values(OnnxContext& cx, int64_t count, const std::string& where);
// Translates one node into zero or more ops of cx (onnx_nodes.cpp).
void translate_onnx_node(const onnx::NodeProto& node, int index, OnnxContext& cx);

}  // namespace convbench
