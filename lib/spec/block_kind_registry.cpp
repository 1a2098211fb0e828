#include "spec/block_kind_registry.hpp"

#include <stdexcept>

namespace convbench {
namespace {

// Built once, on first use, and never changed: the registry is constant data, not mutable state.
const std::vector<BlockKindDefinition>& all() {
  static const std::vector<BlockKindDefinition> definitions = [] {
    std::vector<BlockKindDefinition> d;
#define CONVBENCH_BLOCK_KIND(kind)     \
  d.push_back(define_##kind##_kind()); \
  d.back().name = #kind;
#include "spec/block_kinds.def"
#undef CONVBENCH_BLOCK_KIND
    for (const BlockKindDefinition& def : d) {
      const int graphs = (def.main_path ? 1 : 0) + (def.block_ops ? 1 : 0) + (def.folds_another ? 1 : 0);
      if (graphs != 1)
        throw std::logic_error("block kind registry: " + std::string(def.name) +
                               " needs exactly one of main_path, block_ops and folds_another");
      // A network's slot ends every kind's main path with its own dropout and shortcut.
      if (def.own_shortcut && (!def.main_path || def.not_in_networks.empty()))
        throw std::logic_error("block kind registry: " + std::string(def.name) +
                               " has its own shortcut: it needs a main_path and no place in networks");
    }
    return d;
  }();
  return definitions;
}

}  // namespace

const BlockKindDefinition& block_kind(std::string_view name) {
  if (const BlockKindDefinition* d = find_block_kind(name)) return *d;
  throw std::logic_error("block kind registry: no kind \"" + std::string(name) + "\"");
}

const BlockKindDefinition* find_block_kind(std::string_view name) {
  for (const BlockKindDefinition& d : all())
    if (d.name == name) return &d;
  return nullptr;
}

const std::vector<const BlockKindDefinition*>& block_kinds() {
  static const std::vector<const BlockKindDefinition*> list = [] {
    std::vector<const BlockKindDefinition*> l;
    for (const BlockKindDefinition& d : all()) l.push_back(&d);
    return l;
  }();
  return list;
}

std::vector<std::string> block_kind_names(bool in_networks) {
  std::vector<std::string> names;
  for (const BlockKindDefinition* d : block_kinds())
    if (!in_networks || d->not_in_networks.empty()) names.emplace_back(d->name);
  return names;
}

bool folds_another(const VariantSpec& v) { return block_kind(v.kind).folds_another; }

}  // namespace convbench
