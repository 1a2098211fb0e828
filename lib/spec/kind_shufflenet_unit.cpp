// shufflenet_unit: ShuffleNetV2's block (torchvision's shufflenetv2.py InvertedResidual), with
// half of out_channels per branch. Stride 1 (in_channels = out_channels): the input's first half
// ("split.0") passes, its second half ("split.1") goes through the branch; stride 2: both branches
// read the whole input, the first as the block's kernel depthwise with the stride and a 1x1 conv
// ("branch1.*"). The branch ("branch2.*"): 1x1 conv, the block's kernel depthwise with the stride
// (no activation), 1x1 conv; batch norms after every conv, ReLU after the 1x1s. Then the halves
// concatenated ("cat") and shuffled in two groups ("shuffle").
#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/torchvision_parts.hpp"

namespace convbench {
namespace {

int shufflenet_branch(TorchvisionParts& t, int x, int64_t width) {
  int y = t.conv_norm_act("branch2.pw1.", x, width, false, false, 1, OpKind::relu);
  y = t.conv_norm_act("branch2.dw.", y, width, true, true, width, std::nullopt);
  return t.conv_norm_act("branch2.pw2.", y, width, false, false, 1, OpKind::relu);
}

int channel_slice(GraphBuilder& b, const std::string& name, int x, int64_t begin, int64_t count) {
  Op s;
  s.kind = OpKind::slice;
  s.name = name;
  s.inputs = {x};
  s.slice = {begin, count};
  return b.add(std::move(s));
}

}  // namespace

BlockKindDefinition define_shufflenet_unit_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "(none: the stride picks the form)";
  d.ops_doc =
      "stride 1: split in halves, [CNA(1x1) -> CN(k dw) -> CNA(1x1)] on the second; stride 2: "
      "[CN(k dw, stride) -> CNA(1x1)] and that branch on the input; concat -> channel_shuffle(2)";
  d.not_in_networks =
      "shufflenet_unit is a whole block with its own norms and split; a network writes it as a unit "
      "of ops (configs/convnext-shufflenet.yaml)";
  d.own_shortcut = true;
  d.fit = [](const VariantSpec&, const BlockSpec& block, const FitSite& at) {
    const bool unit_stride = has_unit_stride(block);
    if (block.out_channels % 2 != 0)
      at.fail("", "a ShuffleNetV2 unit gives half of out_channels to each branch: out_channels " +
                      std::to_string(block.out_channels) + " is odd");
    if (unit_stride && block.in_channels != block.out_channels)
      at.fail("", "at stride 1 a ShuffleNetV2 unit passes half of its input through: in_channels " +
                      std::to_string(block.in_channels) + " must equal out_channels " +
                      std::to_string(block.out_channels) + " (the stride-2 form changes channels)");
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec&, int x) {
    TorchvisionParts t(a);
    GraphBuilder& b = t.builder();
    const BlockSpec& block = t.block();
    const int64_t half = block.out_channels / 2;
    const bool unit_stride = has_unit_stride(block);
    int first, second;
    if (unit_stride) {
      first = channel_slice(b, t.name("split.0"), x, 0, half);
      second = shufflenet_branch(t, channel_slice(b, t.name("split.1"), x, half, half), half);
    } else {
      const int64_t in = block.in_channels;
      first = t.conv_norm_act("branch1.dw.", x, in, true, true, in, std::nullopt);
      first = t.conv_norm_act("branch1.pw.", first, half, false, false, 1, OpKind::relu);
      second = shufflenet_branch(t, x, half);
    }
    return b.channel_shuffle(t.name("shuffle"), b.concat(t.name("cat"), {first, second}), 2);
  };
  d.counted_ops = ops_at_most(17);
  return d;
}

}  // namespace convbench
