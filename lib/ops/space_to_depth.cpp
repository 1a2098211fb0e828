// space_to_depth (TResNet's stem; PyTorch's pixel_unshuffle): each b x b (x b) block of every
// channel becomes b^d channels of one position, (N, C, S_i) -> (N, C * b^d, S_i / b). The order of
// the new channels: channel_major (out channel c * b^d + offset, exactly pixel_unshuffle's) or
// block_major (offset * C + c, timm's TResNet SpaceToDepth view/permute), the offset being the
// position within the block, row-major. A permutation: nothing saved, no FLOPs (data movement,
// its bytes counted as every op's); backward is the inverse permutation.
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"
#include "ops/space_to_depth_fields.hpp"

namespace convbench {

namespace {

const char* order_word(SpaceToDepthOrder o) {
  return o == SpaceToDepthOrder::block_major ? "block_major" : "channel_major";
}

}  // namespace

void set_block_permutation_fields(OpDefinition& d) {
  d.fields = {{"block_size", FieldKind::positive_int}, {"order", FieldKind::keyword, {"channel_major", "block_major"}}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.space_to_depth.block_size = f.get<int64_t>("block_size").value_or(2);
    op.space_to_depth.order =
        f.is_keyword("order", "block_major") ? SpaceToDepthOrder::block_major : SpaceToDepthOrder::channel_major;
  };
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.attributes = [](const Op& op) {
    return nlohmann::ordered_json{{"block_size", op.space_to_depth.block_size},
                                  {"order", order_word(op.space_to_depth.order)}};
  };
  d.traits = OpTraits{};
  // autocast: pixel_unshuffle and pixel_shuffle move elements in their input's dtype.
  d.autocast = autocast_always(AutocastClass::follows);
}

namespace {

// The 2-D block-major order is ONNX's SpaceToDepth; every other case splits each spatial dim into
// (size / b, b), moves the offsets next to the channels (before them: block-major; after them:
// channel-major, pixel_unshuffle's) and merges them into the channels.
void space_to_depth_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const TensorDesc& x = in_desc(w, op);
  const int d = x.spatial_rank();
  const int64_t b = op.space_to_depth.block_size;
  const bool block_major = op.space_to_depth.order == SpaceToDepthOrder::block_major;
  if (d == 2 && block_major) {
    w.node("SpaceToDepth", op.name, {in(w, op)}, {out(w, op)}).integer("blocksize", b);
    return;
  }
  std::vector<int64_t> split = {x.batch(), x.channels()};
  for (int i = 0; i < d; ++i) {
    split.push_back(x.shape[static_cast<size_t>(2 + i)] / b);
    split.push_back(b);
  }
  // Axes of `split`: 0 N, 1 C, then (2 + 2i) the i-th outer size and (3 + 2i) its offset.
  std::vector<int64_t> perm = {0};
  std::vector<int64_t> offsets, outers;
  for (int i = 0; i < d; ++i) {
    outers.push_back(2 + 2 * i);
    offsets.push_back(3 + 2 * i);
  }
  if (!block_major) perm.push_back(1);
  perm.insert(perm.end(), offsets.begin(), offsets.end());
  if (block_major) perm.push_back(1);
  perm.insert(perm.end(), outers.begin(), outers.end());
  const std::string split_t = w.fresh(op.name + "/split"), moved = w.fresh(op.name + "/moved");
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".split_shape", split)}, {split_t});
  w.node("Transpose", w.fresh(op.name + "/Transpose"), {split_t}, {moved}).ints("perm", perm);
  w.node("Reshape", op.name, {moved, w.int64s(op.name + ".shape", out_desc(w, op).shape)}, {out(w, op)});
}

}  // namespace

OpDefinition define_space_to_depth() {
  OpDefinition d;
  d.kind = OpKind::space_to_depth;
  set_block_permutation_fields(d);
  d.infer = [](const Graph& graph, Op& op) {
    const int64_t b = op.space_to_depth.block_size;
    require_at(b >= 2, op.name, {"block_size"}, "block_size must be >= 2, got " + std::to_string(b));
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    OpShape s{in, {}, {}};
    int64_t channels = in.channels();
    for (int i = 2; i < in.rank(); ++i) {
      const int64_t size = in.shape[static_cast<size_t>(i)];
      require_at(size % b == 0, op.name, {"block_size"},
                 "the input's size " + std::to_string(size) + " in spatial dim " + std::to_string(i - 2) +
                     " is not divisible by block_size " + std::to_string(b) + " (input " + channels_and_spatial(in) +
                     ")");
      s.output.shape[static_cast<size_t>(i)] = size / b;
      const bool overflow = __builtin_mul_overflow(channels, b, &channels);
      require_at(!overflow && channels <= kMaxDimSize, op.name, {"block_size"},
                 "the output has more than 2^31 channels");
    }
    s.output.shape[1] = channels;
    return s;
  };
  d.onnx_export = space_to_depth_onnx;
  d.peer_module = "SpaceToDepth";
  return d;
}

}  // namespace convbench
