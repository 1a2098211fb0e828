#include "spec/variant_parser.hpp"

#include <unordered_map>

#include <algorithm>

#include "spec/suggest.hpp"

namespace convbench {
namespace {

const std::vector<std::string> kKinds = {"standard", "bottleneck", "separable", "grouped",
                                         "custom",   "folded",     "branches"};

std::vector<std::string> keys_of(const std::string& kind) {
  if (kind == "bottleneck") return {"kind", "name", "ratio", "groups", "memory_policy"};
  if (kind == "separable") return {"kind", "name", "multiplier", "memory_policy"};
  if (kind == "grouped") return {"kind", "name", "groups", "memory_policy"};
  if (kind == "custom") return {"kind", "name", "ops", "output", "memory_policy"};
  if (kind == "folded") return {"kind", "name", "of", "fold", "memory_policy"};
  if (kind == "branches") return {"kind", "name", "count", "split", "out_channels", "memory_policy"};
  return {"kind", "name", "memory_policy"};
}

std::vector<std::string> all_variant_keys() {
  std::vector<std::string> all;
  for (const std::string& kind : kKinds)
    for (const std::string& key : keys_of(kind))
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
  return all;
}

// A normalization after a conv of `channels` outputs: group norm needs them divisible.
void check_norm_groups(const BlockSpec& block, const Field& at, int64_t channels, const std::string& which) {
  if (block.norm == NormKind::group && channels % block.norm_groups != 0)
    at.fail("group norm after the " + which + " needs its " + std::to_string(channels) +
            " channels divisible by norm_groups " + std::to_string(block.norm_groups));
}

void check_elements(const BlockSpec& block, const Field& at, int64_t channels, const std::string& which) {
  std::vector<int64_t> shape = {block.batch, channels};
  shape.insert(shape.end(), block.size.begin(), block.size.end());
  if (!checked_product(shape))
    at.fail("the " + which + " tensor " + shape_text(shape) + " has more elements than int64 can count");
}

void parse_bottleneck(const Field& v, const BlockSpec& block, VariantSpec& out) {
  if (auto f = v.get("ratio")) out.ratio = f->as_int(1);
  if (auto f = v.get("groups")) out.groups = f->as_int(1);
  if (block.out_channels % out.ratio != 0)
    v.locate("ratio").fail("out_channels " + std::to_string(block.out_channels) + " is not divisible by ratio " +
                           std::to_string(out.ratio) + (v.get("ratio") ? "" : " (the default)") +
                           "; the middle width is out_channels / ratio");
  const int64_t mid = block.out_channels / out.ratio;
  if (mid % out.groups != 0)
    v.locate("groups").fail("the middle width " + std::to_string(mid) + " (out_channels " +
                            std::to_string(block.out_channels) + " / ratio " + std::to_string(out.ratio) +
                            ") is not divisible by groups " + std::to_string(out.groups));
  check_norm_groups(block, v, mid, "bottleneck's 1x1 reduction and middle conv");
}

void parse_separable(const Field& v, const BlockSpec& block, VariantSpec& out) {
  if (auto f = v.get("multiplier")) out.multiplier = f->as_int(1);
  const int64_t mid = block.in_channels * out.multiplier;  // both <= 2^31: no overflow
  if (mid > kMaxSpecDim)
    v.locate("multiplier")
        .fail("the depthwise conv would have in_channels " + std::to_string(block.in_channels) + " x multiplier " +
              std::to_string(out.multiplier) + " = " + std::to_string(mid) + " channels, more than 2^31");
  check_elements(block, v.locate("multiplier"), mid, "depthwise conv's output");
  check_norm_groups(block, v, mid, "depthwise conv");
}

void parse_grouped(const Field& v, const BlockSpec& block, VariantSpec& out) {
  const auto groups = v.get("groups");
  if (!groups) v.fail_missing("groups", " (a grouped variant needs its number of groups)");
  out.groups = groups->as_int(1);
  if (block.in_channels % out.groups != 0)
    groups->fail("in_channels " + std::to_string(block.in_channels) + " is not divisible by groups " +
                 std::to_string(out.groups));
  if (block.out_channels % out.groups != 0)
    groups->fail("out_channels " + std::to_string(block.out_channels) + " is not divisible by groups " +
                 std::to_string(out.groups));
}

// A folded variant: `of` names the variant it folds (checked against the block's variants once all
// are read), `fold` how: once (at build time; inference only) or online (inside every step). By
// default once in an infer block and online in a train block.
void parse_folded(const Field& v, const BlockSpec& block, VariantSpec& out) {
  const auto of = v.get("of");
  if (!of) v.fail_missing("of", " (the name of the variant of this block to fold)");
  out.of = of->as_string();
  const bool train = block.mode == RunMode::train;
  out.fold = train ? "online" : "once";
  if (const auto fold = v.get("fold")) {
    out.fold = fold->as_choice({"once", "online"}, "fold");
    if (out.fold == "once" && train)
      fold->fail(
          "fold: once computes the kernel once, when the graph is built: a kernel computed once cannot be trained as "
          "its source's weights are (use fold: online, which computes it from them in every step, or mode: infer)");
  }
  if (!v.get("name")) out.name = (out.fold == "once" ? "folded-" : "online-") + out.of;
}

// Branches: `count` (required, >= 2) convs side by side, concatenated. `split: channels` (the
// default) gives each one in_channels / count input channels, `none` the whole input each;
// `out_channels` is each branch's (default: the block's out_channels / count, which the
// concatenation must reach).
void parse_branches(const Field& v, const BlockSpec& block, VariantSpec& out) {
  const auto count = v.get("count");
  if (!count) v.fail_missing("count", " (the number of branches)");
  out.count = count->as_int(2);
  if (const auto split = v.get("split"))
    out.split_channels = split->as_choice({"channels", "none"}, "split") == "channels";
  if (out.split_channels && block.in_channels % out.count != 0)
    count->fail("split: channels gives each branch in_channels / count channels: in_channels " +
                std::to_string(block.in_channels) + " is not divisible by count " + std::to_string(out.count) +
                " (or use split: none)");
  if (const auto per = v.get("out_channels")) {
    out.branch_out_channels = per->as_int(1);
    if (out.branch_out_channels * out.count != block.out_channels)
      per->fail("count " + std::to_string(out.count) + " branches of " + std::to_string(out.branch_out_channels) +
                " channels give " + std::to_string(out.branch_out_channels * out.count) +
                ", the block's out_channels is " + std::to_string(block.out_channels));
  } else {
    if (block.out_channels % out.count != 0)
      count->fail("the block's out_channels " + std::to_string(block.out_channels) + " is not divisible by count " +
                  std::to_string(out.count) + " (each branch gives out_channels / count)");
    out.branch_out_channels = block.out_channels / out.count;
  }
}

VariantSpec parse_variant(const Field& v, const BlockSpec& block) {
  VariantSpec out;
  out.key_path = v.path();
  out.where = v.where();
  if (v.is_string()) {
    out.kind = v.as_choice(kKinds, "variant kind");
    if (out.kind == "grouped") v.fail_missing("groups", " (write the variant as {kind: grouped, groups: N})");
    if (out.kind == "custom") v.fail_missing("ops", " (write the variant as {kind: custom, ops: [...]})");
    if (out.kind == "folded") v.fail_missing("of", " (write the variant as {kind: folded, of: VARIANT})");
    if (out.kind == "branches") v.fail_missing("count", " (write the variant as {kind: branches, count: N})");
    out.name = out.kind;
    // The defaults of a bare kind still have to fit the block's channels.
    if (out.kind == "bottleneck") parse_bottleneck(v, block, out);
    if (out.kind == "separable") parse_separable(v, block, out);
    return out;
  }
  if (!v.is_map())
    v.fail("expected a variant kind (standard, bottleneck, separable) or a map with `kind`, got " + v.describe());
  const auto kind = v.get("kind");
  if (!kind) {
    v.check_keys(all_variant_keys(), " in a variant");  // a misspelt `kind` is the likely cause
    v.fail_missing("kind", " (one of " + join_alternatives(kKinds) + ")");
  }
  out.kind = kind->as_choice(kKinds, "variant kind");
  v.check_keys(keys_of(out.kind), " for a " + out.kind + " variant");
  out.name = out.kind;
  if (auto name = v.get("name")) out.name = name->as_string();
  if (out.kind == "bottleneck") parse_bottleneck(v, block, out);
  if (out.kind == "separable") parse_separable(v, block, out);
  if (out.kind == "grouped") parse_grouped(v, block, out);
  if (out.kind == "custom") parse_custom_ops(v, block, out);
  if (auto f = v.get("memory_policy")) out.memory_policy = read_memory_policy(*f);
  if (out.kind == "folded") parse_folded(v, block, out);
  if (out.kind == "branches") parse_branches(v, block, out);
  return out;
}

// `of` of every folded variant names another variant of the block, which is not folded itself.
void check_fold_sources(const std::vector<Field>& list, const std::vector<VariantSpec>& variants) {
  std::vector<std::string> unfolded;
  for (const VariantSpec& v : variants)
    if (v.kind != "folded") unfolded.push_back(v.name);
  for (size_t i = 0; i < variants.size(); ++i) {
    const VariantSpec& v = variants[i];
    if (v.kind != "folded") continue;
    const Field of = *list[i].get("of");
    if (v.of == v.name) of.fail("a folded variant cannot fold itself; name another variant of the block");
    const auto source =
        std::find_if(variants.begin(), variants.end(), [&](const VariantSpec& s) { return s.name == v.of; });
    if (source == variants.end())
      of.fail("no variant of this block is named \"" + v.of + "\"" + did_you_mean(v.of, unfolded) +
              " (the variants it may fold: " + join_alternatives(unfolded) + ")");
    if (source->kind == "folded")
      of.fail("\"" + v.of + "\" is itself folded; fold its source, \"" + source->of + "\", instead");
  }
}

}  // namespace

MemoryPolicyChoice read_memory_policy(const Field& f) {
  MemoryPolicyChoice c;
  c.policy = *parse_memory_policy(f.as_choice(memory_policy_names(), "memory policy"));
  c.key_path = f.path();
  c.where = f.where();
  return c;
}

std::vector<VariantSpec> parse_variants(const Field& variants, const BlockSpec& block) {
  std::vector<VariantSpec> out;
  const std::vector<Field> list = variants.non_empty_list("variants");
  std::unordered_map<std::string, std::size_t> index;  // name -> first position: linear in variants
  for (std::size_t i = 0; i < list.size(); ++i) {
    VariantSpec variant = parse_variant(list[i], block);
    if (const auto [it, inserted] = index.emplace(variant.name, i); !inserted) {
      const Field at = list[i].get("name").value_or(list[i]);
      at.fail("duplicate variant name \"" + variant.name + "\" (variants[" + std::to_string(it->second) +
              "] has it too); give each variant its own `name:`");
    }
    out.push_back(std::move(variant));
  }
  check_fold_sources(list, out);
  return out;
}

}  // namespace convbench
