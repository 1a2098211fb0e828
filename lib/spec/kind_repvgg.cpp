// repvgg: RepVGG's training block (Ding et al. 2021): the block's conv and a 1x1 conv, each with
// its norm ("dense.*", "pointwise.*"), and the input through a norm ("identity.norm") when the
// channels and the stride leave it the same shape, added ("sum", then "sum2"), then the act. In
// inference `{kind: folded, of: ...}` re-parameterises it as RepVGG does: one conv with a bias.
#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_repvgg_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "(none)";
  d.ops_doc = "(conv k, stride -> norm) + (conv 1x1, stride -> norm) [+ norm(input) when in = out, stride 1] -> act";
  // The 1x1 conv's output has the spatial size of the block's conv only when that one keeps the
  // centre: an odd kernel with padding "same".
  d.fit = [](const VariantSpec&, const BlockSpec& block, const FitSite& at) {
    for (int dim = 0; dim < block.dims; ++dim)
      if (2 * block.padding[dim] != block.dilation[dim] * (block.kernel[dim] - 1))
        at.fail("",
                "repvgg adds a 1x1 conv to the block's conv, which needs an odd kernel and padding \"same\" "
                "(dilation x (kernel - 1) / 2) for their outputs to align; the block has kernel " +
                    shape_text(block.kernel) + ", padding " + shape_text(block.padding) + ", dilation " +
                    shape_text(block.dilation));
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec&, int x) {
    const BlockSpec& block = a.block();
    const int dense = a.norm("dense.", a.conv("dense.", x, block.out_channels, true, block.stride, 1));
    const int pointwise = a.norm("pointwise.", a.conv("pointwise.", x, block.out_channels, false, block.stride, 1));
    const bool unit_stride = has_unit_stride(block);
    // The identity branch, as RepVGG computes it: before the sum.
    const int identity = block.in_channels == block.out_channels && unit_stride ? a.norm("identity.", x) : -1;
    int y = a.builder().add(a.name("sum"), dense, pointwise);
    if (identity >= 0) y = a.builder().add(a.name("sum2"), y, identity);
    return a.act("", y);
  };
  d.counted_ops = ops_at_most(12);
  return d;
}

}  // namespace convbench
