// channel_shuffle (ShuffleNet's, nn.ChannelShuffle): the channels, seen as `groups` groups of C/g,
// are read group-minor: output channel j * groups + i is input channel i * (C/g) + j. A
// permutation: it computes nothing (0 FLOPs), saves nothing, and its backward is the inverse
// permutation of the gradient, as PyTorch's view-transpose-contiguous keeps nothing.
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

// channel_shuffle as ShuffleNetV2's view-transpose-view exports: Reshape to (N, g, C/g, ...),
// Transpose the two group axes, Reshape back.
void channel_shuffle_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const TensorDesc& x = in_desc(w, op);
  const int64_t g = op.shuffle_groups;
  std::vector<int64_t> split = {x.batch(), g, x.channels() / g}, perm = {0, 2, 1};
  for (int i = 2; i < x.rank(); ++i) {
    split.push_back(x.shape[static_cast<size_t>(i)]);
    perm.push_back(i + 1);
  }
  const std::string split_t = w.fresh(op.name + "/split"), moved = w.fresh(op.name + "/moved");
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".split_shape", split)}, {split_t});
  w.node("Transpose", w.fresh(op.name + "/Transpose"), {split_t}, {moved}).ints("perm", perm);
  w.node("Reshape", op.name, {moved, w.int64s(op.name + ".shape", x.shape)}, {out(w, op)});
}

}  // namespace

OpDefinition define_channel_shuffle() {
  OpDefinition d;
  d.kind = OpKind::channel_shuffle;
  d.fields = {{"groups", FieldKind::positive_int}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.shuffle_groups = f.get<int64_t>("groups").value_or(0);
  };
  d.saved = {{}, false, {}};
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"groups", op.shuffle_groups}}; };
  d.infer = [](const Graph& graph, Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const int64_t c = in.channels(), g = op.shuffle_groups;
    require_at(g >= 1, op.name, {"groups"}, "groups is required (ShuffleNetV2 shuffles 2 groups), an integer >= 1");
    require_at(c % g == 0, op.name, {"groups"},
               "the input's " + std::to_string(c) + " channels are not divisible by groups " + std::to_string(g));
    return OpShape{in, {}, {}};
  };
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = channel_shuffle_onnx;
  d.peer_module = "ChannelShuffle";
  return d;
}

}  // namespace convbench
