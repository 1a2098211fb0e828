#include "backends/cuda/conv_fusion.hpp"

#include <sstream>

namespace convbench::cuda {

std::string_view to_string(ConvFusion fusion) { return fusion == ConvFusion::conv_act ? "conv_act" : "none"; }

std::optional<ConvFusion> parse_conv_fusion(std::string_view name) {
  if (name == "none") return ConvFusion::none;
  if (name == "conv_act") return ConvFusion::conv_act;
  return std::nullopt;
}

std::string ConvEpilogue::name() const {
  std::ostringstream out;
  if (bias) out << "bias+";
  out << to_string(act);
  if (act == OpKind::leaky_relu) out << "(" << negative_slope << ")";
  return out.str();
}

int op_index(const Graph& graph, const Op& op) {
  if (graph.ops.empty()) return -1;
  const Op* first = graph.ops.data();
  if (&op < first || &op >= first + graph.ops.size()) return -1;
  return static_cast<int>(&op - first);
}

FusionDecision conv_act_fusion(const Graph& graph, int conv_index) {
  FusionDecision d;
  if (conv_index < 0 || static_cast<size_t>(conv_index) >= graph.ops.size()) {
    d.why_not = "not an op of the graph";
    return d;
  }
  const Op& conv = graph.ops[static_cast<size_t>(conv_index)];
  if (conv.kind != OpKind::conv) {
    d.why_not = std::string(to_string(conv.kind)) + ": only a conv's forward has cuDNN's fused epilogue";
    return d;
  }
  // The activation must come right after: the executor runs ops in order, and an in-place
  // activation is the only reader of its input, so nothing runs between them that could read the
  // pre-activation tensor the fused call never stores.
  const size_t next = static_cast<size_t>(conv_index) + 1;
  if (next >= graph.ops.size() || graph.ops[next].inputs.empty() || graph.ops[next].inputs[0] != conv.output) {
    d.why_not = "no activation reads the conv's output next";
    return d;
  }
  const Op& act = graph.ops[next];
  if (act.kind != OpKind::relu && act.kind != OpKind::leaky_relu && act.kind != OpKind::sigmoid) {
    d.why_not =
        "the next op, " + std::string(to_string(act.kind)) + ", is not an activation cuDNN's pointwise ops have";
    return d;
  }
  if (!act.in_place) {
    d.why_not =
        "the activation writes a tensor of its own (memory_policy inplace_act runs it in place, "
        "as a fused epilogue does)";
    return d;
  }
  if (graph.desc(act.output).dtype != graph.desc(conv.output).dtype) {
    d.why_not = "the activation's output dtype differs from the conv's";
    return d;
  }
  ConvEpilogue e;
  e.bias = conv.conv.bias;
  e.act = act.kind;
  e.negative_slope = act.kind == OpKind::leaky_relu ? act.negative_slope : 0.0;
  e.act_op = static_cast<int>(next);
  d.epilogue = e;
  return d;
}

}  // namespace convbench::cuda
