// convnext: ConvNeXt's block (torchvision's convnext.py CNBlock): the block's kernel depthwise
// with a bias ("dwconv"; ConvNeXt's is 7x7, padding 3), a layer norm over the channels with eps
// 1e-6 ("norm"), a 1x1 expansion to expand x channels with a bias ("pwconv1"; torchvision's Linear
// on the channels-last tensor), GELU ("act"), a 1x1 projection back with a bias ("pwconv2"), the
// learned per-channel layer scale ("layer_scale"), stochastic depth ("drop_path", at drop_path > 0)
// and the input added ("add"). Keeps its shape: in_channels = out_channels, stride 1.
#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/torchvision_parts.hpp"

namespace convbench {
namespace {

struct ConvnextParameters {
  int64_t expand = 4;
  std::string act = "gelu";
  double drop_path = 0.0;
};

}  // namespace

BlockKindDefinition define_convnext_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "expand (4), act (gelu), drop_path (0)";
  d.ops_doc =
      "dwconv(k, bias) -> layer_norm(eps 1e-6) -> pwconv1(1x1, c->expand c) -> act -> pwconv2(1x1) -> "
      "layer_scale [-> drop_path] + input";
  d.keys = {"expand", "act", "drop_path"};
  d.not_in_networks =
      "convnext is a whole block with its own norm and shortcut; a network writes it as a unit of "
      "ops (configs/convnext-shufflenet.yaml)";
  d.own_shortcut = true;
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    ConvnextParameters p;
    if (!v.is_map()) return;
    if (auto f = v.get("expand")) p.expand = f->as_int(1, 64);
    p.act = read_kind_act(v, p.act);
    p.drop_path = read_rate(v, "drop_path");
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& v, const BlockSpec& block, const FitSite& at) {
    const auto p = kind_parameters<ConvnextParameters>(v);
    const bool unit_stride = has_unit_stride(block);
    if (block.in_channels != block.out_channels || !unit_stride)
      at.fail("", "a ConvNeXt block keeps its shape (in_channels = out_channels, stride 1); this block goes " +
                      std::to_string(block.in_channels) + " -> " + std::to_string(block.out_channels) + " channels" +
                      (unit_stride ? "" : " with a stride") +
                      " (ConvNeXt downsamples between stages with a layer norm and a 2x2 stride-2 conv)");
    fit_elements(block, at, "expand", block.in_channels * p.expand, "expansion's output");
  };
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    const auto p = kind_parameters<ConvnextParameters>(v);
    out["expand"] = p.expand;
    out["act"] = p.act;
    out["drop_path"] = p.drop_path;
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& v, int x) {
    const auto p = kind_parameters<ConvnextParameters>(v);
    TorchvisionParts t(a);
    GraphBuilder& b = t.builder();
    const int64_t c = t.block().in_channels;
    int y = t.conv_with_bias("dwconv", x, c, true, c);
    y = b.layer_norm(t.name("norm"), y, 1e-6);
    y = t.conv_with_bias("pwconv1", y, c * p.expand, false, 1);
    const OpKind act = kind_act_op(p.act);
    y = act == OpKind::relu ? b.relu(t.name("act"), y) : b.activation(act, t.name("act"), y);
    y = t.conv_with_bias("pwconv2", y, c, false, 1);
    y = b.layer_scale(t.name("layer_scale"), y);
    return t.drop_path_and_add(x, y, p.drop_path);
  };
  d.counted_ops = ops_at_most(10);
  return d;
}

}  // namespace convbench
