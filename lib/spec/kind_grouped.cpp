// grouped: the standard conv with `groups` (required), which must divide both channel counts.
#include "spec/kind_grouped.hpp"

#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_grouped_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "groups (required)";
  d.ops_doc = "CNA(k, stride, groups)";
  d.keys = {"groups"};
  d.required = RequiredParameter{"groups", "{kind: grouped, groups: N}"};
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    const auto groups = v.get("groups");
    if (!groups) v.fail_missing("groups", " (a grouped variant needs its number of groups)");
    out.kind_parameters = GroupedParameters{.groups = groups->as_int(1)};
  };
  d.fit = [](const VariantSpec& variant, const BlockSpec& block, const FitSite& at) {
    const auto v = kind_parameters<GroupedParameters>(variant);
    if (block.in_channels % v.groups != 0)
      at.fail("groups", "in_channels " + std::to_string(block.in_channels) + " is not divisible by groups " +
                            std::to_string(v.groups));
    if (block.out_channels % v.groups != 0)
      at.fail("groups", "out_channels " + std::to_string(block.out_channels) + " is not divisible by groups " +
                            std::to_string(v.groups));
  };
  d.resolved = [](const VariantSpec& variant, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    const auto v = kind_parameters<GroupedParameters>(variant);
    out["groups"] = v.groups;
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& variant, int x) {
    const auto v = kind_parameters<GroupedParameters>(variant);
    return a.cna("", x, a.block().out_channels, true, a.block().stride, v.groups);
  };
  d.counted_ops = ops_at_most(9);
  return d;
}

}  // namespace convbench
