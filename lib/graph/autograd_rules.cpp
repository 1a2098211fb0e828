#include "graph/autograd_rules.hpp"

namespace convbench {

SavedTensors saved_tensors(const Op& op) {
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose:
    case OpKind::batch_norm:
    case OpKind::group_norm:
    case OpKind::leaky_relu:
    case OpKind::max_pool:
    case OpKind::avg_pool: return {{0}, false};
    case OpKind::relu: return {{}, true};
    case OpKind::dropout:
    case OpKind::add:
    case OpKind::sub:
    case OpKind::concat:
    case OpKind::upsample: return {{}, false};
  }
  return {};
}

std::vector<TensorDesc> aux_tensors(const Graph& graph, const Op& op) {
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const DType stats = stats_dtype(in.dtype);
  switch (op.kind) {
    case OpKind::batch_norm:
      return {TensorDesc{{in.channels()}, stats, Layout::channels_first},
              TensorDesc{{in.channels()}, stats, Layout::channels_first}};
    case OpKind::group_norm: {
      const int64_t n = in.batch() * op.norm.groups;
      return {TensorDesc{{n}, stats, Layout::channels_first}, TensorDesc{{n}, stats, Layout::channels_first}};
    }
    case OpKind::dropout: {
      TensorDesc mask = in;
      mask.dtype = DType::uint8;
      return {mask};
    }
    case OpKind::max_pool: {
      TensorDesc idx = graph.desc(op.output);
      idx.dtype = DType::int64;
      return {idx};
    }
    default: return {};
  }
}

GradFlow grad_flow(const Op& op, int position) {
  if (op.kind == OpKind::add) return GradFlow::alias;
  if (op.kind == OpKind::sub && position == 0) return GradFlow::alias;
  return GradFlow::compute;
}

bool output_aliases_input(const Op& op, bool training) { return op.kind == OpKind::dropout && !training; }

}  // namespace convbench
