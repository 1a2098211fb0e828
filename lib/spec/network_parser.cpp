#include "spec/network_parser.hpp"

#include <algorithm>
#include <map>

#include "spec/block_fields.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/suggest.hpp"
#include "spec/variant_parser.hpp"

namespace convbench {
namespace {

// A network's variant: the kind and its parameters. Whether they fit a slot's channels is
// checked per slot when the network is expanded (the slots differ in channels).
// A kind networks do not take says why, before the list of those they take.
void refuse_block_only_kind(const Field& at, const std::string& name) {
  if (const BlockKindDefinition* kind = find_block_kind(name); kind && !kind->not_in_networks.empty())
    at.fail(kind->not_in_networks);
}

VariantSpec parse_network_variant(const Field& v) {
  VariantSpec out;
  out.key_path = v.path();
  out.where = v.where();
  const std::vector<std::string> kinds = block_kind_names(true);
  if (v.is_string()) refuse_block_only_kind(v, v.node().text);
  if (v.is_map())
    if (const auto kind = v.get("kind"); kind && kind->is_string()) refuse_block_only_kind(*kind, kind->node().text);
  if (v.is_string()) {
    const BlockKindDefinition& kind = block_kind(v.as_choice(kinds, "variant kind"));
    out.kind = kind.name;
    if (kind.required) v.fail_missing(kind.required->key, " (write the variant as " + kind.required->written_as + ")");
    out.name = out.kind;
    return out;
  }
  if (!v.is_map()) v.fail("expected a variant kind or a map with `kind`, got " + v.describe());
  const auto kind_field = v.get("kind");
  if (!kind_field) v.fail_missing("kind", " (one of " + join_alternatives(kinds) + ")");
  const BlockKindDefinition& kind = block_kind(kind_field->as_choice(kinds, "variant kind"));
  out.kind = kind.name;
  std::vector<std::string> keys = {"kind", "name"};
  keys.insert(keys.end(), kind.keys.begin(), kind.keys.end());
  keys.insert(keys.end(), {"fills", "memory_policy", "precision"});
  v.check_keys(keys, " for a " + out.kind + " variant in a network");
  out.name = out.kind;
  if (auto name = v.get("name")) out.name = name->as_string();
  if (kind.read) kind.read(v, nullptr, out);
  if (auto fills = v.get("fills")) {
    for (const Field& c : fills->non_empty_list("slot classes")) {
      const std::string cls = c.as_string();
      if (std::find(out.fills.begin(), out.fills.end(), cls) != out.fills.end())
        c.fail("slot class \"" + cls + "\" is listed twice");
      out.fills.push_back(cls);
    }
  }
  if (auto f = v.get("memory_policy")) out.memory_policy = read_memory_policy(*f);
  if (auto f = v.get("precision")) out.precision = read_precision(*f);
  return out;
}

// Units and stages: the structure every expansion relies on, checked once here.
void check_units(const Field& network) {
  const auto units = network.get("units");
  if (!units) return;
  if (!units->is_map()) units->fail("expected a map of unit name -> {params, ops}, got " + units->describe());
  for (const auto& [name, unit] : units->entries()) {
    if (name.find('.') != std::string::npos || name.empty())
      unit.fail("a unit name cannot be empty or contain '.', got \"" + name + "\"");
    if (!unit.is_map()) unit.fail("expected a map with `ops` (and optionally `params`), got " + unit.describe());
    unit.check_keys({"params", "ops"}, " in a unit");
    if (auto params = unit.get("params"))
      if (!params->is_map())
        params->fail("expected a map of parameter -> default value (or `required`), got " + params->describe());
    if (!unit.get("ops")) unit.fail_missing("ops", " (the unit's entries)");
    unit.get("ops")->non_empty_list("unit entries");
  }
}

void check_stages(const Field& network) {
  const auto stages = network.get("stages");
  if (!stages) network.fail_missing("stages", " (the network's stages, in order)");
  std::map<std::string, std::string> seen;
  for (const Field& stage : stages->non_empty_list("stages")) {
    if (!stage.is_map()) stage.fail("expected a map with `name` and `ops`, got " + stage.describe());
    stage.check_keys({"name", "ops"}, " in a stage");
    const auto name = stage.get("name");
    if (!name) stage.fail_missing("name", " (the first component of its ops' names)");
    const std::string text = name->as_string();
    if (text == "input") name->fail("\"input\" is the network input; give the stage another name");
    if (text.find('.') != std::string::npos) name->fail("a stage name cannot contain '.', got \"" + text + "\"");
    if (const auto [it, inserted] = seen.emplace(text, stage.path()); !inserted)
      name->fail("duplicate stage name \"" + text + "\" (" + it->second + " has it too)");
    if (!stage.get("ops")) stage.fail_missing("ops", " (the stage's entries)");
    stage.get("ops")->non_empty_list("stage entries");
  }
}

}  // namespace

BlockSpec parse_network(const Field& network, const std::shared_ptr<const SourceNode>& tree,
                        const std::vector<std::pair<std::string, Field>>& point, int64_t max_ops) {
  if (!network.is_map()) network.fail("expected a map of network fields, got " + network.describe());
  network.check_keys(network_fields(), " in a network");
  const auto find = [&](const std::string& key) -> std::optional<Field> {
    for (const auto& [k, v] : point)
      if (k == key) return v;
    return network.get(key);
  };
  const auto require = [&](const std::string& key) {
    if (auto f = find(key)) return *f;
    network.fail_missing(key);
  };

  auto spec = std::make_shared<NetworkSpec>();
  spec->tree = tree;
  spec->file = network.file();
  spec->node = &network.node();
  spec->key_path = network.path();
  spec->max_ops = max_ops;

  BlockSpec b;
  const auto name = network.get("name");
  if (!name) network.fail_missing("name", " (every network needs a unique name)");
  b.name = name->as_string();
  b.key_path = network.path();
  b.where = network.where();
  for (const auto& [key, value] : point) b.point.emplace_back(key, to_compact_json(value.node()));
  if (auto f = find("dims")) {
    const int64_t dims = f->as_int(1);
    if (dims != 2 && dims != 3) f->fail("dims must be 2 or 3, got " + std::to_string(dims));
    b.dims = static_cast<int>(dims);
  }
  b.batch = require("batch").as_int(1);
  b.in_channels = require("in_channels").as_int(1);
  b.size = require("size").as_per_dim(b.dims, 1);
  b.kernel = find("kernel") ? find("kernel")->as_per_dim(b.dims, 1) : std::vector<int64_t>(b.size.size(), 3);
  b.stride = std::vector<int64_t>(b.size.size(), 1);
  b.dilation = find("dilation") ? find("dilation")->as_per_dim(b.dims, 1) : std::vector<int64_t>(b.size.size(), 1);
  if (auto f = find("padding")) spec->padding = f->as_padding(b.dims);
  b.padding = spec->padding.value_or(std::vector<int64_t>{});
  if (!spec->padding)
    for (int d = 0; d < b.dims; ++d) b.padding.push_back(b.dilation[d] * (b.kernel[d] - 1) / 2);
  read_layer_fields(find, b);
  if (auto f = find("dropout_kind")) spec->dropout_kind = f->as_enum(dropout_kind_words(), "dropout_kind");
  read_run_fields(find, b);
  std::vector<int64_t> input = {b.batch, b.in_channels};
  input.insert(input.end(), b.size.begin(), b.size.end());
  if (!checked_product(input))
    network.fail("the network's input tensor " + shape_text(input) + " has more elements than int64 can count");

  check_units(network);
  check_stages(network);

  const std::vector<Field> variants = require("variants").non_empty_list("variants");
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    VariantSpec v = parse_network_variant(variants[i]);
    if (const auto [it, inserted] = index.emplace(v.name, i); !inserted)
      variants[i]
          .get("name")
          .value_or(variants[i])
          .fail("duplicate variant name \"" + v.name + "\" (variants[" +
                std::to_string(static_cast<int64_t>(it->second)) + "] has it too); give each variant its own `name:`");
    b.variants.push_back(std::move(v));
  }
  b.baseline = b.variants.front().name;
  if (auto f = network.get("baseline")) {
    b.baseline = f->as_string();
    std::vector<std::string> names;
    for (const VariantSpec& v : b.variants) names.push_back(v.name);
    if (!index.count(b.baseline))
      f->fail("baseline \"" + b.baseline + "\" is not a variant of this network (variants: " +
              join_alternatives(names) + ")" + did_you_mean(b.baseline, names));
  }
  b.network = std::move(spec);
  return b;
}

const EnumWords<DropoutKind>& dropout_kind_words() {
  static const EnumWords<DropoutKind> words = {{.value = DropoutKind::element, .word = "element"},
                                               {.value = DropoutKind::channel, .word = "channel"}};
  return words;
}

std::string_view to_string(DropoutKind kind) { return word_of(dropout_kind_words(), kind); }

}  // namespace convbench
