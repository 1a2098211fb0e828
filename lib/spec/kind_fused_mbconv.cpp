// fused_mbconv: EfficientNetV2's fused block (torchvision's efficientnet.py FusedMBConv): the
// block's kernel as one conv with the block's stride to make_divisible(in_channels x expand)
// ("expand.*") and a 1x1 projection without an activation ("project.*"); at expand 1 one conv of
// the block's kernel straight to out_channels with the activation ("conv.*"). Where the stride is
// 1 and the channels match, stochastic depth ("drop_path", at drop_path > 0) and the input added.
#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/torchvision_parts.hpp"

namespace convbench {
namespace {

struct FusedMbconvParameters {
  double expand = 4.0;
  std::string act = "silu";
  double drop_path = 0.0;
};

int64_t expanded_width(const FusedMbconvParameters& p, int64_t in_channels) {
  return make_divisible(static_cast<double>(in_channels) * p.expand);
}

}  // namespace

BlockKindDefinition define_fused_mbconv_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "expand (4), act (silu), drop_path (0)";
  d.ops_doc =
      "CNA(k, in->hidden=make_divisible(in x expand), stride) -> CN(1x1, hidden->out) [-> drop_path, + input]; "
      "expand 1: CNA(k, in->out, stride)";
  d.keys = {"expand", "act", "drop_path"};
  d.not_in_networks =
      "fused_mbconv is a whole block with its own norms and shortcut; a network writes it as a unit "
      "of ops";
  d.own_shortcut = true;
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    FusedMbconvParameters p;
    if (!v.is_map()) return;
    p.expand = read_expand(v, p.expand);
    p.act = read_kind_act(v, p.act);
    p.drop_path = read_rate(v, "drop_path");
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& v, const BlockSpec& block, const FitSite& at) {
    const auto p = kind_parameters<FusedMbconvParameters>(v);
    fit_elements(block, at, "expand", expanded_width(p, block.in_channels), "expansion's output");
  };
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>& graph, nlohmann::ordered_json& out) {
    const auto p = kind_parameters<FusedMbconvParameters>(v);
    out["expand"] = p.expand;
    out["act"] = p.act;
    out["drop_path"] = p.drop_path;
    write_built_widths(graph, {{"expand.conv", "hidden"}}, out);
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& v, int x) {
    const auto p = kind_parameters<FusedMbconvParameters>(v);
    TorchvisionParts t(a);
    const OpKind act = kind_act_op(p.act);
    const int64_t in = t.block().in_channels;
    const int64_t hidden = expanded_width(p, in);
    int y;
    if (hidden != in) {
      y = t.conv_norm_act("expand.", x, hidden, true, true, 1, act);
      y = t.conv_norm_act("project.", y, t.block().out_channels, false, false, 1, std::nullopt);
    } else {
      y = t.conv_norm_act("conv.", x, t.block().out_channels, true, true, 1, act);
    }
    return t.keeps_shape() ? t.drop_path_and_add(x, y, p.drop_path) : y;
  };
  d.counted_ops = ops_at_most(9);
  return d;
}

}  // namespace convbench
