// global_avg_pool (PyTorch's nn.AdaptiveAvgPool2d/3d(1)): the mean of each (n, c) plane, output
// (N, C, 1, ..., 1). Saves nothing: backward needs only the input's size (PyTorch 2's
// MeanBackward keeps the sizes; 1.13's keeps a reference to the input, no extra bytes when that is
// saved anyway). FLOPs as avg_pool's K per output, K the spatial size: one per input element
// forward and backward.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_global_avg_pool() {
  OpDefinition d;
  d.kind = OpKind::global_avg_pool;
  d.work = [](const WorkQuery& q) {
    const int64_t n = count_elements(q.graph.desc(q.op.inputs.at(0)));
    OpWork w;
    w.elementwise = {n, q.any_input_grad() ? n : 0, 0};
    return w;
  };
  d.infer = [](const Graph& graph, Op& op) {
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    for (size_t i = 2; i < s.output.shape.size(); ++i) s.output.shape[i] = 1;
    return s;
  };
  // autocast: adaptive_avg_pool / mean run in their input's dtype on both devices.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::unary(w, op, "GlobalAveragePool"); };
  d.peer_module = "nn.AdaptiveAvgPool2d";
  d.onnx_import = OnnxImport{.node = "GlobalAveragePool", .fields = {}};
  return d;
}

}  // namespace convbench
