#include "spec/variant_parser.hpp"

#include <unordered_map>

#include <algorithm>

#include "spec/block_kind_registry.hpp"
#include "spec/suggest.hpp"

namespace convbench {
namespace {

// Every key a variant of any kind may have, for the suggestion when `kind` itself is misspelt.
std::vector<std::string> all_variant_keys() {
  std::vector<std::string> all;
  for (const BlockKindDefinition* kind : block_kinds()) {
    std::vector<std::string> keys = {"kind", "name"};
    keys.insert(keys.end(), kind->keys.begin(), kind->keys.end());
    keys.push_back("memory_policy");
    keys.push_back("precision");
    for (const std::string& key : keys)
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
  }
  return all;
}

// A block's variant does not fit at its own parameter: where the file wrote it, else the variant
// under the parameter's key path (a default at fault).
class VariantFitSite : public FitSite {
 public:
  explicit VariantFitSite(const Field& variant) : variant_(variant) {}
  bool given(const std::string& key) const override { return variant_.get(key).has_value(); }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const override {
    (key.empty() ? variant_ : variant_.locate(key)).fail(message);
  }

 private:
  const Field& variant_;
};

// The kind's parameters, read and checked against the block's channels.
void read_parameters(const BlockKindDefinition& kind, const Field& v, const BlockSpec& block, VariantSpec& out) {
  if (kind.read) kind.read(v, &block, out);
  if (kind.fit) kind.fit(out, block, VariantFitSite(v));
}

VariantSpec parse_variant(const Field& v, const BlockSpec& block) {
  VariantSpec out;
  out.key_path = v.path();
  out.where = v.where();
  if (v.is_string()) {
    const BlockKindDefinition& kind = block_kind(v.as_choice(block_kind_names(), "variant kind"));
    out.kind = kind.name;
    if (kind.required) v.fail_missing(kind.required->key, " (write the variant as " + kind.required->written_as + ")");
    out.name = out.kind;
    read_parameters(kind, v, block, out);  // the defaults of a bare kind still have to fit the block's channels
    return out;
  }
  if (!v.is_map())
    v.fail("expected a variant kind (standard, bottleneck, separable) or a map with `kind`, got " + v.describe());
  const auto kind_field = v.get("kind");
  if (!kind_field) {
    v.check_keys(all_variant_keys(), " in a variant");  // a misspelt `kind` is the likely cause
    v.fail_missing("kind", " (one of " + join_alternatives(block_kind_names()) + ")");
  }
  const BlockKindDefinition& kind = block_kind(kind_field->as_choice(block_kind_names(), "variant kind"));
  out.kind = kind.name;
  std::vector<std::string> keys = {"kind", "name"};
  keys.insert(keys.end(), kind.keys.begin(), kind.keys.end());
  keys.push_back("memory_policy");
  keys.push_back("precision");
  v.check_keys(keys, " for a " + out.kind + " variant");
  out.name = out.kind;
  if (auto name = v.get("name")) out.name = name->as_string();
  read_parameters(kind, v, block, out);
  if (auto f = v.get("memory_policy")) out.memory_policy = read_memory_policy(*f);
  if (auto f = v.get("precision")) out.precision = read_precision(*f);
  return out;
}

// `of` of every folded variant names another variant of the block, which is not folded itself.
void check_fold_sources(const std::vector<Field>& list, const std::vector<VariantSpec>& variants) {
  std::vector<std::string> unfolded;
  for (const VariantSpec& v : variants)
    if (!folds_another(v)) unfolded.push_back(v.name);
  for (size_t i = 0; i < variants.size(); ++i) {
    const VariantSpec& v = variants[i];
    if (!folds_another(v)) continue;
    const Field of = *list[i].get("of");
    if (v.of == v.name) of.fail("a folded variant cannot fold itself; name another variant of the block");
    const auto source =
        std::find_if(variants.begin(), variants.end(), [&](const VariantSpec& s) { return s.name == v.of; });
    if (source == variants.end())
      of.fail("no variant of this block is named \"" + v.of + "\"" + did_you_mean(v.of, unfolded) +
              " (the variants it may fold: " + join_alternatives(unfolded) + ")");
    if (folds_another(*source))
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

PrecisionChoice read_precision(const Field& f) {
  PrecisionChoice c;
  c.precision = *parse_precision(f.as_choice(precision_names(), "precision"));
  c.key_path = f.path();
  c.where = f.where();
  return c;
}

ParsedVariants parse_variants(const Field& variants, const BlockSpec& block) {
  ParsedVariants out;
  const std::vector<Field> list = variants.non_empty_list("variants");
  std::vector<Field> read;                             // the fields of out.variants, for the fold sources' messages
  std::unordered_map<std::string, std::size_t> index;  // name -> first position: linear in variants
  auto claim = [&](const std::string& name, std::size_t i) {
    if (const auto [it, inserted] = index.emplace(name, i); !inserted) {
      const Field at = list[i].get("name").value_or(list[i]);
      at.fail("duplicate variant name \"" + name + "\" (variants[" + std::to_string(it->second) +
              "] has it too); give each variant its own `name:`");
    }
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    try {
      VariantSpec variant = parse_variant(list[i], block);
      claim(variant.name, i);
      if (i == 0) out.first = variant.name;
      out.variants.push_back(std::move(variant));
      read.push_back(list[i]);
    } catch (const UnreadableFile& e) {
      // A map with `kind` (a reader throws only there): its name as parse_variant reads it.
      const std::string kind = list[i].get("kind")->as_string();
      const auto name = list[i].get("name");
      UnreadableVariant u{.name = name ? name->as_string() : kind, .kind = kind, .error = e};
      claim(u.name, i);
      if (i == 0) out.first = u.name;
      out.unreadable.push_back(std::move(u));
    } catch (const InputError&) {
      // The first error in the file is the one said: an earlier variant's unreadable file.
      if (!out.unreadable.empty()) throw InputError(out.unreadable.front().error);
      throw;
    }
  }
  check_fold_sources(read, out.variants);
  return out;
}

}  // namespace convbench
