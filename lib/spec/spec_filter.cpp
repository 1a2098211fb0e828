#include "spec/spec_filter.hpp"

#include <algorithm>
#include <vector>

#include "spec/block_kind_registry.hpp"
#include "spec/name_regex.hpp"
#include "util/input_error.hpp"

namespace convbench {

void filter_spec(Spec& spec, const std::string& pattern) {
  const NameRegex re(pattern, "--filter");
  std::vector<BlockSpec> kept;
  for (BlockSpec& block : spec.blocks) {
    std::vector<VariantSpec> variants;
    bool any = false;
    std::vector<bool> keep(block.variants.size(), false);
    for (size_t i = 0; i < block.variants.size(); ++i) {
      const VariantSpec& v = block.variants[i];
      const bool match = re.search(block.name + "/" + v.name);
      any = any || match;
      keep[i] = match || v.name == block.baseline;
    }
    // A folded variant keeps its source, as every variant keeps the baseline: it is built from it
    // and compared with it.
    for (size_t i = 0; i < block.variants.size(); ++i)
      if (keep[i] && folds_another(block.variants[i]))
        for (size_t j = 0; j < block.variants.size(); ++j)
          if (block.variants[j].name == block.variants[i].of) keep[j] = true;
    for (size_t i = 0; i < block.variants.size(); ++i)
      if (keep[i]) variants.push_back(block.variants[i]);
    std::vector<UnreadableVariant> unreadable;
    for (const UnreadableVariant& u : block.unreadable)
      if (re.search(block.name + "/" + u.name)) {
        any = true;
        unreadable.push_back(u);
      }
    if (!any) continue;
    block.variants = std::move(variants);
    block.unreadable = std::move(unreadable);
    kept.push_back(std::move(block));
  }
  if (kept.empty()) {
    std::string names;
    std::vector<std::string> listed;
    for (const BlockSpec& b : spec.blocks) {
      for (const VariantSpec& v : b.variants) {
        const std::string name = b.name + "/" + v.name;
        // Listed once each, compared whole: "b/sep" is not already there because "b/separable" is.
        if (std::find(listed.begin(), listed.end(), name) != listed.end()) continue;
        listed.push_back(name);
        names += (names.empty() ? "" : ", ") + name;
      }
    }
    throw InputError({"command line", 0, 0}, "--filter",
                     "\"" + pattern + "\" matches no block/variant of the spec (" + names + ")");
  }
  spec.blocks = std::move(kept);
}

}  // namespace convbench
