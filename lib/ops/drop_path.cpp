// drop_path (per-sample stochastic depth: torchvision's StochasticDepth(p, "row"), timm's
// DropPath): drops a whole sample n of a residual branch, keeping it when dropout_keep(n, seed, p)
// (dropout's Philox rule indexed by sample) and scaling kept samples by 1/(1-p). Forward saves what
// both modules' `x * noise` keeps for backward: the noise, one value per sample of shape
// (N, 1, ..., 1) in the input's dtype (0 or 1/(1-p)). In inference it is the identity; 1 FLOP per
// element each way, as the other dropouts.
//
// p has no default: torchvision requires it, and EfficientNet's and ConvNeXt's rates differ per
// block (a linear ramp), so a spec says it.
#include "ops/dropout_family.hpp"
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {
constexpr double kMissing = -1.0;
}

OpDefinition define_drop_path() {
  OpDefinition d = dropout_family_definition(OpKind::drop_path);
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.dropout_p = f.get<double>("p").value_or(kMissing);
  };
  const auto family_infer = d.infer;
  d.infer = [family_infer](const Graph& graph, Op& op) {
    require_at(op.dropout_p != kMissing, op.name, {"p"},
               "p (the probability of dropping a sample's whole branch, as StochasticDepth's p) is required");
    // With p = 0, StochasticDepth and timm's DropPath return their input in training too and save
    // nothing (ConvNeXt's first block): the op would keep a noise they do not.
    require_at(op.dropout_p > 0.0, op.name, {"p"},
               "p = 0 drops nothing: StochasticDepth and DropPath then return their input and save nothing; leave "
               "the op out");
    return family_infer(graph, op);
  };
  d.aux = [](const Graph& graph, const Op& op) { return unit_noise(graph, op, 1); };
  d.aux_names = {"noise"};
  // The identity in inference, where StochasticDepth returns its input and writes no node.
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::unary(w, op, "Identity"); };
  d.peer_module = "StochasticDepth";
  return d;
}

}  // namespace convbench
