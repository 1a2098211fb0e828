// bottleneck: a 1x1 reduction to the middle width out_channels / ratio, the spatial conv there
// (stride, groups), and a 1x1 expansion to out_channels, each a conv -> norm -> act unit:
// "reduce.*", "spatial.*", "expand.*".
#include "spec/kind_bottleneck.hpp"

#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_bottleneck_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "ratio (4), groups (1)";
  d.ops_doc = "CNA(1x1, in->mid=out/ratio) -> CNA(k, mid->mid, stride, groups) -> CNA(1x1, mid->out)";
  d.keys = {"ratio", "groups"};
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    BottleneckParameters p;
    if (auto f = v.get("ratio")) p.ratio = f->as_int(1);
    if (auto f = v.get("groups")) p.groups = f->as_int(1);
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& variant, const BlockSpec& block, const FitSite& at) {
    const auto v = kind_parameters<BottleneckParameters>(variant);
    if (block.out_channels % v.ratio != 0)
      at.fail("ratio", "out_channels " + std::to_string(block.out_channels) + " is not divisible by ratio " +
                           std::to_string(v.ratio) + (at.given("ratio") ? "" : " (the default)") +
                           "; the middle width is out_channels / ratio");
    const int64_t mid = block.out_channels / v.ratio;
    if (mid % v.groups != 0)
      at.fail("groups", "the middle width " + std::to_string(mid) + " (out_channels " +
                            std::to_string(block.out_channels) + " / ratio " + std::to_string(v.ratio) +
                            ") is not divisible by groups " + std::to_string(v.groups));
    fit_norm_groups(block, at, mid, "bottleneck's 1x1 reduction and middle conv");
  };
  d.resolved = [](const VariantSpec& variant, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    const auto v = kind_parameters<BottleneckParameters>(variant);
    out["ratio"] = v.ratio;
    out["groups"] = v.groups;
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& variant, int x) {
    const auto v = kind_parameters<BottleneckParameters>(variant);
    const BlockSpec& block = a.block();
    const std::vector<int64_t> one(static_cast<size_t>(block.dims), 1);
    const int64_t mid = block.out_channels / v.ratio;
    int y = a.cna("reduce.", x, mid, false, one, 1);
    y = a.cna("spatial.", y, mid, true, block.stride, v.groups);
    return a.cna("expand.", y, block.out_channels, false, one, 1);
  };
  d.counted_ops = ops_at_most(15);
  return d;
}

}  // namespace convbench
