// A variant's op graph: values (tensors), ops in execution order, parameters and buffers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/op.hpp"
#include "graph/tensor_desc.hpp"

namespace convbench {

struct Value {
  std::string name;
  TensorDesc desc;
  // Whether it needs a gradient (Graph::requires_grad()), as GraphBuilder recorded it when the op
  // making it was added: one value's flag in constant time, for questions asked per op (a backend's
  // workspace, for every op of a network), where recomputing the whole vector made them quadratic.
  bool requires_grad = false;
};

// How a parameter or buffer starts, as PyTorch's modules start theirs.
enum class ParamInit {
  uniform_fan_in,  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)): conv weights and biases (kaiming_uniform(a=sqrt(5)))
  ones,            // norm weights, running variance
  zeros,           // norm biases, running mean
  layer_scale,     // 1e-6 each: ConvNeXt's layer scale, as torchvision and timm start it
  blur,            // the binomial filter (outer product of [1, 2, 1]-like rows), normalised to sum 1
  derived,         // from the source graph's values (a folded graph: Graph::derivation says how)
  given,           // the values the user's model holds (an ONNX file's initializers): Param::values
};

// Values a model file gives a parameter or buffer, in logical (channels-first) order; shared, as
// graphs are copied by the variant builders and transforms.
using GivenValues = std::shared_ptr<const std::vector<double>>;

// A trainable parameter or a non-trainable buffer (BN running statistics, a frozen conv's weight).
struct Param {
  std::string name;  // "<op>.weight", "<op>.running_mean", ...
  TensorDesc desc;
  int op = -1;         // owning op
  int64_t fan_in = 1;  // for PyTorch-like initialisation ranges
  ParamInit init = ParamInit::uniform_fan_in;
  GivenValues values;  // ParamInit::given only: numel() values
};

// How a variant trades time for memory (configs/README.md "Memory policies"); the variant builder applies it
// (variants/memory_policy.hpp) and records what it did in the graph, which the executor, the
// memory model, the counts and the graph hash all read:
//  none        - PyTorch autograd's saving rules, as they are;
//  recompute   - each segment (the whole block; each slot of a network) keeps only its inputs in
//                forward and runs its forward again in backward (torch.utils.checkpoint);
//  inplace_abn - batch_norm -> leaky_relu pairs become one batch_norm_act op that saves only its
//                output and runs in place (Inplace-ABN);
//  inplace_act - activations overwrite their input where autograd allows (inplace=True).
enum class MemoryPolicy { none, recompute, inplace_abn, inplace_act };
std::string_view to_string(MemoryPolicy policy);
// The policies' spellings, in the order messages list them.
const std::vector<std::string>& memory_policy_names();
std::optional<MemoryPolicy> parse_memory_policy(std::string_view text);

// Ops [first_op, end_op) of the graph that run as one checkpointed segment (memory policy
// recompute): a block's ops, or one network slot's.
struct RecomputeSegment {
  std::string name;  // the block's name, or the slot's op-name prefix ("d1.block.convs.0")
  int first_op = 0;
  int end_op = 0;
};
struct ParamDerivation;  // graph/fold_program.hpp

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Op> ops;  // topological (execution) order
  std::vector<Param> params;
  std::vector<Param> buffers;
  int input = 0;    // the block input value
  int output = -1;  // the block output value
  MemoryPolicy memory_policy = MemoryPolicy::none;
  // What the memory policy changed beyond memory, for the reports (inplace_abn on a ReLU block:
  // the activation becomes leaky_relu(0.01)); empty when nothing.
  std::string policy_note;
  std::vector<RecomputeSegment> segments;  // recompute only; in execution order, disjoint
  // Mixed precision (variants/autocast_graph.hpp): plain, or the AMP mode whose casts and dtypes
  // the graph's ops and values already carry, under which device's autocast rules.
  Precision precision = Precision::plain;
  AutocastDevice autocast_device = AutocastDevice::cpu;
  // Set on a graph derived from another (a folded variant): its parameters and buffers start as
  // functions of the source's (ParamInit::derived), see graph/fold_program.hpp.
  std::shared_ptr<const ParamDerivation> derivation;

  const TensorDesc& desc(int value) const { return values.at(static_cast<size_t>(value)).desc; }
  // A conv's or conv_transpose's weight: its first parameter, or its first buffer when frozen
  // (ops/conv.cpp). Stored in the conv input's layout.
  const TensorDesc& conv_weight(const Op& conv) const;
  // Ops that read each value, in execution order.
  std::vector<std::vector<int>> consumers() const;
  // Whether each value needs a gradient: it depends on a parameter. The block input does not.
  std::vector<bool> requires_grad() const;
};

}  // namespace convbench
