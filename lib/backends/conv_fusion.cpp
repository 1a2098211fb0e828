#include "backends/conv_fusion.hpp"

#include <sstream>
#include <string_view>

#include "ops/op_registry.hpp"

namespace convbench {

std::string_view to_string(ConvFusion fusion) {
  switch (fusion) {
    case ConvFusion::conv_act: return "conv_act";
    case ConvFusion::conv_bn_stats: return "conv_bn_stats";
    case ConvFusion::all: return "all";
    case ConvFusion::none: break;
  }
  return "none";
}

std::optional<ConvFusion> parse_conv_fusion(std::string_view name) {
  for (ConvFusion f : {ConvFusion::none, ConvFusion::conv_act, ConvFusion::conv_bn_stats, ConvFusion::all})
    if (name == to_string(f)) return f;
  return std::nullopt;
}

bool fuses_activations(ConvFusion fusion) { return fusion == ConvFusion::conv_act || fusion == ConvFusion::all; }
bool fuses_bn_statistics(ConvFusion fusion) { return fusion == ConvFusion::conv_bn_stats || fusion == ConvFusion::all; }

std::string ConvEpilogue::name() const {
  std::ostringstream out;
  if (bias) out << "bias+";
  if (kind == Kind::bn_statistics) {
    out << "bn_stats";
    return out.str();
  }
  out << to_string(act);
  if (function == ConvEpilogueAct::leaky_relu) out << "(" << negative_slope << ")";
  return out.str();
}

int op_index(const Graph& graph, const Op& op) {
  if (graph.ops.empty()) return -1;
  const Op* first = graph.ops.data();
  if (&op < first || &op >= first + graph.ops.size()) return -1;
  return static_cast<int>(&op - first);
}

namespace {

// The op right after conv `conv_index` when it reads the conv's output, or nullptr and, when
// `why_not` is given, why not. Both fusions need the pair adjacent: the executor runs ops in
// order, so nothing runs between them. `takes`: what the conv's fused call does ("takes a fused
// epilogue"); `next_op`: what must read its output next ("activation").
const Op* conv_and_next_reader(const Graph& graph, int conv_index, std::string_view takes, std::string_view next_op,
                               std::string* why_not) {
  if (conv_index < 0 || static_cast<size_t>(conv_index) >= graph.ops.size()) {
    if (why_not) *why_not = "not an op of the graph";
    return nullptr;
  }
  const Op& conv = graph.ops[static_cast<size_t>(conv_index)];
  if (conv.kind != OpKind::conv) {
    if (why_not) *why_not = std::string(to_string(conv.kind)) + ": only a conv's forward " + std::string(takes);
    return nullptr;
  }
  const size_t next = static_cast<size_t>(conv_index) + 1;
  if (next >= graph.ops.size() || graph.ops[next].inputs.empty() || graph.ops[next].inputs[0] != conv.output) {
    if (why_not) *why_not = "no " + std::string(next_op) + " reads the conv's output next";
    return nullptr;
  }
  return &graph.ops[next];
}

// The recompute segment holding op `index`, or -1.
int segment_of(const Graph& graph, int index) {
  for (size_t s = 0; s < graph.segments.size(); ++s)
    if (index >= graph.segments[s].first_op && index < graph.segments[s].end_op) return static_cast<int>(s);
  return -1;
}

}  // namespace

std::optional<ConvEpilogue> conv_act_fusion(const Graph& graph, int conv_index, std::string* why_not) {
  const auto no = [why_not](auto&& reason) -> std::optional<ConvEpilogue> {
    if (why_not) *why_not = reason();
    return std::nullopt;
  };
  // The activation must come right after: an in-place activation is the only reader of its
  // input, so nothing runs between them that could read the pre-activation tensor the fused call
  // never stores.
  const Op* next_op = conv_and_next_reader(graph, conv_index, "takes a fused epilogue", "activation", why_not);
  if (!next_op) return std::nullopt;
  const Op& conv = graph.ops[static_cast<size_t>(conv_index)];
  const Op& act = *next_op;
  const size_t next = static_cast<size_t>(conv_index) + 1;
  // The activations oneDNN's eltwise post-ops and cuDNN's pointwise ops both have: the op's
  // definition says which it is, if any.
  const std::optional<ConvEpilogueAct> function = op_traits(act.kind).conv_epilogue;
  if (!function)
    return no([&] {
      return "the next op, " + std::string(to_string(act.kind)) + ", is not an activation a fused epilogue has";
    });
  if (!act.in_place)
    return no([] {
      return std::string(
          "the activation writes a tensor of its own (memory_policy inplace_act runs it in place, as a fused "
          "epilogue does)");
    });
  if (graph.desc(act.output).dtype != graph.desc(conv.output).dtype)
    return no([] { return std::string("the activation's output dtype differs from the conv's"); });
  ConvEpilogue e;
  e.bias = conv.conv.bias;
  e.act = act.kind;
  e.function = *function;
  e.negative_slope = *function == ConvEpilogueAct::leaky_relu ? act.negative_slope : 0.0;
  e.act_op = static_cast<int>(next);
  return e;
}

std::optional<ConvEpilogue> conv_bn_stats_fusion(const Graph& graph, int conv_index, std::string* why_not) {
  const auto no = [why_not](auto&& reason) -> std::optional<ConvEpilogue> {
    if (why_not) *why_not = reason();
    return std::nullopt;
  };
  // Right after: the batch norm's saved statistics are made before the conv runs and hold the
  // sums until the batch norm reads them.
  const Op* next_op = conv_and_next_reader(graph, conv_index, "writes its output's sums", "batch norm", why_not);
  if (!next_op) return std::nullopt;
  const Op& conv = graph.ops[static_cast<size_t>(conv_index)];
  const Op& bn = *next_op;
  const size_t next = static_cast<size_t>(conv_index) + 1;
  if (bn.kind != OpKind::batch_norm && bn.kind != OpKind::batch_norm_act)
    return no([&] { return "the next op, " + std::string(to_string(bn.kind)) + ", is not a batch norm"; });
  if (segment_of(graph, conv_index) >= 0 || segment_of(graph, static_cast<int>(next)) >= 0)
    return no([] {
      return std::string("the conv or its batch norm is in a recompute segment, whose forward runs again in backward");
    });
  ConvEpilogue e;
  e.kind = ConvEpilogue::Kind::bn_statistics;
  e.bias = conv.conv.bias;
  e.bn_op = static_cast<int>(next);
  return e;
}

int conv_taking_activation(const Graph& graph, const Op& act) {
  if (!act.in_place) return -1;
  const int index = op_index(graph, act);
  if (index <= 0) return -1;
  const std::optional<ConvEpilogue> e = conv_act_fusion(graph, index - 1);
  return e && e->act_op == index ? index - 1 : -1;
}

}  // namespace convbench
