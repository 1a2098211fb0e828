// batch_norm_act: batch norm followed by leaky ReLU as one op, which saves only its output and
// the per-channel statistics (Inplace-ABN, Rota Bulo et al., CVPR 2018; memory policy
// inplace_abn makes it from each batch_norm -> leaky_relu pair, and runs it in place where
// autograd allows). Backward inverts the activation, z = y where y > 0 and y / negative_slope
// elsewhere, recovers the normalised input xhat = (z - beta) / gamma, and runs batch norm's
// backward from xhat: so negative_slope must be positive (ReLU's output says nothing about where
// it was 0), and a gamma near 0 loses precision in xhat (the paper's caveat).
//
// FLOPs per element: forward batch norm's (5 in training, 2 in inference) + leaky ReLU's 2;
// backward-data batch norm's 6; backward-weight batch norm's 3 + the activation's gradient 2 +
// the inversion 3 (z: 1, xhat: 2), which the weight gradients need even when the input needs none.
#include <sstream>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_batch_norm_act() {
  OpDefinition d;
  d.kind = OpKind::batch_norm_act;
  d.fields = {{"negative_slope", FieldKind::number}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.negative_slope = f.get<double>("negative_slope").value_or(0.01);  // leaky_relu's default
  };
  d.saved = {{}, true, {}};
  d.aux = [](const Graph& graph, const Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const TensorDesc stats{{in.channels()}, stats_dtype(in.dtype), Layout::channels_first};
    return std::vector<TensorDesc>{stats, stats};
  };
  d.aux_names = {"mean", "inverse std"};
  d.pytorch_counter_elements = 1;  // InPlaceABN's num_batches_tracked, as BatchNorm's
  d.work = [](const WorkQuery& q) {
    const int64_t n = q.output_elements();
    OpWork w;
    w.elementwise = {checked_mul(n, q.training ? 7 : 4), q.any_input_grad() ? checked_mul(n, 6) : 0, checked_mul(n, 8)};
    return w;
  };
  d.infer = [](const Graph& graph, Op& op) {
    std::ostringstream slope;
    slope << op.negative_slope;
    require_at(op.negative_slope > 0, op.name, {"negative_slope"},
               "negative_slope must be positive (backward divides the negative outputs by it to recover its input), "
               "got " +
                   slope.str());
    const int64_t c = graph.desc(op.inputs.at(0)).channels();
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    s.params = {{"weight", {c}, 1, ParamInit::ones}, {"bias", {c}, 1, ParamInit::zeros}};
    s.buffers = {{"running_mean", {c}, 1, ParamInit::zeros}, {"running_var", {c}, 1, ParamInit::ones}};
    return s;
  };
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"negative_slope", op.negative_slope}}; };
  // In place it still saves its output, from which backward recovers its input (infer refuses a
  // slope that is not positive). No activation for inplace_act: inplace_abn makes it, runs it in place.
  // autocast: as batch_norm (Inplace-ABN's batch norm), the activation following its dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits =
      OpTraits{.activation = false, .in_place_safe = [](const Op&) { return true; }, .conv_epilogue = std::nullopt};
  // Inplace-ABN's fused op: the norm, then its leaky ReLU.
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    using namespace onnx_export;
    const std::string normed = batch_norm_node(w, op, w.fresh(op.name + "/normalized"));
    w.node("LeakyRelu", w.fresh(op.name + "/LeakyRelu"), {normed}, {out(w, op)}).number("alpha", op.negative_slope);
  };
  d.peer_module = "InPlaceABN";
  return d;
}

}  // namespace convbench
