// inverted_residual: MobileNetV2's and MobileNetV3's block (torchvision's mobilenetv2.py and
// mobilenetv3.py InvertedResidual): a 1x1 expansion to the hidden width ("expand.*", left out when
// the hidden width is in_channels), the block's kernel depthwise there with the block's stride
// ("depthwise.*"), MobileNetV3's optional squeeze-excitation ("se.*": squeeze to
// make_divisible(hidden / 4), ReLU, hardsigmoid gate), a 1x1 projection without an activation
// ("project.*"), and the input added where the stride is 1 and the channels match ("add").
#include <cmath>

#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/torchvision_parts.hpp"

namespace convbench {
namespace {

struct InvertedResidualParameters {
  double expand = 6.0;  // MobileNetV2's expand_ratio: hidden = round(in_channels x expand)
  int64_t hidden = 0;   // given: the hidden width itself (MobileNetV3's tables give widths); 0: from expand
  std::string act = "relu6";
  bool se = false;
};

int64_t hidden_width(const InvertedResidualParameters& p, int64_t in_channels) {
  return p.hidden > 0 ? p.hidden : static_cast<int64_t>(std::llround(static_cast<double>(in_channels) * p.expand));
}

}  // namespace

BlockKindDefinition define_inverted_residual_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "expand (6), hidden (round(in x expand)), act (relu6), se (false)";
  d.ops_doc =
      "[CNA(1x1, in->hidden)] -> CNA(k, hidden, groups=hidden, stride) -> [SE(hidden/4, relu, hardsigmoid)] -> "
      "CN(1x1, hidden->out) [+ input]";
  d.keys = {"expand", "hidden", "act", "se"};
  d.not_in_networks =
      "inverted_residual is a whole block with its own norms and shortcut; a network writes it as a "
      "unit of ops (configs/seed001-efficient-nets.yaml)";
  d.own_shortcut = true;
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    InvertedResidualParameters p;
    if (!v.is_map()) return;
    p.expand = read_expand(v, p.expand);
    if (auto f = v.get("hidden")) {
      if (v.get("expand")) f->fail("give expand (a ratio of in_channels) or hidden (the width), not both");
      p.hidden = f->as_int(1);
    }
    p.act = read_kind_act(v, p.act);
    if (auto f = v.get("se")) p.se = f->as_bool();
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& v, const BlockSpec& block, const FitSite& at) {
    const auto p = kind_parameters<InvertedResidualParameters>(v);
    fit_elements(block, at, p.hidden > 0 ? "hidden" : "expand", hidden_width(p, block.in_channels),
                 "expansion's output");
  };
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>& graph, nlohmann::ordered_json& out) {
    const auto p = kind_parameters<InvertedResidualParameters>(v);
    out["expand"] = p.expand;
    out["act"] = p.act;
    out["se"] = p.se;
    // The widths as built: the depthwise conv's channels, and the squeeze (with se).
    write_built_widths(graph, {{"depthwise.conv", "hidden"}, {"se.fc1", "squeeze"}}, out);
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& v, int x) {
    const auto p = kind_parameters<InvertedResidualParameters>(v);
    TorchvisionParts t(a);
    const OpKind act = kind_act_op(p.act);
    const int64_t hidden = hidden_width(p, t.block().in_channels);
    std::optional<SqueezeExcitation> se;
    if (p.se)
      se = SqueezeExcitation{
          .squeeze = make_divisible(static_cast<double>(hidden / 4)), .act = OpKind::relu, .gate = OpKind::hardsigmoid};
    const int y = t.inverted_bottleneck(x, hidden, act, se);
    return t.keeps_shape() ? t.builder().add(t.name("add"), y, x) : y;
  };
  d.counted_ops = ops_at_most(17);
  return d;
}

}  // namespace convbench
