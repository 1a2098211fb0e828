// separable: a depthwise conv (groups = in_channels) widening to in_channels x multiplier, then a
// 1x1 pointwise conv to out_channels, each a conv -> norm -> act unit: "depthwise.*",
// "pointwise.*".
#include "spec/kind_separable.hpp"

#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_separable_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "multiplier (1)";
  d.ops_doc = "CNA(k, in->in*multiplier, groups=in, stride) -> CNA(1x1, ->out)";
  d.keys = {"multiplier"};
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    SeparableParameters p;
    if (auto f = v.get("multiplier")) p.multiplier = f->as_int(1);
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& variant, const BlockSpec& block, const FitSite& at) {
    const auto v = kind_parameters<SeparableParameters>(variant);
    const int64_t wide = block.in_channels * v.multiplier;  // both <= 2^31: no overflow
    if (wide > kMaxSpecDim)
      at.fail("multiplier", "the depthwise conv would have in_channels " + std::to_string(block.in_channels) +
                                " x multiplier " + std::to_string(v.multiplier) + " = " + std::to_string(wide) +
                                " channels, more than 2^31");
    fit_elements(block, at, "multiplier", wide, "depthwise conv's output");
    fit_norm_groups(block, at, wide, "depthwise conv");
  };
  d.resolved = [](const VariantSpec& variant, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    const auto v = kind_parameters<SeparableParameters>(variant);
    out["multiplier"] = v.multiplier;
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& variant, int x) {
    const auto v = kind_parameters<SeparableParameters>(variant);
    const BlockSpec& block = a.block();
    const std::vector<int64_t> one(static_cast<size_t>(block.dims), 1);
    const int64_t wide = block.in_channels * v.multiplier;
    const int y = a.cna("depthwise.", x, wide, true, block.stride, block.in_channels);
    return a.cna("pointwise.", y, block.out_channels, false, one, 1);
  };
  d.counted_ops = ops_at_most(12);
  return d;
}

}  // namespace convbench
