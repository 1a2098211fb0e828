#include "variants/memory_policy.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "ops/autograd_rules.hpp"
#include "ops/op_registry.hpp"

namespace convbench {
namespace {

// "relu, leaky_relu, sigmoid": the ops inplace_act looks for (OpTraits::activation).
std::string activation_names() {
  std::string names;
  for (const OpDefinition* d : op_definitions())
    if (d->traits->activation) names += (names.empty() ? "" : ", ") + std::string(d->name);
  return names;
}

// Decides which ops may run in place, one op after another in execution order, in time linear
// in the graph: a network of 100,000 activations is decided in one pass, not by a walk over every
// op per activation. It keeps, per storage (the first value of a chain of in-place ops: an input
// with one reader shares its tensor with the op's output), how many tensors the ops save in it.
// An op may overwrite its input when that count, less its own saves, is 0 (in_place_allowed()'s
// rule). Op `except` counts as not in place (the rule asks "as if it did not run in place").
class InPlacePlanner {
 public:
  explicit InPlacePlanner(const Graph& g, int except = -1)
      : g_(g),
        rg_(g.requires_grad()),
        in_place_(g.ops.size(), false),
        readers_(g.values.size(), 0),
        storage_(g.values.size()),
        saves_(g.values.size(), 0) {
    for (size_t v = 0; v < storage_.size(); ++v) storage_[v] = static_cast<int>(v);
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      in_place_[i] = op.in_place && static_cast<int>(i) != except;
      for (int v : op.inputs) ++readers_[static_cast<size_t>(v)];
      if (in_place_[i]) storage_[static_cast<size_t>(op.output)] = storage_[static_cast<size_t>(op.inputs.at(0))];
    }
    for (size_t i = 0; i < g_.ops.size(); ++i)
      for (int v : kept(static_cast<int>(i))) ++saves_[root(v)];
  }

  bool allowed(int i) const {
    const Op& op = g_.ops.at(static_cast<size_t>(i));
    const int x = op.inputs.at(0);
    if (x == g_.input || readers_[static_cast<size_t>(x)] != 1) return false;
    int64_t own = 0;  // what the op itself saves in its input's storage
    for (int v : kept(i)) own += root(v) == root(x) ? 1 : 0;
    return saves_[root(x)] == own;
  }

  // Records that op i (not in place yet, and allowed()) writes over its input; the caller sets
  // its Op::in_place.
  void set_in_place(int i) {
    const Op& op = g_.ops.at(static_cast<size_t>(i));
    for (int v : kept(i)) --saves_[root(v)];
    in_place_[static_cast<size_t>(i)] = true;
    const size_t out = static_cast<size_t>(op.output);
    const size_t merged = root(op.inputs.at(0));
    // The output was its own storage (no later op is in place yet): its saves join the input's.
    saves_[merged] += saves_[out];
    saves_[out] = 0;
    storage_[out] = static_cast<int>(merged);
    for (int v : kept(i)) ++saves_[root(v)];
  }

 private:
  size_t root(int v) const { return static_cast<size_t>(storage_[static_cast<size_t>(v)]); }

  // The values op i keeps for its backward (none when its output needs no gradient).
  std::vector<int> kept(int i) const {
    const Op& op = g_.ops[static_cast<size_t>(i)];
    std::vector<int> out;
    if (!rg_[static_cast<size_t>(op.output)]) return out;
    const std::vector<bool> needs = inputs_requiring_grad(op, rg_);
    SavedTensors s;
    if (in_place_[static_cast<size_t>(i)] == op.in_place) {
      s = saved_tensors(op, needs);
    } else {  // op `except`: the saving rule as if it did not run in place
      Op as_run = op;
      as_run.in_place = in_place_[static_cast<size_t>(i)];
      s = saved_tensors(as_run, needs);
    }
    for (int pos : s.inputs) out.push_back(op.inputs[static_cast<size_t>(pos)]);
    if (s.output) out.push_back(op.output);
    return out;
  }

  const Graph& g_;
  std::vector<bool> rg_;
  std::vector<bool> in_place_;  // per op, as decided so far
  std::vector<int> readers_;    // per value: how many op inputs read it
  std::vector<int> storage_;    // per value: the first value of its in-place chain
  std::vector<int64_t> saves_;  // per storage: tensors saved in it, counted per (op, value)
};

// Decides op i and records the decision in the graph.
void decide_in_place(Graph& g, InPlacePlanner& planner, size_t i) {
  if (!planner.allowed(static_cast<int>(i))) return;
  planner.set_in_place(static_cast<int>(i));
  g.ops[i].in_place = true;
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
  InPlacePlanner planner(g);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const OpTraits& traits = op_traits(op.kind);
    if (!traits.activation) continue;
    any = true;
    if (traits.in_place_safe && traits.in_place_safe(op)) decide_in_place(g, planner, i);
  }
  if (!any) throw PolicyError("memory_policy inplace_act: the variant has no activation (" + activation_names() + ")");
}

// Removes the marked ops in one pass and renumbers the parameters' and buffers' owning ops (an op
// erased one at a time would move every later op: quadratic in a network's length).
void erase_ops(Graph& g, const std::vector<bool>& erased) {
  std::vector<int> new_index(g.ops.size() + 1, 0);  // kept ops before each op
  std::vector<Op> kept;
  kept.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    new_index[i + 1] = new_index[i] + (erased[i] ? 0 : 1);
    if (!erased[i]) kept.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(kept);
  for (std::vector<Param>* list : {&g.params, &g.buffers})
    for (Param& p : *list) p.op = new_index[static_cast<size_t>(p.op)];
}

// InPlaceABN's activations are leaky_relu (slope 0.01 by default), elu and identity: not ReLU,
// whose output has lost the sign backward needs to recover its input. A user adopting it on a
// ReLU block switches to leaky_relu(0.01), so that switch is what the variant measures (the
// graph's policy_note says so, and the policy table compares it with the user's ReLU block).
constexpr double kInPlaceAbnSlope = 0.01;

void apply_inplace_abn(Graph& g) {
  const std::vector<std::vector<int>> readers = g.consumers();
  struct Fusion {
    int norm, act;
    double slope;
  };
  std::vector<Fusion> pairs;
  std::vector<std::string> relu_pairs;
  bool group_norm = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    group_norm = group_norm || op.kind == OpKind::group_norm;
    if (op.kind != OpKind::batch_norm) continue;
    const std::vector<int>& r = readers[static_cast<size_t>(op.output)];
    if (r.size() != 1) continue;
    const Op& act = g.ops[static_cast<size_t>(r[0])];
    if (act.kind == OpKind::relu) {
      relu_pairs.push_back(op.name + " -> " + act.name);
      pairs.push_back({static_cast<int>(i), r[0], kInPlaceAbnSlope});
      continue;
    }
    if (act.kind != OpKind::leaky_relu) continue;
    if (!(act.negative_slope > 0)) {
      std::ostringstream slope;
      slope << act.negative_slope;
      throw PolicyError("memory_policy inplace_abn: " + act.name + " has negative_slope " + slope.str() +
                        "; Inplace-ABN recovers the activation's input by dividing its negative outputs by the slope, "
                        "which must be positive");
    }
    pairs.push_back({static_cast<int>(i), r[0], act.negative_slope});
  }
  if (!relu_pairs.empty()) {
    std::string list;
    for (size_t k = 0; k < relu_pairs.size(); ++k) list += (k ? ", " : "") + relu_pairs[k];
    g.policy_note = "inplace_abn: " + list + (relu_pairs.size() == 1 ? " is" : " are") +
                    " batch norm then relu; InPlaceABN has no ReLU (its output loses the sign backward needs), so "
                    "the fused op uses leaky_relu with InPlaceABN's default slope 0.01, as a user adopting it would";
  }
  if (pairs.empty())
    throw PolicyError(
        std::string("memory_policy inplace_abn: the variant has no batch_norm followed by leaky_relu or relu to "
                    "fuse") +
        (group_norm ? " (Inplace-ABN fuses batch norm; this variant's norm is group norm)" : ""));
  std::vector<bool> erased(g.ops.size(), false);
  for (const Fusion& f : pairs) {
    Op& fused = g.ops[static_cast<size_t>(f.norm)];
    const Op& act = g.ops[static_cast<size_t>(f.act)];
    fused.kind = OpKind::batch_norm_act;
    fused.negative_slope = f.slope;
    fused.output = act.output;
    erased[static_cast<size_t>(f.act)] = true;
  }
  erase_ops(g, erased);
  InPlacePlanner planner(g);
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::batch_norm_act) decide_in_place(g, planner, i);
}

}  // namespace

bool in_place_allowed(const Graph& g, int i) { return InPlacePlanner(g, i).allowed(i); }

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
