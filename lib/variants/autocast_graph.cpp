#include "variants/autocast_graph.hpp"

#include <optional>

#include "ops/graph_builder.hpp"
#include "ops/op_registry.hpp"

namespace convbench {
namespace {

// The dtype the op's inputs must have: the low dtype, float32, or for an op that follows its
// inputs the widest of them (PyTorch's type promotion); nullopt when they already agree.
std::optional<DType> input_dtype_for(AutocastClass c, DType low, const GraphBuilder& b,
                                     const std::vector<int>& inputs) {
  if (c == AutocastClass::lower) return low;
  if (c == AutocastClass::float32) return DType::float32;
  std::optional<DType> widest;
  for (int v : inputs) {
    const DType d = b.desc(v).dtype;
    if (!widest || element_bytes(d) > element_bytes(*widest)) widest = d;
  }
  return widest;
}

}  // namespace

Graph apply_autocast(const Graph& plain, Precision precision, AutocastDevice device,
                     std::vector<RecomputeSegment>* slots) {
  const std::optional<DType> low = autocast_dtype(precision);
  if (!low) return plain;
  GraphBuilder b(plain.name, plain.desc(plain.input));
  std::vector<int> value_of(plain.values.size(), -1);  // plain value id -> the AMP graph's
  value_of[static_cast<size_t>(plain.input)] = b.input();
  std::vector<int> first_op(plain.ops.size() + 1, 0);  // plain op -> its first op (a cast, or itself)
  for (size_t i = 0; i < plain.ops.size(); ++i) {
    const Op& op = plain.ops[i];
    first_op[i] = b.op_count();
    const OpDefinition& def = op_definition(op.kind);
    if (!def.autocast)
      throw AutocastError(op.name + " (" + std::string(def.name) +
                          ") has no autocast rule: torch.autocast's op lists " +
                          "do not say which dtype it runs in; use precision: plain for this variant");
    const AutocastClass c = def.autocast(AutocastQuery{plain, op, device});
    Op amp = op;
    amp.params.clear();
    amp.buffers.clear();
    amp.output = -1;
    for (int& v : amp.inputs) v = value_of[static_cast<size_t>(v)];
    if (const std::optional<DType> want = input_dtype_for(c, *low, b, amp.inputs)) {
      for (size_t k = 0; k < amp.inputs.size(); ++k) {
        if (b.desc(amp.inputs[k]).dtype == *want) continue;
        Op cast;
        cast.kind = OpKind::cast;
        cast.name = op.name + ".cast" + (amp.inputs.size() > 1 ? std::to_string(k) : "");
        cast.inputs = {amp.inputs[k]};
        cast.cast_to = *want;
        amp.inputs[k] = b.add(std::move(cast));
      }
    }
    if (c == AutocastClass::lower && (!op.params.empty() || !op.buffers.empty())) amp.param_cast = *low;
    value_of[static_cast<size_t>(op.output)] = b.add(std::move(amp));
  }
  first_op[plain.ops.size()] = b.op_count();
  Graph g = b.finish(value_of[static_cast<size_t>(plain.output)]);
  g.precision = precision;
  g.autocast_device = device;
  g.policy_note = plain.policy_note;
  g.derivation = plain.derivation;
  if (slots)
    for (RecomputeSegment& s : *slots) {
      s.first_op = first_op[static_cast<size_t>(s.first_op)];
      s.end_op = first_op[static_cast<size_t>(s.end_op)];
    }
  return g;
}

}  // namespace convbench
