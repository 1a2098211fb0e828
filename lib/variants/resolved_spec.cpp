#include "variants/resolved_spec.hpp"

#include <stdexcept>

#include "ops/op_json.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/network_spec.hpp"
#include "spec/source_tree.hpp"
#include "variants/folded_variant.hpp"
#include "variants/network_builder.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

namespace {

using ojson = nlohmann::ordered_json;

// The folded graph: its ops with their resolved attributes, which source ops each folded conv
// replaces, and why the others stay.
void add_fold(const BlockSpec& block, const VariantSpec& v, ojson& out) {
  const FoldResult r = build_folded_variant(block, v);
  ojson ops = ojson::array();
  for (const Op& op : r.graph.ops) {
    ojson o = {{"op", std::string(to_string(op.kind))}, {"name", op.name}};
    o["inputs"] = op_input_names(r.graph, op);
    add_op_attributes(op, o);
    ops.push_back(std::move(o));
  }
  out["folded_ops"] = std::move(ops);
  ojson folds = ojson::array();
  for (const FoldedConv& c : r.convs) folds.push_back({{"conv", c.name}, {"replaces", c.ops}});
  out["folds"] = std::move(folds);
  out["kept"] = r.kept;
}

// A variant's precision (its own, else the block's), only where it is an AMP mode: every spec
// written before mixed precision keeps its resolved form.
void add_precision(const BlockSpec& block, const VariantSpec& v, ojson& out) {
  if (const Precision p = precision_of(block, v).precision; p != Precision::plain)
    out["precision"] = std::string(to_string(p));
}

ojson resolved_variant(const BlockSpec& block, const VariantSpec& v) {
  ojson out = {{"kind", v.kind}, {"name", v.name}};
  const BlockKindDefinition& kind = block_kind(v.kind);
  if (kind.resolved)
    kind.resolved(
        v, [&] { return build_plain_variant_graph(block, v); }, out);
  if (kind.folds_another) add_fold(block, v, out);
  out["memory_policy"] = std::string(to_string(memory_policy_of(block, v).policy));  // the variant's, else the block's
  add_precision(block, v, out);
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
          {"memory_policy", std::string(to_string(b.memory_policy.policy))},
          {"baseline", b.baseline},
          {"point", std::move(point)},
          {"point_label", point_label(b)},
          {"variants", std::move(variants)}};
}

ojson as_written(const Field& f) { return ojson::parse(to_compact_json(f.node())); }

// A stage's entries as written, with every unit instance's args completed by the unit's defaults.
ojson entries_with_args(const Field& entries, const std::optional<Field>& units) {
  ojson out = ojson::array();
  for (const Field& e : entries.items()) {
    ojson entry = as_written(e);
    const auto unit = e.get("unit");
    const std::optional<Field> def = unit && units ? units->get(unit->node().text) : std::nullopt;
    if (def && def->get("params")) {
      ojson args = e.get("args") ? as_written(*e.get("args")) : ojson::object();
      for (const auto& [key, value] : def->get("params")->entries())
        if (!args.contains(key)) args[key] = as_written(value);
      entry["args"] = std::move(args);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// A network: its fields with defaults filled, its units and stages as written (args completed),
// and per variant the expansion (every op with its name, kind, inputs and attributes), so that an
// independent expander can be checked against it op by op.
ojson resolved_network(const BlockSpec& b) {
  const NetworkSpec& n = *b.network;
  const Field net = n.field();
  ojson point = ojson::object();
  for (const auto& [key, value] : b.point) point[key] = ojson::parse(value);
  ojson variants = ojson::array();
  for (const VariantSpec& v : b.variants) {
    ojson out = {{"kind", v.kind}, {"name", v.name}};
    const BlockKindDefinition& kind = block_kind(v.kind);
    if (kind.resolved) kind.resolved(v, {}, out);  // no graph: the slots differ
    for (const Field& f : net.get("variants")->items())
      if (f.is_map() && f.get("ops") && f.get("name") && f.get("name")->node().text == v.name) {
        out["ops"] = as_written(*f.get("ops"));
        if (f.get("output")) out["output"] = as_written(*f.get("output"));
      }
    out["fills"] = v.fills;
    out["memory_policy"] = std::string(to_string(memory_policy_of(b, v).policy));
    add_precision(b, v, out);
    const Graph g = build_variant_graph(b, v);
    out["output_shape"] = g.desc(g.output).shape;
    out["expanded_ops"] = expanded_ops_json(g);
    variants.push_back(std::move(out));
  }
  const auto units = net.get("units");
  ojson units_json = ojson::object();
  if (units)
    for (const auto& [name, unit] : units->entries()) {
      ojson u = {{"params", unit.get("params") ? as_written(*unit.get("params")) : ojson::object()},
                 {"ops", entries_with_args(*unit.get("ops"), units)}};
      units_json[name] = std::move(u);
    }
  ojson stages = ojson::array();
  for (const Field& st : net.get("stages")->items())
    stages.push_back({{"name", st.get("name")->node().text}, {"ops", entries_with_args(*st.get("ops"), units)}});
  return {{"name", b.name},
          {"kind", "network"},
          {"dims", b.dims},
          {"batch", b.batch},
          {"in_channels", b.in_channels},
          {"size", b.size},
          {"kernel", b.kernel},
          {"padding", n.padding ? ojson(*n.padding) : ojson("same")},
          {"dilation", b.dilation},
          {"bias", b.bias},
          {"norm", std::string(to_string(b.norm))},
          {"norm_groups", b.norm_groups},
          {"act", std::string(to_string(b.act))},
          {"negative_slope", b.negative_slope},
          {"dropout", b.dropout},
          {"dropout_kind", std::string(to_string(n.dropout_kind))},
          {"dtype", std::string(to_string(b.dtype))},
          {"layout", std::string(to_string(b.layout))},
          {"mode", std::string(to_string(b.mode))},
          {"memory_policy", std::string(to_string(b.memory_policy.policy))},
          {"baseline", b.baseline},
          {"point", std::move(point)},
          {"point_label", point_label(b)},
          {"units", std::move(units_json)},
          {"stages", std::move(stages)},
          {"variants", std::move(variants)}};
}

}  // namespace

nlohmann::ordered_json resolved_spec_json(const Spec& spec) {
  ojson blocks = ojson::array();
  ojson networks = ojson::array();
  for (const BlockSpec& b : spec.blocks) {
    if (b.network)
      networks.push_back(resolved_network(b));
    else
      blocks.push_back(resolved_block(b));
  }
  ojson out = {{"schema", kResolvedSpecSchema},
               {"name", spec.name},
               {"file", spec.file},
               {"sha256", spec.sha256},
               {"blocks", std::move(blocks)}};
  // Only specs with networks have the key, so block-only resolved specs stay as they were.
  if (!networks.empty()) out["networks"] = std::move(networks);
  return out;
}

}  // namespace convbench
