// The op registry: every op kind has exactly one definition, found by its kind and by its name,
// and the definitions' fields are what the spec parser and the resolved spec rely on.
#include <gtest/gtest.h>

#include <set>

#include "ops/autograd_rules.hpp"
#include "ops/graph_builder.hpp"
#include "ops/op_registry.hpp"
#include "reference_op_harness.hpp"

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
  EXPECT_EQ(op_definition(OpKind::batch_norm).spec_fields, (std::vector<std::string>{"eps", "momentum"}));
  EXPECT_TRUE(op_definition(OpKind::relu).spec_fields.empty());
  EXPECT_EQ(op_definition(OpKind::dropout).spec_fields, std::vector<std::string>{"p"});
}

// Every tensor an op makes for its backward has a name for the reports ("mean of bn", not
// "saved tensor 1 of bn"), distinct within the op: checked on every case of the op catalogue.
TEST(OpRegistry, EveryAuxTensorIsNamed) {
  int named = 0;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    const Graph g = reftest::build_case(c, DType::float32, Layout::channels_first);
    const Op& op = g.ops.back();
    const std::vector<TensorDesc> aux = aux_tensors(g, op);
    std::set<std::string> names;
    for (size_t k = 0; k < aux.size(); ++k) {
      const std::string name = aux_tensor_name(op, k);
      EXPECT_EQ(name.find("saved tensor"), std::string::npos) << c.name << ": aux tensor " << k << " has no name";
      EXPECT_TRUE(names.insert(name).second) << c.name << ": two aux tensors named " << name;
      ++named;
    }
    EXPECT_EQ(op_definition(op.kind).aux_names.size(), aux.size()) << c.name;
  }
  EXPECT_GT(named, 0);
  GraphBuilder b("bn", TensorDesc{{2, 4, 3, 3}, DType::float32, Layout::channels_first});
  const Graph g = b.finish(b.batch_norm("bn1", b.input()));
  EXPECT_EQ(aux_tensor_name(g.ops.back(), 0), "mean of bn1");
  EXPECT_EQ(aux_tensor_name(g.ops.back(), 1), "inverse std of bn1");
}

// Every op states its traits (the registry refuses one that does not), and answers them as its own
// rules do, on every case of the op catalogue in both layouts: an activation is elementwise, an op
// that keeps the layout gives its inputs' layout, and one that may run in place then saves nothing
// of the input it overwrites.
TEST(OpRegistry, EveryOpAnswersItsTraits) {
  std::vector<std::string> activations, layout_changers;
  for (const OpDefinition* d : op_definitions()) {
    ASSERT_TRUE(d->traits.has_value()) << d->name;
    if (d->traits->activation) activations.emplace_back(d->name);
    if (d->traits->changes_layout) layout_changers.emplace_back(d->name);
  }
  EXPECT_EQ(activations, (std::vector<std::string>{"relu", "leaky_relu", "sigmoid", "silu", "hardswish", "hardsigmoid",
                                                   "relu6", "gelu"}));
  EXPECT_EQ(layout_changers, std::vector<std::string>{"convert_layout"});

  std::set<OpKind> seen;
  for (const reftest::OpCase& c : reftest::op_cases())
    for (const Layout layout : {Layout::channels_first, Layout::channels_last}) {
      const Graph g = reftest::build_case(c, DType::float32, layout);
      for (const Op& op : g.ops) {
        seen.insert(op.kind);
        const OpTraits& t = op_traits(op.kind);
        const TensorDesc& out = g.desc(op.output);
        bool same_layout = true;
        for (int v : op.inputs) same_layout = same_layout && g.desc(v).layout == out.layout;
        EXPECT_EQ(same_layout, !t.changes_layout) << c.name << ": " << op.name;
        if (t.activation) {
          EXPECT_EQ(op.inputs.size(), 1u) << c.name;
          EXPECT_EQ(g.desc(op.inputs.at(0)).shape, out.shape) << c.name;
        }
        if (t.in_place_safe && t.in_place_safe(op)) {
          Op in_place = op;
          in_place.in_place = true;
          const SavedTensors saved = saved_tensors(in_place, std::vector<bool>(op.inputs.size(), true));
          EXPECT_TRUE(saved.inputs.empty()) << c.name << ": " << op.name << " may run in place, but then its backward "
                                            << "reads the input it wrote over";
        }
      }
    }
  // Every kind but cast: a cast changes its input's dtype, which a catalogue case (built in one
  // dtype, checked by central differences in float64, where any narrowing cast is rounding noise)
  // cannot express. The mixed-precision tests run it (autocast_graph_test.cpp: its traits on real
  // AMP graphs, its kernels in measured steps and their gradients).
  std::set<std::string> unbuilt;
  for (const OpDefinition* d : op_definitions())
    if (!seen.count(d->kind)) unbuilt.insert(std::string(d->name));
  EXPECT_EQ(unbuilt, std::set<std::string>{"cast"}) << "an op kind the catalogue does not build";

  GraphBuilder b("slopes", TensorDesc{{2, 4, 3, 3}, DType::float32, Layout::channels_first});
  const int up = b.leaky_relu("up", b.input(), 0.1);
  const Graph g = b.finish(b.leaky_relu("down", up, -0.1));
  const OpTraits& leaky = op_traits(OpKind::leaky_relu);
  EXPECT_TRUE(leaky.in_place_safe(g.ops.at(0)));
  EXPECT_FALSE(leaky.in_place_safe(g.ops.at(1)));  // its output's sign is no longer its input's
  EXPECT_FALSE(op_traits(OpKind::conv).in_place_safe);
}

}  // namespace
}  // namespace convbench
