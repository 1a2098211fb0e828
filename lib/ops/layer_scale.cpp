// layer_scale: y = weight[c] * x, a learned scale per channel (ConvNeXt's `layer_scale * x`, with
// layer_scale of shape (C, 1, 1) started at 1e-6; timm's LayerScale2d). Backward keeps the input
// for the weight's gradient, as PyTorch's mul keeps the operand the other one's gradient needs (the
// parameter is resident anyway). FLOPs: 1 per element forward; backward 1 per element for the
// input's gradient, and 2 per element for the weight's (the product and its sum over N and space).
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_layer_scale() {
  OpDefinition d;
  d.kind = OpKind::layer_scale;
  d.saved = {{0}, false, {}};
  d.work = [](const WorkQuery& q) {
    const int64_t n = q.output_elements();
    OpWork w;
    w.elementwise = {n, q.any_input_grad() ? n : 0, checked_mul(n, 2)};
    return w;
  };
  d.infer = [](const Graph& graph, Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    OpShape s{in, {}, {}};
    s.params = {{"weight", {in.channels()}, 1, ParamInit::layer_scale}};
    return s;
  };
  // No autocast class: under torch.autocast PyTorch's `layer_scale * x` promotes a lower-precision
  // x to float32 by its float32 parameter, which changes the dtype of everything after it; until
  // the autocast transform models that, a mixed-precision variant with a layer_scale is refused.
  d.traits = OpTraits{};
  // ConvNeXt's `layer_scale * x` as it exports: Mul by the (C, 1, ...) parameter.
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    using namespace onnx_export;
    std::vector<int64_t> shape(static_cast<size_t>(in_desc(w, op).rank() - 1), 1);
    const Param& weight = w.graph.params.at(static_cast<size_t>(op.params.at(0)));
    shape[0] = weight.desc.numel();
    w.node("Mul", op.name, {w.weights(weight.name, shape, w.param(op.params.at(0))), in(w, op)}, {out(w, op)});
  };
  d.peer_module = "LayerScale";
  return d;
}

}  // namespace convbench
