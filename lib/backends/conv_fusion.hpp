// `--conv-fusion`: a convolution and the work of the op after it as one call.
//
// conv_act: a convolution and the activation after it.
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
//
// conv_bn_stats (training): a convolution that also writes its output's per-channel sum and sum
// of squares, which the batch norm right after it turns into its batch statistics instead of
// reading the conv's output once more to compute them (a training batch norm reads its input
// twice: once for the statistics, once to normalise). The sums are written into that batch
// norm's saved mean and saved 1/std, two float tensors of C values which the executor therefore
// makes before the conv runs instead of after it (Backend::fills_statistics_of; the memory
// model makes them at the same moment). The batch norm then finishes its statistics in place
// from the sums. Only the cuda backend fuses this (cuDNN's GENSTATS operation after the
// convolution, graph API); oneDNN has no convolution that also writes its output's sums, so cpu
// refuses it rather than pretend.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "graph/graph.hpp"
#include "ops/op_definition.hpp"

namespace convbench {

// `--conv-fusion none|conv_act|conv_bn_stats|all` (all: both).
enum class ConvFusion { none, conv_act, conv_bn_stats, all };
std::string_view to_string(ConvFusion fusion);
std::optional<ConvFusion> parse_conv_fusion(std::string_view name);
bool fuses_activations(ConvFusion fusion);    // conv_act or all
bool fuses_bn_statistics(ConvFusion fusion);  // conv_bn_stats or all

// What a fused conv does to its output after its bias: apply the activation op `act_op`, or
// (bn_statistics) store it and write its per-channel sums for the batch norm `bn_op`.
struct ConvEpilogue {
  enum class Kind { activation, bn_statistics };
  Kind kind = Kind::activation;
  bool bias = false;
  OpKind act = OpKind::relu;  // the activation op, whose definition names `function`
  // What the epilogue computes (its op's OpTraits::conv_epilogue), in each library's terms.
  ConvEpilogueAct function = ConvEpilogueAct::relu;
  double negative_slope = 0.0;  // leaky_relu's
  int act_op = -1;              // the activation's index in the graph
  int bn_op = -1;               // bn_statistics: the batch norm's index in the graph

  // "bias+relu", "leaky_relu(0.1)", "bn_stats": how op details and plan keys name it.
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

// conv_bn_stats: whether op `conv_index` of a training step can write the per-channel sums of
// its output for the batch norm after it (the graph's rule alone). A conv (not a conv_transpose
// or folded_conv) whose output the next op, a batch_norm or batch_norm_act, normalises; both
// outside any recompute segment (a segment's forward runs again in backward, where the sums
// would have to be made again for a batch norm that may not rerun). Returns the epilogue (its
// bn_op), or nullopt and, when `why_not` is given, why not.
std::optional<ConvEpilogue> conv_bn_stats_fusion(const Graph& graph, int conv_index, std::string* why_not = nullptr);

}  // namespace convbench
