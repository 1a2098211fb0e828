#include "spec/variant_parser.hpp"

#include <unordered_map>

#include <algorithm>

#include "spec/suggest.hpp"

namespace convbench {
namespace {

const std::vector<std::string> kKinds = {"standard", "bottleneck", "separable", "grouped", "custom"};

std::vector<std::string> keys_of(const std::string& kind) {
  if (kind == "bottleneck") return {"kind", "name", "ratio", "groups", "memory_policy"};
  if (kind == "separable") return {"kind", "name", "multiplier", "memory_policy"};
  if (kind == "grouped") return {"kind", "name", "groups", "memory_policy"};
  if (kind == "custom") return {"kind", "name", "ops", "output", "memory_policy"};
  return {"kind", "name", "memory_policy"};
}

std::vector<std::string> all_variant_keys() {
  std::vector<std::string> all;
  for (const std::string& kind : kKinds)
    for (const std::string& key : keys_of(kind))
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
  return all;
}

std::string str(int64_t v) { return std::to_string(v); }

// A normalization after a conv of `channels` outputs: group norm needs them divisible.
void check_norm_groups(const BlockSpec& block, const Field& at, int64_t channels, const std::string& which) {
  if (block.norm == NormKind::group && channels % block.norm_groups != 0)
    at.fail("group norm after the " + which + " needs its " + str(channels) + " channels divisible by norm_groups " +
            str(block.norm_groups));
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
    v.locate("ratio").fail("out_channels " + str(block.out_channels) + " is not divisible by ratio " + str(out.ratio) +
                           (v.get("ratio") ? "" : " (the default)") + "; the middle width is out_channels / ratio");
  const int64_t mid = block.out_channels / out.ratio;
  if (mid % out.groups != 0)
    v.locate("groups").fail("the middle width " + str(mid) + " (out_channels " + str(block.out_channels) + " / ratio " +
                            str(out.ratio) + ") is not divisible by groups " + str(out.groups));
  check_norm_groups(block, v, mid, "bottleneck's 1x1 reduction and middle conv");
}

void parse_separable(const Field& v, const BlockSpec& block, VariantSpec& out) {
  if (auto f = v.get("multiplier")) out.multiplier = f->as_int(1);
  const int64_t mid = block.in_channels * out.multiplier;  // both <= 2^31: no overflow
  if (mid > kMaxSpecDim)
    v.locate("multiplier")
        .fail("the depthwise conv would have in_channels " + str(block.in_channels) + " x multiplier " +
              str(out.multiplier) + " = " + str(mid) + " channels, more than 2^31");
  check_elements(block, v.locate("multiplier"), mid, "depthwise conv's output");
  check_norm_groups(block, v, mid, "depthwise conv");
}

void parse_grouped(const Field& v, const BlockSpec& block, VariantSpec& out) {
  const auto groups = v.get("groups");
  if (!groups) v.fail_missing("groups", " (a grouped variant needs its number of groups)");
  out.groups = groups->as_int(1);
  if (block.in_channels % out.groups != 0)
    groups->fail("in_channels " + str(block.in_channels) + " is not divisible by groups " + str(out.groups));
  if (block.out_channels % out.groups != 0)
    groups->fail("out_channels " + str(block.out_channels) + " is not divisible by groups " + str(out.groups));
}

VariantSpec parse_variant(const Field& v, const BlockSpec& block) {
  VariantSpec out;
  out.key_path = v.path();
  out.where = v.where();
  if (v.is_string()) {
    out.kind = v.as_choice(kKinds, "variant kind");
    if (out.kind == "grouped") v.fail_missing("groups", " (write the variant as {kind: grouped, groups: N})");
    if (out.kind == "custom") v.fail_missing("ops", " (write the variant as {kind: custom, ops: [...]})");
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
  return out;
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
      at.fail("duplicate variant name \"" + variant.name + "\" (variants[" + str(it->second) +
              "] has it too); give each variant its own `name:`");
    }
    out.push_back(std::move(variant));
  }
  return out;
}

}  // namespace convbench
