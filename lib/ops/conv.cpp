// conv and conv_transpose: weight (and bias) parameters; backward reads the input; MACs
// N x Cout x Cin/groups x K x P, with P the output's spatial size, or the input's for a
// transposed conv (each input point meets the whole kernel).
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

OpDefinition conv_like(OpKind kind, std::vector<std::string> fields) {
  OpDefinition d;
  d.kind = kind;
  d.spec_fields = std::move(fields);
  d.saved = {{0}, false};
  d.work = [kind](const WorkQuery& q) {
    const TensorDesc& in = q.graph.desc(q.op.inputs.at(0));
    const TensorDesc& out = q.graph.desc(q.op.output);
    const int64_t spatial = kind == OpKind::conv ? out.spatial_size() : in.spatial_size();
    const int64_t macs =
        checked_mul(checked_mul(checked_mul(checked_mul(in.batch(), out.channels()), in.channels() / q.op.conv.groups),
                                count_product(q.op.conv.kernel)),
                    spatial);
    OpWork w;
    w.macs = {macs, q.input_requires_grad.at(0) ? macs : 0, macs};
    if (q.op.conv.bias) w.elementwise = {q.output_elements(), 0, q.output_elements()};  // add; gradient sum
    return w;
  };
  d.attributes = [kind](const Op& op) {
    const ConvAttrs& a = op.conv;
    nlohmann::ordered_json j = {{"out_channels", a.out_channels},
                                {"kernel", a.kernel},
                                {"stride", a.stride},
                                {"padding", a.padding},
                                {"dilation", a.dilation}};
    if (kind == OpKind::conv_transpose)
      j["output_padding"] = a.output_padding.empty() ? std::vector<int64_t>(a.kernel.size(), 0) : a.output_padding;
    j["groups"] = a.groups;
    j["bias"] = a.bias;
    return j;
  };
  return d;
}

const std::vector<std::string> kConvFields = {"out_channels", "kernel", "stride", "padding",
                                              "dilation",     "groups", "bias"};

}  // namespace

OpDefinition define_conv() { return conv_like(OpKind::conv, kConvFields); }

OpDefinition define_conv_transpose() {
  std::vector<std::string> fields = kConvFields;
  fields.push_back("output_padding");
  return conv_like(OpKind::conv_transpose, fields);
}

}  // namespace convbench
