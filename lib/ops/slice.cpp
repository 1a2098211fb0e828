// slice (along channels): channels [start, start + length) of the input, (N, length, spatial).
// convbench materialises the slice (a copy), where PyTorch's x[:, a:b] is a view of x's storage;
// backward writes the output's gradient into those channels of a zeroed input gradient. Nothing
// saved, no FLOPs (data movement). A channel split into k parts is k slices.
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_slice() {
  OpDefinition d;
  d.kind = OpKind::slice;
  d.fields = {{"start", FieldKind::nonneg_int}, {"length", FieldKind::positive_int}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.slice.start = f.get<int64_t>("start").value_or(0);
    op.slice.length = f.get<int64_t>("length").value_or(0);  // required: infer says so
  };
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.attributes = [](const Op& op) {
    return nlohmann::ordered_json{{"start", op.slice.start}, {"length", op.slice.length}};
  };
  d.infer = [](const Graph& graph, Op& op) {
    const SliceAttrs& a = op.slice;
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    require_at(a.length >= 1, op.name, {"length"},
               "length (the number of channels to take, >= 1) is required; the input has " +
                   std::to_string(in.channels()) + " channels");
    require_at(a.start >= 0, op.name, {"start"}, "start must be >= 0");
    require_at(a.start + a.length <= in.channels(), op.name, {"length"},
               "channels [" + std::to_string(a.start) + ", " + std::to_string(a.start + a.length) +
                   ") run past the input's " + std::to_string(in.channels()) + " channels (start " +
                   std::to_string(a.start) + " + length " + std::to_string(a.length) + ")");
    OpShape s{in, {}, {}};
    s.output.shape[1] = a.length;
    return s;
  };
  // autocast: a copy in its input's dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    using namespace onnx_export;
    w.node("Slice", op.name,
           {in(w, op), w.int64s(op.name + ".starts", {op.slice.start}),
            w.int64s(op.name + ".ends", {op.slice.start + op.slice.length}), w.int64s(op.name + ".axes", {1})},
           {out(w, op)});
  };
  d.peer_module = "Slice";
  return d;
}

}  // namespace convbench
