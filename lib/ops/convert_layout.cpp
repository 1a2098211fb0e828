// convert_layout: the same logical tensor in the other memory order (channels-first <->
// channels-last), as PyTorch's x.contiguous(memory_format=...) at a block's boundary. A copy: no
// FLOPs and nothing saved; its backward converts the output's gradient back to the input's order.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_convert_layout() {
  OpDefinition d;
  d.kind = OpKind::convert_layout;
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.infer = [](const Graph& graph, Op& op) {
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    require(s.output.rank() >= 3, op.name,
            "converts activations (N, C, spatial...), got rank " + std::to_string(s.output.rank()));
    s.output.layout = other_layout(s.output.layout);
    return s;
  };
  // autocast: a copy in its input's dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits =
      OpTraits{.activation = false, .in_place_safe = nullptr, .changes_layout = true, .conv_epilogue = std::nullopt};
  // ONNX tensors are logical NCHW: a layout change is no change there.
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::unary(w, op, "Identity"); };
  d.peer_module = "ToMemoryFormat";
  return d;
}

}  // namespace convbench
