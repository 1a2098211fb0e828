// `--conv-fusion conv_act`: a convolution and the activation after it as one call.
//
// A fused convolution applies its bias and the activation to each output before storing it, so
// the output is written once instead of being written, read and written again. convbench fuses a
// conv with the activation after it when that activation overwrites the conv's output in place
// (memory_policy: inplace_act decides where autograd allows it): the fused call never stores the
// pre-activation tensor, and an in-place activation is exactly the graph whose memory the model
// predicts for it, so fusing changes the time and nothing else. Under the default policy the
// activation writes a tensor of its own, as PyTorch eager does; there a fused call would have to
// store both and gain nothing, so convbench does not fuse.
//
// This file holds the graph's rule, which every backend shares and which needs no device (host
// tests drive it). Each backend adds its own conditions and runs it: the cpu backend as a oneDNN
// post-op on the convolution primitive (onednn_conv.cpp), the cuda backend as a cuDNN operation
// graph on the graph API's runtime-fusion engines (cudnn_graph.hpp), falling back to the
// unfused calls where cuDNN has no fused engine. The reference backend runs every op apart.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "graph/graph.hpp"

namespace convbench {

// `--conv-fusion none|conv_act`.
enum class ConvFusion { none, conv_act };
std::string_view to_string(ConvFusion fusion);
std::optional<ConvFusion> parse_conv_fusion(std::string_view name);

// What a fused conv applies to its output: its bias, then the activation op `act_op`.
struct ConvEpilogue {
  bool bias = false;
  OpKind act = OpKind::relu;    // relu, leaky_relu or sigmoid
  double negative_slope = 0.0;  // leaky_relu's
  int act_op = -1;              // the activation's index in the graph

  // "bias+relu", "leaky_relu(0.1)": how op details and plan keys name it.
  std::string name() const;
};

// Whether op `conv_index` of `graph` can run with its activation fused (the graph's rule alone:
// the backend adds its own conditions, such as the conv running on its library at all): a conv
// (not a conv_transpose or folded_conv) whose output the next op, a relu, leaky_relu or sigmoid, reads and
// overwrites in place. Returns the epilogue, or nullopt and, when `why_not` is given, why not
// (backends ask on every call of a conv and an activation: no text unless asked).
std::optional<ConvEpilogue> conv_act_fusion(const Graph& graph, int conv_index, std::string* why_not = nullptr);

// The index of `op` in `graph.ops`, or -1 when the op is not one of them (a cast the executor
// makes, a folded conv's inner conv).
int op_index(const Graph& graph, const Op& op);

// The conv whose epilogue the graph's rule gives activation `act` (the op before it), or -1:
// where the backend fused that conv, the activation itself must run nothing.
int conv_taking_activation(const Graph& graph, const Op& act);

}  // namespace convbench
