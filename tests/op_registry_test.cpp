// The op registry: every op kind has exactly one definition, found by its kind and by its name,
// and the definitions' fields are what the spec parser and the resolved spec rely on.
#include <gtest/gtest.h>

#include <set>

#include "ops/op_registry.hpp"

namespace convbench {
namespace {

TEST(OpRegistry, EveryKindHasOneDefinitionFoundByKindAndName) {
  std::set<OpKind> kinds;
  // Every kind graph/op_kinds.def lists.
  const std::vector<OpKind> listed = {
#define CONVBENCH_OP_KIND(kind) OpKind::kind,
#include "graph/op_kinds.def"
#undef CONVBENCH_OP_KIND
  };
  for (const OpKind kind : listed) {
    const OpDefinition& d = op_definition(kind);
    EXPECT_EQ(d.kind, kind);
    EXPECT_EQ(d.name, to_string(kind));
    EXPECT_EQ(find_op_definition(d.name), &d);
    EXPECT_TRUE(d.work) << d.name << " has no counts";
    EXPECT_TRUE(d.infer) << d.name << " has no shape inference";
    EXPECT_GE(d.min_inputs, 1) << d.name;
    EXPECT_TRUE(d.max_inputs == -1 || d.max_inputs >= d.min_inputs) << d.name;
    kinds.insert(kind);
  }
  EXPECT_EQ(op_definitions().size(), kinds.size());
  EXPECT_EQ(find_op_definition("convolution"), nullptr);
}

TEST(OpRegistry, ArityAndFieldsAreTheSpecsRules) {
  EXPECT_EQ(op_definition(OpKind::add).min_inputs, 2);
  EXPECT_EQ(op_definition(OpKind::add).max_inputs, 2);
  EXPECT_EQ(op_definition(OpKind::concat).max_inputs, -1);
  EXPECT_EQ(op_definition(OpKind::relu).max_inputs, 1);
  const std::vector<std::string> transpose = op_definition(OpKind::conv_transpose).spec_fields;
  EXPECT_EQ(transpose.back(), "output_padding");
  EXPECT_TRUE(op_definition(OpKind::batch_norm).spec_fields.empty());
  EXPECT_EQ(op_definition(OpKind::dropout).spec_fields, std::vector<std::string>{"p"});
}

}  // namespace
}  // namespace convbench
