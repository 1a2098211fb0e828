// mbconv: EfficientNet's block (torchvision's efficientnet.py MBConv): a 1x1 expansion to
// make_divisible(in_channels x expand) ("expand.*", left out when that is in_channels), the
// block's kernel depthwise there with the block's stride ("depthwise.*"), squeeze-excitation to
// max(1, floor(in_channels x se_ratio)) with SiLU and a sigmoid gate ("se.*"; none at se_ratio 0),
// a 1x1 projection without an activation ("project.*"), and where the stride is 1 and the channels
// match, stochastic depth ("drop_path", at drop_path > 0) and the input added ("add").
#include <cmath>

#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/torchvision_parts.hpp"

namespace convbench {
namespace {

struct MbconvParameters {
  double expand = 6.0;
  std::string act = "silu";
  double se_ratio = 0.25;  // of in_channels, as torchvision's MBConv (max(1, in // 4))
  double drop_path = 0.0;  // torchvision's stochastic_depth_prob of this block
};

int64_t expanded_width(const MbconvParameters& p, int64_t in_channels) {
  return make_divisible(static_cast<double>(in_channels) * p.expand);
}

int64_t squeeze_width(const MbconvParameters& p, int64_t in_channels) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(static_cast<double>(in_channels) * p.se_ratio)));
}

}  // namespace

BlockKindDefinition define_mbconv_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "expand (6), act (silu), se_ratio (0.25), drop_path (0)";
  d.ops_doc =
      "[CNA(1x1, in->hidden=make_divisible(in x expand))] -> CNA(k, hidden, groups=hidden, stride) -> "
      "[SE(in x se_ratio, silu, sigmoid)] -> CN(1x1, hidden->out) [-> drop_path, + input]";
  d.keys = {"expand", "act", "se_ratio", "drop_path"};
  d.not_in_networks =
      "mbconv is a whole block with its own norms and shortcut; a network writes it as a unit of "
      "ops (configs/seed001-efficient-nets.yaml)";
  d.own_shortcut = true;
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    MbconvParameters p;
    if (!v.is_map()) return;
    p.expand = read_expand(v, p.expand);
    p.act = read_kind_act(v, p.act);
    if (auto f = v.get("se_ratio")) {
      p.se_ratio = f->as_number();
      if (!(p.se_ratio >= 0.0 && p.se_ratio <= 1.0)) f->fail("se_ratio must be in [0, 1], got " + f->node().text);
    }
    p.drop_path = read_rate(v, "drop_path");
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& v, const BlockSpec& block, const FitSite& at) {
    const auto p = kind_parameters<MbconvParameters>(v);
    fit_elements(block, at, "expand", expanded_width(p, block.in_channels), "expansion's output");
  };
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>& graph, nlohmann::ordered_json& out) {
    const auto p = kind_parameters<MbconvParameters>(v);
    out["expand"] = p.expand;
    out["act"] = p.act;
    out["se_ratio"] = p.se_ratio;
    out["drop_path"] = p.drop_path;
    write_built_widths(graph, {{"depthwise.conv", "hidden"}, {"se.fc1", "squeeze"}}, out);
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& v, int x) {
    const auto p = kind_parameters<MbconvParameters>(v);
    TorchvisionParts t(a);
    const OpKind act = kind_act_op(p.act);
    const int64_t in = t.block().in_channels;
    std::optional<SqueezeExcitation> se;
    if (p.se_ratio > 0.0) se = SqueezeExcitation{.squeeze = squeeze_width(p, in), .act = act, .gate = OpKind::sigmoid};
    const int y = t.inverted_bottleneck(x, expanded_width(p, in), act, se);
    return t.keeps_shape() ? t.drop_path_and_add(x, y, p.drop_path) : y;
  };
  d.counted_ops = ops_at_most(18);
  return d;
}

}  // namespace convbench
