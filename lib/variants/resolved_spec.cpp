#include "variants/resolved_spec.hpp"

#include <stdexcept>

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
// it: what the defaults resolved to, not what the file said.
ojson resolved_custom_op(const CustomOpSpec& s, const Graph& g, int dims) {
  ojson op = {{"op", s.op}, {"name", s.name}, {"inputs", s.inputs}};
  const Op& built = op_named(g, s.name);
  switch (built.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose: {
      const ConvAttrs& a = built.conv;
      op["out_channels"] = a.out_channels;
      op["kernel"] = a.kernel;
      op["stride"] = a.stride;
      op["padding"] = a.padding;
      op["dilation"] = a.dilation;
      if (built.kind == OpKind::conv_transpose)
        op["output_padding"] = a.output_padding.empty() ? std::vector<int64_t>(dims, 0) : a.output_padding;
      op["groups"] = a.groups;
      op["bias"] = a.bias;
      break;
    }
    case OpKind::max_pool:
    case OpKind::avg_pool:
      op["kernel"] = built.pool.kernel;
      op["stride"] = built.pool.stride;
      op["padding"] = built.pool.padding;
      break;
    case OpKind::group_norm: op["norm_groups"] = built.norm.groups; break;
    case OpKind::leaky_relu: op["negative_slope"] = built.negative_slope; break;
    case OpKind::dropout: op["p"] = built.dropout_p; break;
    case OpKind::upsample: op["scale"] = built.upsample_scale; break;
    case OpKind::batch_norm:
    case OpKind::relu:
    case OpKind::add:
    case OpKind::sub:
    case OpKind::concat: break;
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
    for (const CustomOpSpec& s : v.ops) ops.push_back(resolved_custom_op(s, g, block.dims));
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
