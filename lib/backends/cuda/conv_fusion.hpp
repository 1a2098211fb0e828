// `--cudnn-fusion conv_act`: a convolution and the activation after it as one cuDNN call.
//
// cuDNN's runtime-fusion engines run a graph of a convolution followed by pointwise operations
// (the bias added, then the activation) as one kernel whose epilogue applies them to each output
// before it is stored. convbench runs a conv that way when the activation overwrites the conv's
// output in place (memory_policy: inplace_act decides where autograd allows that): the fused
// kernel never stores the pre-activation tensor, and an in-place activation is exactly the
// graph whose memory the model predicts for it, so fusing changes the time and nothing else.
// Under the default policy the activation writes a tensor of its own, as PyTorch eager does;
// there a fused call would have to store both and gain nothing, so convbench does not fuse.
//
// This file holds the decision, which needs no GPU (host tests drive it); cudnn_graph.hpp
// builds the fused graph, CudnnConv runs it, and CudaBackend skips the fused activation's own
// kernel. When cuDNN offers no fused engine for a problem (no runtime fusion on the device, a
// dtype or layout its engines refuse), the conv runs as before and its op details say why.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "graph/graph.hpp"

namespace convbench::cuda {

// `--cudnn-fusion none|conv_act`.
enum class ConvFusion { none, conv_act };
std::string_view to_string(ConvFusion fusion);
std::optional<ConvFusion> parse_conv_fusion(std::string_view name);

// What a fused conv applies to its output: its bias, then the activation op `act_op`.
struct ConvEpilogue {
  bool bias = false;
  OpKind act = OpKind::relu;    // relu, leaky_relu or sigmoid: the activations cuDNN's pointwise ops have
  double negative_slope = 0.0;  // leaky_relu's
  int act_op = -1;              // the activation's index in the graph

  // "bias+relu", "leaky_relu(0.1)": how op details and plan keys name it.
  std::string name() const;
};

// Whether op `conv_index` of `graph` can run with its activation fused (the graph's rule alone:
// the backend adds its own conditions, such as the conv running on cuDNN at all): a conv (not
// a conv_transpose or folded_conv) whose output the next op, an activation cuDNN has, reads and
// overwrites in place. Returns the epilogue, or nullopt and, when `why_not` is given, why not
// (the backend asks on every call of a conv and an activation: no text unless asked).
std::optional<ConvEpilogue> conv_act_fusion(const Graph& graph, int conv_index, std::string* why_not = nullptr);

// The index of `op` in `graph.ops`, or -1 when the op is not one of them (a cast the executor
// makes, a folded conv's inner conv).
int op_index(const Graph& graph, const Op& op);

}  // namespace convbench::cuda
