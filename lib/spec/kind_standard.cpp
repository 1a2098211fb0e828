// standard: the block's conv (kernel k, stride), norm and act, in -> out: "conv", "norm", "act".
#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_standard_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "(none)";
  d.ops_doc = "CNA(k, stride): conv k -> norm -> act";
  d.main_path = [](BlockAssembler& a, const VariantSpec&, int x) {
    return a.cna("", x, a.block().out_channels, true, a.block().stride, 1);
  };
  d.counted_ops = ops_at_most(9);
  return d;
}

}  // namespace convbench
