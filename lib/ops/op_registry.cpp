#include "ops/op_registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/op_math.hpp"

namespace convbench {

namespace {

// Built once, on first use, and never changed: the registry is constant data, not mutable state.
const std::vector<OpDefinition>& all() {
  static const std::vector<OpDefinition> definitions = [] {
    std::vector<OpDefinition> d = {
#define CONVBENCH_OP_KIND(kind) define_##kind(),
#include "graph/op_kinds.def"
#undef CONVBENCH_OP_KIND
    };
    std::sort(d.begin(), d.end(), [](const OpDefinition& a, const OpDefinition& b) { return a.kind < b.kind; });
    for (OpDefinition& def : d) {
      def.name = to_string(def.kind);  // the one spelling: graph/op_kinds.def
      for (const OpField& f : def.fields) def.spec_fields.push_back(f.key);
      if (!def.traits)
        throw std::logic_error("op registry: define_" + std::string(def.name) +
                               "() states no traits (OpDefinition::traits; OpTraits{} when none applies)");
    }
    return d;
  }();
  return definitions;
}

}  // namespace

bool WorkQuery::any_input_grad() const {
  return std::any_of(input_requires_grad.begin(), input_requires_grad.end(), [](bool b) { return b; });
}

int64_t WorkQuery::output_elements() const { return count_elements(graph.desc(op.output)); }

const OpDefinition& op_definition(OpKind kind) {
  for (const OpDefinition& d : all())
    if (d.kind == kind) return d;
  throw std::logic_error("op registry: no definition for op kind " + std::to_string(static_cast<int>(kind)));
}

const OpTraits& op_traits(OpKind kind) { return *op_definition(kind).traits; }

const OpDefinition* find_op_definition(std::string_view name) {
  for (const OpDefinition& d : all())
    if (d.name == name) return &d;
  return nullptr;
}

const OpDefinition* find_onnx_import(std::string_view node) {
  for (const OpDefinition& d : all())
    if (d.onnx_import && d.onnx_import->node == node) return &d;
  return nullptr;
}

const std::vector<const OpDefinition*>& op_definitions() {
  static const std::vector<const OpDefinition*> list = [] {
    std::vector<const OpDefinition*> l;
    for (const OpDefinition& d : all()) l.push_back(&d);
    return l;
  }();
  return list;
}

}  // namespace convbench
