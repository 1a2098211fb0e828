#include "spec/spec_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "ops/graph_builder.hpp"
#include "spec/block_fields.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/model_file_spec.hpp"
#include "spec/network_parser.hpp"
#include "spec/source_tree.hpp"
#include "spec/spec_field.hpp"
#include "spec/suggest.hpp"
#include "spec/utf8_error.hpp"
#include "spec/variant_parser.hpp"
#include "util/input_file.hpp"
#include "util/utf8.hpp"

namespace convbench {
namespace {

const std::vector<std::string> kTopKeys = {"name", "defaults", "blocks", "networks", "sweep"};

// A sweep this large is a typo, not a benchmark; refusing it keeps memory bounded.
constexpr int64_t kMaxExpandedBlocks = 100'000;

std::string count(int64_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

using SweepPoint = std::vector<std::pair<std::string, Field>>;

struct SweepAxis {
  std::string key;
  std::vector<Field> values;
};

// Resolves the fields of one block at one sweep point: the swept value wins, then the block's
// own value, then `defaults`, then the built-in default.
class BlockResolver {
 public:
  BlockResolver(const Field& block, const std::optional<Field>& defaults, const SweepPoint& point)
      : block_(block), defaults_(defaults), point_(point) {}

  BlockSpec resolve() {
    BlockSpec b;
    b.name = block_.get("name")->as_string();
    b.key_path = block_.path();
    b.where = block_.where();
    for (const auto& [key, value] : point_) b.point.emplace_back(key, to_compact_json(value.node()));

    if (auto f = find("dims")) {
      const int64_t dims = f->as_int(1);
      if (dims != 2 && dims != 3) f->fail("dims must be 2 or 3, got " + std::to_string(dims));
      b.dims = static_cast<int>(dims);
    }
    const int dims = b.dims;
    b.batch = require("batch").as_int(1);
    b.in_channels = require("in_channels").as_int(1);
    b.out_channels = require("out_channels").as_int(1);
    b.size = require("size").as_per_dim(dims, 1);
    b.kernel = per_dim_or("kernel", dims, 1, 3);
    b.stride = per_dim_or("stride", dims, 1, 1);
    b.dilation = per_dim_or("dilation", dims, 1, 1);
    std::optional<std::vector<int64_t>> padding;
    if (auto f = find("padding")) padding = f->as_padding(dims);
    if (padding) {
      b.padding = *padding;
    } else {  // "same": keeps the size at stride 1 for odd kernels
      for (int d = 0; d < dims; ++d) b.padding.push_back(b.dilation[d] * (b.kernel[d] - 1) / 2);
    }
    read_layer_fields([this](const std::string& key) { return find(key); }, b);
    if (auto f = find("residual")) b.residual = f->as_bool();
    if (auto f = find("layout_conversion"))
      b.layout_conversion = f->as_enum(layout_conversion_words(), "layout_conversion");
    read_run_fields([this](const std::string& key) { return find(key); }, b);

    check_window(b);
    check_norm(b);
    check_tensor_sizes(b);

    ParsedVariants parsed = parse_variants(require("variants"), b);
    b.variants = std::move(parsed.variants);
    b.unreadable = std::move(parsed.unreadable);
    const auto baseline_field = find("baseline");
    // The first variant in the file, read or not, is the baseline unless one is named.
    b.baseline = baseline_field ? baseline_field->as_string() : parsed.first;
    for (const UnreadableVariant& u : b.unreadable)
      if (u.name == b.baseline || b.variants.empty())
        throw InputError(
            u.error.where(), u.error.key_path(),
            u.error.message() + (u.name == b.baseline ? " (this variant is the block's baseline, which every other is "
                                                        "compared with: it has to be read)"
                                                      : " (no variant of this block could be read)"));
    if (baseline_field) {
      std::vector<std::string> names;
      for (const VariantSpec& v : b.variants) names.push_back(v.name);
      if (std::find(names.begin(), names.end(), b.baseline) == names.end())
        baseline_field->fail("baseline \"" + b.baseline + "\" is not a variant of this block (variants: " +
                             join_alternatives(names) + ")" + did_you_mean(b.baseline, names));
    }
    return b;
  }

 private:
  std::optional<Field> find(const std::string& key) const {
    for (const auto& [k, v] : point_)
      if (k == key) return v;
    if (auto f = block_.get(key)) return f;
    if (defaults_) return defaults_->get(key);
    return std::nullopt;
  }

  Field locate(const std::string& key) const { return find(key).value_or(block_.locate(key)); }

  Field require(const std::string& key) const {
    if (auto f = find(key)) return *f;
    block_.fail_missing(key, " (set it in the block or in `defaults`)");
  }

  std::vector<int64_t> per_dim_or(const std::string& key, int dims, int64_t min, int64_t fallback) const {
    if (auto f = find(key)) return f->as_per_dim(dims, min);
    return std::vector<int64_t>(static_cast<std::size_t>(dims), fallback);
  }

  // The block's conv window must fit the padded input in every dim.
  void check_window(const BlockSpec& b) const {
    for (int d = 0; d < b.dims; ++d) {
      const int64_t span = b.dilation[d] * (b.kernel[d] - 1) + 1;  // <= 2^62: fits
      const int64_t padded = b.size[d] + 2 * b.padding[d];
      if (span > padded)
        locate("kernel").fail("kernel " + std::to_string(b.kernel[d]) +
                              (b.dilation[d] > 1 ? " with dilation " + std::to_string(b.dilation[d]) : "") + " spans " +
                              std::to_string(span) + " in dim " + std::to_string(d) + ", more than the padded input " +
                              std::to_string(padded) + " (size " + std::to_string(b.size[d]) + " + 2 x padding " +
                              std::to_string(b.padding[d]) + ")");
    }
  }

  void check_norm(const BlockSpec& b) const {
    if (b.norm != NormKind::group || b.out_channels % b.norm_groups == 0) return;
    const auto groups = find("norm_groups");
    groups.value_or(locate("norm"))
        .fail("group norm needs out_channels " + std::to_string(b.out_channels) + " divisible by norm_groups " +
              std::to_string(b.norm_groups) + (groups ? "" : " (the default; set norm_groups)"));
  }

  // Every count later code multiplies must fit in int64: the input, output and weight tensors.
  void check_tensor_sizes(const BlockSpec& b) const {
    std::vector<int64_t> input = {b.batch, b.in_channels}, output = {b.batch, b.out_channels};
    std::vector<int64_t> weight = {b.out_channels, b.in_channels};
    for (int d = 0; d < b.dims; ++d) {
      input.push_back(b.size[d]);
      output.push_back(window_output_size(b.size[d], b.kernel[d], b.stride[d], b.padding[d], b.dilation[d]));
      weight.push_back(b.kernel[d]);
    }
    for (const auto& [what, shape] :
         {std::pair{"input", input}, std::pair{"output", output}, std::pair{"weight", weight}}) {
      if (!checked_product(shape))
        block_.fail(std::string("the block's ") + what + " tensor " + shape_text(shape) +
                    " has more elements than int64 can count");
    }
  }

  const Field& block_;
  const std::optional<Field>& defaults_;
  const SweepPoint& point_;
};

bool path_within(const std::string& path, const std::string& prefix) {
  return path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[');
}

// An error in a value that several blocks or sweep points share says which one it failed for.
InputError with_context(const InputError& e, const Field& block, const std::string& label) {
  std::string note;
  if (!path_within(e.key_path(), block.path()))
    note = (path_within(block.path(), "networks") ? "network \"" : "block \"") + block.get("name")->node().text + "\"";
  if (!label.empty() && !path_within(e.key_path(), "sweep"))
    note += (note.empty() ? "" : ", ") + std::string("sweep point ") + label;
  if (note.empty()) return e;
  return InputError(e.where(), e.key_path(), e.message() + " (for " + note + ")");
}

std::optional<Field> read_defaults(const Field& root) {
  auto defaults = root.get("defaults");
  if (!defaults) return std::nullopt;
  if (!defaults->is_map()) defaults->fail("expected a map of block fields, got " + defaults->describe());
  defaults->check_keys(block_fields());
  if (auto name = defaults->get("name")) name->fail("a block name cannot have a default: every block names itself");
  return defaults;
}

// Sweeps from the command line, parsed like the file's; `trees` keeps their source nodes alive
// for the parse. A field the file sweeps too takes the command line's values in its place.
constexpr const char* kSweepFlag = "--sweep";

void apply_sweep_overrides(const SpecLimits& limits, std::vector<std::shared_ptr<const SourceNode>>& trees,
                           const std::string& flag_file, std::vector<SweepAxis>& axes) {
  std::vector<std::string> given;  // fields already swept by an earlier --sweep
  for (const auto& sweep_override : limits.sweep_overrides) {
    // Named, not bound: a lambda below captures the key (clang 14 cannot capture a binding).
    const std::string& key = sweep_override.first;
    const std::string& values_text = sweep_override.second;
    // Said, not echoed: "batch" and "batch=" reach here alike (the command line splits at '=').
    if (key.empty())
      throw InputError({"command line", 0, 0}, kSweepFlag,
                       "expected FIELD=V1,V2,... (e.g. batch=1,2,4), got no field before \"=" + values_text + "\"");
    if (values_text.empty())
      throw InputError({"command line", 0, 0}, kSweepFlag,
                       "expected FIELD=V1,V2,... (e.g. batch=1,2,4), got no values for \"" + key + "\"");
    if (std::find(sweepable_fields().begin(), sweepable_fields().end(), key) == sweepable_fields().end())
      throw InputError({"command line", 0, 0}, kSweepFlag,
                       "\"" + key + "\" is not a block field that can be swept (" + key + "=" + values_text + ")");
    // A field given twice is refused, as a spec's sweep map refuses a duplicate key: silently
    // keeping the last would run a sweep the user did not ask for (batch=1,2 then batch=4).
    if (std::find(given.begin(), given.end(), key) != given.end())
      throw InputError({"command line", 0, 0}, kSweepFlag,
                       "\"" + key + "\" is swept twice; give all its values in one --sweep (" + key + "=V1,V2,...)");
    given.push_back(key);
    // As the file must be: a stray byte would reach the results' sweep points after the run.
    if (find_invalid_utf8(values_text))
      throw InputError({"command line", 0, 0}, kSweepFlag,
                       "\"" + escape_invalid_utf8(key + "=" + values_text) + "\" is not valid UTF-8");
    trees.push_back(parse_source_tree("[" + values_text + "]", flag_file));
    const Field values(*trees.back(), "sweep." + key, flag_file);
    SweepAxis axis{key, values.non_empty_list("values to sweep")};
    auto same = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == key; });
    if (same != axes.end())
      *same = std::move(axis);
    else
      axes.push_back(std::move(axis));
  }
}

std::vector<SweepAxis> read_sweep(const Field& root) {
  std::vector<SweepAxis> axes;
  auto sweep = root.get("sweep");
  if (!sweep) return axes;
  if (!sweep->is_map()) sweep->fail("expected a map of block field -> list of values, got " + sweep->describe());
  for (const Field& key : sweep->keys())
    if (key.node().text == "name" || key.node().text == "variants")
      key.fail("\"" + key.node().text + "\" cannot be swept (sweep values apply to every block)");
  sweep->check_keys(sweepable_fields());
  for (const auto& [key, values] : sweep->entries()) axes.push_back({key, values.non_empty_list("values to sweep")});
  return axes;
}

// A value swept twice (batch=1,1,1) would run the same point again under the same label: results
// whose rows cannot be told apart, and runs nobody asked for. Refused at the repeat.
void check_distinct_values(const SweepAxis& axis) {
  std::map<std::string, size_t> seen;  // the value as compact JSON -> its first index
  for (size_t i = 0; i < axis.values.size(); ++i) {
    const std::string text = to_compact_json(axis.values[i].node());
    if (const auto [it, inserted] = seen.emplace(text, i); !inserted)
      axis.values[i].fail("the value " + text + " is swept twice (values " + std::to_string(it->second + 1) + " and " +
                          std::to_string(i + 1) + " of " + axis.key + "): each point runs once, give it once");
  }
}

SweepPoint sweep_point(const std::vector<SweepAxis>& axes, int64_t index) {
  // Mixed radix with the last axis fastest, so the first key varies slowest.
  std::vector<std::size_t> digits(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    digits[a] = static_cast<std::size_t>(index % static_cast<int64_t>(axes[a].values.size()));
    index /= static_cast<int64_t>(axes[a].values.size());
  }
  SweepPoint point;
  for (std::size_t a = 0; a < axes.size(); ++a) point.emplace_back(axes[a].key, axes[a].values[digits[a]]);
  return point;
}

// Sums of counts that may pass 2^63 - 1: they stop there, which is over every limit.
int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// The runs (block x sweep point x variant) the spec expands to, counted on the source tree before
// anything is built, so that a short file that multiplies out to millions of runs (an alias
// shared by every block, a long sweep) is refused at once instead of filling memory.
void check_work(const Field& root, const std::vector<Field>& blocks, const std::optional<Field>& defaults,
                int64_t points, const SpecLimits& limits) {
  int64_t variants = 0, ops = 0;
  for (const Field& block : blocks) {
    std::optional<Field> list = block.get("variants");
    if (!list && defaults) list = defaults->get("variants");
    if (!list || !list->is_sequence()) continue;  // reported where the block is read
    variants += static_cast<int64_t>(list->node().items.size());
    for (const int64_t count : counted_variant_ops(*list)) ops = saturating_add(ops, count);
  }
  // points and variants are below 2^31 (the sweep check, the document's size), so their product
  // fits; ops need not be (a branches variant counts 2 x its count), and saturates instead.
  const int64_t runs = points * variants;
  const int64_t all_ops = saturating_mul(points, ops);
  const int64_t max_ops = limits.max_runs * kMaxOpsPerRun;
  const Field at = root.get("sweep") ? *root.get("sweep") : root.locate("blocks");
  if (runs > limits.max_runs)
    at.fail("the spec expands to " + std::to_string(runs) + " runs (" +
            count(static_cast<int64_t>(blocks.size()), "block") + " x " + count(points, "sweep point") + ", " +
            std::to_string(variants) + " variants in all), more than the limit of " + std::to_string(limits.max_runs) +
            " (--max-runs raises it)");
  if (all_ops > max_ops)
    at.fail("the spec expands to " + std::to_string(runs) + " runs with up to " + std::to_string(all_ops) +
            " ops in all, more than the limit of " + std::to_string(max_ops) + " (" + std::to_string(kMaxOpsPerRun) +
            " per run of --max-runs " + std::to_string(limits.max_runs) + ", which raises it)");
}

// The largest count of any kind's variant: what a variant whose kind is not known yet counts (its
// kind is refused, with the kinds listed, when the variant is read).
int64_t largest_counted_ops(const Field& variant) {
  int64_t most = 0;
  for (const BlockKindDefinition* kind : block_kinds())
    if (kind->counted_ops) most = std::max(most, kind->counted_ops(variant));
  return most;
}

// A swept field must mean something for every block and network it is applied to: a sweep of
// out_channels in a file with a network, or of dropout_kind with a block, is refused at the
// sweep's key (or --sweep) rather than silently duplicating rows.
void check_sweep_applies(const Field& root, const std::vector<SweepAxis>& axes, bool has_blocks, bool has_networks) {
  for (const SweepAxis& axis : axes) {
    const bool block_field = is_block_sweepable(axis.key);
    std::string why;
    if (has_networks && !is_network_sweepable(axis.key))
      why = "\"" + axis.key +
            "\" is not a field a network has (a network's slots and units say it); it cannot be swept in a spec with "
            "networks";
    else if (has_blocks && !block_field)
      why = "\"" + axis.key + "\" is a network field only; it cannot be swept in a spec with blocks";
    if (why.empty()) continue;
    // From the file's `sweep` unless --sweep replaced it (its values then come from the flag).
    const auto sweep = root.get("sweep");
    if (sweep && axis.values.front().file() == root.file())
      for (const Field& key : sweep->keys())
        if (key.node().text == axis.key) key.fail(why);
    throw InputError({"command line", 0, 0}, kSweepFlag, why);
  }
}

Spec parse_root(const Field& root, const std::shared_ptr<const SourceNode>& tree, const SpecLimits& limits) {
  if (!root.is_map())
    root.fail(
        "the top level must be a map with `blocks` and/or `networks` (and optionally name, defaults, "
        "sweep), got " +
        root.describe());
  root.check_keys(kTopKeys);
  Spec spec;
  spec.file = root.file();
  spec.name = std::filesystem::path(root.file()).stem().string();
  if (auto name = root.get("name")) spec.name = name->as_string();

  const std::optional<Field> defaults = read_defaults(root);
  std::vector<SweepAxis> axes = read_sweep(root);
  std::vector<std::shared_ptr<const SourceNode>> override_trees;
  const std::string flag_file = kSweepFlag;
  apply_sweep_overrides(limits, override_trees, flag_file, axes);
  for (const SweepAxis& axis : axes) check_distinct_values(axis);
  const auto blocks_field = root.get("blocks");
  const auto networks_field = root.get("networks");
  if (!blocks_field && !networks_field)
    root.fail_missing("blocks", " (the list of blocks to compare; or `networks`, the networks to compare)");
  const std::vector<Field> blocks = blocks_field ? blocks_field->non_empty_list("blocks") : std::vector<Field>{};
  const std::vector<Field> networks =
      networks_field ? networks_field->non_empty_list("networks") : std::vector<Field>{};
  check_sweep_applies(root, axes, !blocks.empty(), !networks.empty());

  int64_t points = 1;
  for (const SweepAxis& axis : axes) {
    points *= static_cast<int64_t>(axis.values.size());  // stays below the limit: no overflow
    if (points * static_cast<int64_t>(blocks.size() + networks.size()) > kMaxExpandedBlocks) {
      const std::string why =
          "the sweep expands the blocks to more than " + std::to_string(kMaxExpandedBlocks) + " block runs";
      if (root.get("sweep")) root.get("sweep")->fail(why);
      throw InputError({"command line", 0, 0}, kSweepFlag, why);
    }
  }

  std::map<std::string, std::string> names;  // block name -> key path of its first use
  for (const Field& block : blocks) {
    if (!block.is_map()) block.fail("expected a map of block fields, got " + block.describe());
    block.check_keys(block_fields());
    const auto name = block.get("name");
    if (!name) block.fail_missing("name", " (every block needs a unique name)");
    const std::string text = name->as_string();
    if (const auto [it, inserted] = names.emplace(text, block.path()); !inserted)
      name->fail("duplicate block name \"" + text + "\" (" + it->second + " has it too)");
  }
  for (const Field& network : networks) {
    if (!network.is_map()) network.fail("expected a map of network fields, got " + network.describe());
    network.check_keys(network_fields(), " in a network");
    const auto name = network.get("name");
    if (!name) network.fail_missing("name", " (every network needs a unique name, distinct from the blocks')");
    const std::string text = name->as_string();
    if (const auto [it, inserted] = names.emplace(text, network.path()); !inserted)
      name->fail("duplicate name \"" + text + "\" (" + it->second + " has it too)");
  }
  std::vector<Field> counted = blocks;  // a network's variants count as runs like a block's
  counted.insert(counted.end(), networks.begin(), networks.end());
  check_work(root, counted, defaults, points, limits);

  for (const Field& block : blocks) {
    for (int64_t p = 0; p < points; ++p) {
      const SweepPoint point = sweep_point(axes, p);
      BlockSpec labelled;  // only to reuse point_label's formatting
      for (const auto& [key, value] : point) labelled.point.emplace_back(key, to_compact_json(value.node()));
      try {
        spec.blocks.push_back(BlockResolver(block, defaults, point).resolve());
      } catch (const InputError& e) {
        throw with_context(e, block, point_label(labelled));
      }
      for (UnreadableVariant& u : spec.blocks.back().unreadable) {
        u.error = with_context(u.error, block, point_label(labelled));
        if (!limits.keep_unreadable) throw u.error;
      }
    }
  }
  for (const Field& network : networks) {
    for (int64_t p = 0; p < points; ++p) {
      const SweepPoint point = sweep_point(axes, p);
      try {
        spec.blocks.push_back(parse_network(network, tree, point, limits.max_network_ops));
      } catch (const InputError& e) {
        BlockSpec labelled;
        for (const auto& [key, value] : point) labelled.point.emplace_back(key, to_compact_json(value.node()));
        throw with_context(e, network, point_label(labelled));
      }
    }
  }
  return spec;
}

}  // namespace

Spec parse_spec_text(const std::string& text, const std::string& path, const SpecLimits& limits) {
  // The path may hold any bytes (a Latin-1 file name): it is the spec's name in every message and
  // record (Spec::file, provenance, plans), which must be text JSON can carry.
  const std::string file_name = escape_invalid_utf8(path);
  if (const auto bad = find_invalid_utf8(text)) throw invalid_utf8_error(text, *bad, file_name);
  try {
    const std::shared_ptr<const SourceNode> root = parse_source_tree(text, file_name);
    return parse_root(Field(*root, "", file_name), root, limits);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    // Nothing should get here; if something does, it is still the input's fault, not a crash.
    throw InputError({file_name, 0, 0}, "", std::string("cannot read the spec: ") + e.what());
  }
}

Spec load_spec_file(const std::string& path, const SpecLimits& limits) {
  if (is_model_file(path)) return model_file_spec(path, limits);
  if (!limits.model_input.empty())
    throw InputError({"command line", 0, 0}, "--input",
                     "gives the input shape of a model file (block.onnx); a spec gives its blocks' shapes");
  if (limits.allow_links)
    throw InputError({"command line", 0, 0}, "--allow-links",
                     "is for a model file (block.onnx) given in place of a spec; in a spec, write allow_links: true "
                     "on the onnx variant whose links you trust");
  const InputText in = read_input_file(path, "spec file", kMaxSpecBytes);
  Spec spec = parse_spec_text(in.text, in.name, limits);
  spec.sha256 = in.sha256;
  spec.text = in.text;
  return spec;
}

std::vector<int64_t> counted_variant_ops(const Field& variants) {
  // A scalar's text, or "" (a value of another kind is refused when the variant is read).
  const auto text = [](const std::optional<Field>& f) {
    return f && f->node().kind == SourceNode::Kind::scalar ? f->node().text : std::string();
  };
  std::vector<int64_t> counts;
  std::vector<std::string> names, of;
  for (const Field& v : variants.items()) {
    const std::string kind = text(v.is_map() ? v.get("kind") : std::optional<Field>(v));
    names.push_back(v.get("name") ? text(v.get("name")) : kind);
    of.push_back(text(v.get("of")));
    const BlockKindDefinition* definition = find_block_kind(kind);
    counts.push_back(definition && definition->counted_ops ? definition->counted_ops(v) : largest_counted_ops(v));
  }
  // A folded variant has at most the ops of the variant it folds (one of the others, itself not
  // folded; the parser refuses any other `of`).
  for (size_t i = 0; i < counts.size(); ++i) {
    if (of[i].empty()) continue;
    for (size_t j = 0; j < counts.size(); ++j)
      if (j != i && names[j] == of[i] && of[j].empty()) counts[i] = counts[j];
  }
  return counts;
}

}  // namespace convbench
