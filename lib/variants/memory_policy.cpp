#include "variants/memory_policy.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "ops/autograd_rules.hpp"

namespace convbench {
namespace {

bool is_activation(const Op& op) {
  return op.kind == OpKind::relu || op.kind == OpKind::sigmoid || op.kind == OpKind::leaky_relu;
}

// The value whose storage each value lives in (in place ops share their input's), as if op
// `except` did not run in place.
std::vector<int> storage_of(const Graph& g, int except) {
  std::vector<int> storage(g.values.size());
  for (size_t v = 0; v < storage.size(); ++v) storage[v] = static_cast<int>(v);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.in_place && static_cast<int>(i) != except)
      storage[static_cast<size_t>(op.output)] = storage[static_cast<size_t>(op.inputs.at(0))];
  }
  return storage;
}

void apply_recompute(Graph& g, bool training, const std::vector<RecomputeSegment>& slots) {
  if (!training)
    throw PolicyError(
        "memory_policy recompute runs the forward again in backward, and mode: infer has no backward (nothing is "
        "saved to recompute); use memory_policy: none, or mode: train");
  if (slots.empty() && g.segments.empty()) {
    g.segments = {{g.name.substr(0, g.name.find('/')), 0, static_cast<int>(g.ops.size())}};
    return;
  }
  g.segments = slots;
}

void apply_inplace_act(Graph& g) {
  bool any = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (!is_activation(op)) continue;
    any = true;
    if (op.kind == OpKind::leaky_relu && op.negative_slope < 0) continue;
    op.in_place = in_place_allowed(g, static_cast<int>(i));
  }
  if (!any) throw PolicyError("memory_policy inplace_act: the variant has no activation (relu, leaky_relu, sigmoid)");
}

// The ops' owning-op indices after op `erased` is removed.
void erase_op(Graph& g, size_t erased) {
  g.ops.erase(g.ops.begin() + static_cast<std::ptrdiff_t>(erased));
  for (std::vector<Param>* list : {&g.params, &g.buffers})
    for (Param& p : *list)
      if (p.op > static_cast<int>(erased)) --p.op;
}

void apply_inplace_abn(Graph& g) {
  const std::vector<std::vector<int>> readers = g.consumers();
  std::vector<std::pair<int, int>> pairs;  // (batch_norm, leaky_relu)
  std::string relu_pair;
  bool group_norm = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    group_norm = group_norm || op.kind == OpKind::group_norm;
    if (op.kind != OpKind::batch_norm) continue;
    const std::vector<int>& r = readers[static_cast<size_t>(op.output)];
    if (r.size() != 1) continue;
    const Op& act = g.ops[static_cast<size_t>(r[0])];
    if (act.kind == OpKind::relu && relu_pair.empty()) relu_pair = op.name + " -> " + act.name;
    if (act.kind != OpKind::leaky_relu) continue;
    if (!(act.negative_slope > 0)) {
      std::ostringstream slope;
      slope << act.negative_slope;
      throw PolicyError("memory_policy inplace_abn: " + act.name + " has negative_slope " + slope.str() +
                        "; Inplace-ABN recovers the activation's input by dividing its negative outputs by the slope, "
                        "which must be positive");
    }
    pairs.emplace_back(static_cast<int>(i), r[0]);
  }
  if (!relu_pair.empty())
    throw PolicyError("memory_policy inplace_abn: " + relu_pair +
                      " is batch norm followed by relu, and ReLU's output is 0 wherever its input was negative, so "
                      "backward cannot recover the input from it; use act: leaky_relu (the activation of Inplace-ABN), "
                      "or memory_policy: inplace_act");
  if (pairs.empty())
    throw PolicyError(std::string("memory_policy inplace_abn: the variant has no batch_norm followed by leaky_relu to "
                                  "fuse") +
                      (group_norm ? " (Inplace-ABN fuses batch norm; this variant's norm is group norm)" : ""));
  // Later pairs first, so that erasing an activation leaves the earlier pairs' indices valid.
  for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) {
    Op& fused = g.ops[static_cast<size_t>(it->first)];
    const Op& act = g.ops[static_cast<size_t>(it->second)];
    fused.kind = OpKind::batch_norm_act;
    fused.negative_slope = act.negative_slope;
    fused.output = act.output;
    erase_op(g, static_cast<size_t>(it->second));
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::batch_norm_act) g.ops[i].in_place = in_place_allowed(g, static_cast<int>(i));
}

}  // namespace

bool in_place_allowed(const Graph& g, int i) {
  const Op& op = g.ops.at(static_cast<size_t>(i));
  const int x = op.inputs.at(0);
  if (x == g.input) return false;
  int readers = 0;
  for (const Op& other : g.ops) readers += static_cast<int>(std::count(other.inputs.begin(), other.inputs.end(), x));
  if (readers != 1) return false;
  const std::vector<int> storage = storage_of(g, i);
  const std::vector<bool> rg = g.requires_grad();
  for (size_t j = 0; j < g.ops.size(); ++j) {
    const Op& other = g.ops[j];
    if (static_cast<int>(j) == i || !rg[static_cast<size_t>(other.output)]) continue;
    const SavedTensors s = saved_tensors(other, inputs_requiring_grad(other, rg));
    std::vector<int> kept;
    for (int pos : s.inputs) kept.push_back(other.inputs[static_cast<size_t>(pos)]);
    if (s.output) kept.push_back(other.output);
    for (int v : kept)
      if (storage[static_cast<size_t>(v)] == storage[static_cast<size_t>(x)]) return false;
  }
  return true;
}

void apply_memory_policy(Graph& g, MemoryPolicy policy, bool training, const std::vector<RecomputeSegment>& slots) {
  g.memory_policy = policy;
  switch (policy) {
    case MemoryPolicy::none: return;
    case MemoryPolicy::recompute: apply_recompute(g, training, slots); return;
    case MemoryPolicy::inplace_act: apply_inplace_act(g); return;
    case MemoryPolicy::inplace_abn: apply_inplace_abn(g); return;
  }
}

}  // namespace convbench
