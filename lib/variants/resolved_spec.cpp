#include "variants/resolved_spec.hpp"

#include <stdexcept>

#include "ops/op_registry.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

namespace {

using ojson = nlohmann::ordered_json;

const Op& op_named(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops)
    if (op.name == name) return op;
  throw std::logic_error("resolved spec: custom op \"" + name + "\" is not in its variant's graph");
}

// A custom op with every field its kind uses, taken from the graph the variant builder made of
// it (what the defaults resolved to, not what the file said), as its definition spells them.
ojson resolved_custom_op(const CustomOpSpec& s, const Graph& g) {
  ojson op = {{"op", s.op}, {"name", s.name}, {"inputs", s.inputs}};
  const Op& built = op_named(g, s.name);
  const OpDefinition& def = op_definition(built.kind);
  if (def.attributes) {
    const ojson attributes = def.attributes(built);  // kept alive while its items are read
    for (const auto& [key, value] : attributes.items()) op[key] = value;
  }
  return op;
}

ojson resolved_variant(const BlockSpec& block, const VariantSpec& v) {
  ojson out = {{"kind", v.kind}, {"name", v.name}};
  if (v.kind == "bottleneck") {
    out["ratio"] = v.ratio;
    out["groups"] = v.groups;
  } else if (v.kind == "grouped") {
    out["groups"] = v.groups;
  } else if (v.kind == "separable") {
    out["multiplier"] = v.multiplier;
  } else if (v.kind == "custom") {
    const Graph g = build_variant_graph(block, v);
    ojson ops = ojson::array();
    for (const CustomOpSpec& s : v.ops) ops.push_back(resolved_custom_op(s, g));
    out["ops"] = std::move(ops);
    out["output"] = v.output.empty() ? v.ops.back().name : v.output;
  }
  return out;
}

ojson resolved_block(const BlockSpec& b) {
  ojson point = ojson::object();
  for (const auto& [key, value] : b.point) point[key] = ojson::parse(value);
  ojson variants = ojson::array();
  for (const VariantSpec& v : b.variants) variants.push_back(resolved_variant(b, v));
  return {{"name", b.name},
          {"dims", b.dims},
          {"batch", b.batch},
          {"in_channels", b.in_channels},
          {"out_channels", b.out_channels},
          {"size", b.size},
          {"kernel", b.kernel},
          {"stride", b.stride},
          {"padding", b.padding},
          {"dilation", b.dilation},
          {"bias", b.bias},
          {"norm", std::string(to_string(b.norm))},
          {"norm_groups", b.norm_groups},
          {"act", std::string(to_string(b.act))},
          {"negative_slope", b.negative_slope},
          {"dropout", b.dropout},
          {"residual", b.residual},
          {"dtype", std::string(to_string(b.dtype))},
          {"layout", std::string(to_string(b.layout))},
          {"layout_conversion", std::string(to_string(b.layout_conversion))},
          {"mode", std::string(to_string(b.mode))},
          {"baseline", b.baseline},
          {"point", std::move(point)},
          {"point_label", point_label(b)},
          {"variants", std::move(variants)}};
}

}  // namespace

nlohmann::ordered_json resolved_spec_json(const Spec& spec) {
  ojson blocks = ojson::array();
  for (const BlockSpec& b : spec.blocks) blocks.push_back(resolved_block(b));
  return {{"schema", kResolvedSpecSchema},
          {"name", spec.name},
          {"file", spec.file},
          {"sha256", spec.sha256},
          {"blocks", std::move(blocks)}};
}

}  // namespace convbench
