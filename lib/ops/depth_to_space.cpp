// depth_to_space (PyTorch's pixel_shuffle; ONNX's DepthToSpace, in its DCR and CRD modes): the
// inverse of space_to_depth. Every b^d channels of one position become a b x b (x b) block of one
// channel, (N, C, S_i) -> (N, C / b^d, S_i * b). The order of the channels it reads is
// space_to_depth's: channel_major (channel c * b^d + offset, exactly pixel_shuffle's and ONNX's
// CRD) or block_major (offset * C' + c, ONNX's default DCR), the offset being the position within
// the block, row-major. It uses space_to_depth's attributes, and each backend's space_to_depth
// kernels the other way round (a permutation: its backward is space_to_depth's forward). Nothing
// saved, no FLOPs.
#include <string>

#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"
#include "ops/space_to_depth_fields.hpp"

namespace convbench {

OpDefinition define_depth_to_space() {
  OpDefinition d;
  d.kind = OpKind::depth_to_space;
  set_block_permutation_fields(d);
  d.infer = [](const Graph& graph, Op& op) {
    const int64_t b = op.space_to_depth.block_size;
    require_at(b >= 2, op.name, {"block_size"}, "block_size must be >= 2, got " + std::to_string(b));
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    OpShape s{in, {}, {}};
    int64_t block = 1;
    for (int i = 2; i < in.rank(); ++i) {
      const int64_t size = in.shape[static_cast<size_t>(i)];
      require_at(size <= kMaxDimSize / b, op.name, {"block_size"},
                 "the output's size in spatial dim " + std::to_string(i - 2) + " would exceed 2^31");
      s.output.shape[static_cast<size_t>(i)] = size * b;
      block = block <= kMaxDimSize / b ? block * b : kMaxDimSize + 1;
    }
    require_at(in.channels() % block == 0, op.name, {"block_size"},
               "the input's " + std::to_string(in.channels()) + " channels are not a multiple of block_size^" +
                   std::to_string(in.rank() - 2) + " = " + std::to_string(block) + " (input " +
                   channels_and_spatial(in) + ")");
    s.output.shape[1] = in.channels() / block;
    return s;
  };
  return d;
}

}  // namespace convbench
