// concat (along channels): two or more inputs; copies only, no FLOPs, nothing saved.
#include <algorithm>
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_concat() {
  OpDefinition d;
  d.kind = OpKind::concat;
  d.min_inputs = 2;
  d.max_inputs = -1;
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.infer = [](const Graph& graph, Op& op) {
    require(op.inputs.size() >= 2, op.name, "concat needs at least two inputs");
    const TensorDesc& first = graph.desc(op.inputs[0]);
    const std::string& first_name = graph.values[static_cast<size_t>(op.inputs[0])].name;
    OpShape s{first, {}, {}};
    for (size_t i = 1; i < op.inputs.size(); ++i) {
      const TensorDesc& d = graph.desc(op.inputs[i]);
      require(d.rank() == first.rank() && d.shape[0] == first.shape[0], op.name,
              "inputs must agree in every dim but channels: " + first.shape_string() + " vs " + d.shape_string());
      const ErrorSite site{"inputs", static_cast<int>(i)};
      require_at(std::equal(d.shape.begin() + 2, d.shape.end(), first.shape.begin() + 2), op.name, site,
                 "\"" + graph.values[static_cast<size_t>(op.inputs[i])].name + "\" is " + channels_and_spatial(d) +
                     " but \"" + first_name + "\" is " + channels_and_spatial(first) +
                     " (channels x spatial); concat needs equal spatial sizes");
      require_at(d.layout == first.layout, op.name, site,
                 "\"" + graph.values[static_cast<size_t>(op.inputs[i])].name + "\" is " +
                     std::string(to_string(d.layout)) + " but \"" + first_name + "\" is " +
                     std::string(to_string(first.layout)) +
                     "; concat needs one memory layout (convert one input with convert_layout)");
      s.output.shape[1] += d.channels();  // each <= 2^31: no overflow before the check
      require_at(s.output.shape[1] <= kMaxDimSize, op.name, site, "the concatenation has more than 2^31 channels");
    }
    return s;
  };
  // autocast: CPU autocast casts cat's inputs to the widest of them (its promote list); CUDA's
  // type promotion gives the same dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    std::vector<std::string> inputs;
    for (size_t k = 0; k < op.inputs.size(); ++k) inputs.push_back(onnx_export::in(w, op, k));
    w.node("Concat", op.name, inputs, {onnx_export::out(w, op)}).integer("axis", 1);
  };
  d.peer_module = "Concat";
  return d;
}

}  // namespace convbench
