// depth_to_space (PyTorch's pixel_shuffle; ONNX's DepthToSpace, in its DCR and CRD modes): the
// inverse of space_to_depth. Every b^d channels of one position become a b x b (x b) block of one
// channel, (N, C, S_i) -> (N, C / b^d, S_i * b). The order of the channels it reads is
// space_to_depth's: channel_major (channel c * b^d + offset, exactly pixel_shuffle's and ONNX's
// CRD) or block_major (offset * C' + c, ONNX's default DCR), the offset being the position within
// the block, row-major. It uses space_to_depth's attributes, and each backend's space_to_depth
// kernels the other way round (a permutation: its backward is space_to_depth's forward). Nothing
// saved, no FLOPs.
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"
#include "ops/space_to_depth_fields.hpp"

namespace convbench {

namespace {

// depth_to_space: ONNX's DepthToSpace in 2-D (mode CRD for the channel-major order, pixel_shuffle's;
// DCR for the block-major one); in 3-D, where DepthToSpace is not defined, the channels split into
// the block's offsets and the output channels, each offset moved beside its spatial dim.
void depth_to_space_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const TensorDesc& x = in_desc(w, op);
  const int d = x.spatial_rank();
  const int64_t b = op.space_to_depth.block_size;
  const bool block_major = op.space_to_depth.order == SpaceToDepthOrder::block_major;
  if (d == 2) {
    w.node("DepthToSpace", op.name, {in(w, op)}, {out(w, op)})
        .integer("blocksize", b)
        .text("mode", block_major ? "DCR" : "CRD");
    return;
  }
  const int64_t channels = out_desc(w, op).channels();
  std::vector<int64_t> split = {x.batch()};
  if (!block_major) split.push_back(channels);
  for (int i = 0; i < d; ++i) split.push_back(b);
  if (block_major) split.push_back(channels);
  for (int i = 0; i < d; ++i) split.push_back(x.shape[static_cast<size_t>(2 + i)]);
  // Axes of `split`: 0 N; the channel axis (1, or d + 1 when block-major); the offsets; then the
  // spatial sizes at 2 + d + i. The result interleaves each size with its offset.
  const int64_t channel_axis = block_major ? d + 1 : 1, first_offset = block_major ? 1 : 2;
  std::vector<int64_t> perm = {0, channel_axis};
  for (int i = 0; i < d; ++i) {
    perm.push_back(2 + d + i);
    perm.push_back(first_offset + i);
  }
  const std::string split_t = w.fresh(op.name + "/split"), moved = w.fresh(op.name + "/moved");
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".split_shape", split)}, {split_t});
  w.node("Transpose", w.fresh(op.name + "/Transpose"), {split_t}, {moved}).ints("perm", perm);
  w.node("Reshape", op.name, {moved, w.int64s(op.name + ".shape", out_desc(w, op).shape)}, {out(w, op)});
}

}  // namespace

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
  d.onnx_export = depth_to_space_onnx;
  d.peer_module = "DepthToSpace";
  return d;
}

}  // namespace convbench
