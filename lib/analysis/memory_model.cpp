#include "analysis/memory_model.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/recompute_plan.hpp"
#include "graph/checked_math.hpp"
#include "ops/autograd_rules.hpp"
#include "runtime/loss_scaler.hpp"

namespace convbench {
namespace {

// Byte-count buffers with reference counts: the model's stand-in for tensors.
class BufferSim {
 public:
  int alloc(int64_t bytes, MemoryCategory c) {
    bufs_.push_back({bytes, c, 1});
    on_allocate(bytes, c);
    return static_cast<int>(bufs_.size()) - 1;
  }
  void ref(int id) { ++bufs_[static_cast<size_t>(id)].refs; }
  void unref(int id) {
    Buf& b = bufs_[static_cast<size_t>(id)];
    if (--b.refs == 0) stats_.on_free(b.bytes, b.category);
  }
  int refs(int id) const { return bufs_[static_cast<size_t>(id)].refs; }
  void transient(int64_t bytes, MemoryCategory c) {  // allocated and freed around one call
    if (bytes <= 0) return;
    on_allocate(bytes, c);
    stats_.on_free(bytes, c);
  }
  MemoryStats& stats() { return stats_; }
  int64_t bytes(int id) const { return bufs_[static_cast<size_t>(id)].bytes; }
  MemoryCategory category(int id) const { return bufs_[static_cast<size_t>(id)].category; }
  // The op now running, remembered with the peak it reaches.
  void set_moment(std::string op, std::string phase) {
    op_ = std::move(op);
    phase_ = std::move(phase);
  }
  const std::string& peak_op() const { return peak_op_; }
  const std::string& peak_phase() const { return peak_phase_; }

 private:
  struct Buf {
    int64_t bytes;
    MemoryCategory category;
    int refs;
  };
  void on_allocate(int64_t bytes, MemoryCategory c) {
    const int64_t before = stats_.peak;
    stats_.on_allocate(bytes, c);
    if (stats_.peak > before) {
      peak_op_ = op_;
      peak_phase_ = phase_;
    }
  }
  std::vector<Buf> bufs_;
  MemoryStats stats_;
  std::string op_, phase_, peak_op_, peak_phase_;
};

int64_t bytes_of(const TensorDesc& d) {
  int64_t n = element_bytes(d.dtype);
  for (int64_t x : d.shape) n = checked_mul(n, x);
  return n;
}

}  // namespace

namespace {

// The model's replay of one step. Memory policies change three things, each replayed here on
// byte counts (the executor implements the same rules on tensors, independently):
//  - an op that runs in place (Op::in_place) takes its input's buffer instead of a new one, so
//    a buffer is saved when any value living in it is;
//  - ops of a recompute segment save nothing in forward; the segment keeps its inputs, and its
//    forward runs again, saving, when backward reaches it (analysis/recompute_plan.hpp).
class StepReplay {
 public:
  StepReplay(const Graph& graph, bool training, const WorkspaceQuery& workspace, const StatisticsQuery& statistics)
      : g_(graph), training_(training), workspace_(workspace), statistics_(statistics), rg_(graph.requires_grad()) {
    const size_t nv = g_.values.size(), nops = g_.ops.size();
    // In inference nothing is saved, so a recompute segment runs as any other ops do.
    segment_of_.assign(nops, -1);
    if (training_) {
      plans_ = recompute_plans(g_);
      segment_of_ = segment_of_ops(g_);
    }
    // Which plans each op's backward triggers and releases, looked up per op rather than by a
    // walk over every plan (a network has one per slot).
    triggered_at_.assign(nops, {});
    released_at_.assign(nops, {});
    for (size_t p = 0; p < plans_.size(); ++p) {
      if (plans_[p].trigger_op >= 0) triggered_at_[static_cast<size_t>(plans_[p].trigger_op)].push_back(p);
      if (plans_[p].release_op >= 0) released_at_[static_cast<size_t>(plans_[p].release_op)].push_back(p);
    }
    rerun_buf_.assign(nv, -1);
    rerun_last_use_.assign(nv, -1);
    has_backward_.assign(nops, false);
    saves_in_forward_.assign(nops, false);
    last_use_.assign(nv, -1);
    storage_.resize(nv);
    for (size_t v = 0; v < nv; ++v) storage_[v] = static_cast<int>(v);
    std::vector<bool> saved_value(nv, false);
    saved_in_recompute_.assign(nv, false);
    for (size_t i = 0; i < nops; ++i) {
      const Op& op = g_.ops[i];
      for (int v : op.inputs) last_use_[static_cast<size_t>(v)] = static_cast<int>(i);
      if (op.in_place) storage_[static_cast<size_t>(op.output)] = storage_[static_cast<size_t>(op.inputs.at(0))];
      has_backward_[i] = training_ && rg_[static_cast<size_t>(op.output)];
      if (!has_backward_[i]) continue;
      const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, rg_));
      const bool in_segment = segment_of_[i] >= 0;
      saves_in_forward_[i] = !in_segment;
      std::vector<bool>& mark = in_segment ? saved_in_recompute_ : saved_value;
      for (int pos : s.inputs) mark[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])] = true;
      if (s.output) mark[static_cast<size_t>(op.output)] = true;
    }
    for (const RecomputePlan& p : plans_)
      if (p.keeps_inputs)
        for (int v : p.kept_inputs) saved_value[static_cast<size_t>(v)] = true;
    saved_storage_.assign(nv, false);
    for (size_t v = 0; v < nv; ++v)
      if (saved_value[v]) saved_storage_[static_cast<size_t>(storage_[v])] = true;
  }

  MemoryPrediction run() {
    for (const Param& prm : g_.params) {
      sim_.alloc(bytes_of(prm.desc), MemoryCategory::parameters);
      p_.parameter_bytes = checked_add(p_.parameter_bytes, bytes_of(prm.desc));
    }
    for (const Param& buf : g_.buffers) sim_.alloc(bytes_of(buf.desc), MemoryCategory::buffers);
    if (uses_loss_scaling(g_, training_)) sim_.alloc(kLossScalerStateBytes, MemoryCategory::buffers);
    value_buf_.assign(g_.values.size(), -1);
    value_buf_[static_cast<size_t>(g_.input)] = sim_.alloc(bytes_of(g_.desc(g_.input)), MemoryCategory::inputs);
    const int dy = training_ ? sim_.alloc(bytes_of(g_.desc(g_.output)), MemoryCategory::inputs) : -1;
    p_.resident_bytes = sim_.stats().current;
    sim_.stats().reset_peak();
    kept_[value_buf_[static_cast<size_t>(g_.input)]].what = "block input";
    tape_.assign(g_.ops.size(), {});
    filled_aux_.assign(g_.ops.size(), {});
    kept_inputs_.assign(plans_.size(), {});

    forward();
    p_.saved_bytes = sim_.stats().current_by_category[static_cast<size_t>(MemoryCategory::saved)];
    for (auto& [buf, facts] : kept_) {  // buffer ids grow in allocation order: forward's order
      if (facts.saved_by.empty()) continue;
      facts.bytes = sim_.bytes(buf);
      facts.counted = sim_.category(buf) == MemoryCategory::saved;
      p_.saved.push_back(std::move(facts));
    }
    if (training_) backward(dy);

    p_.peak_bytes = sim_.stats().peak;
    p_.peak_op = sim_.peak_op();
    p_.peak_phase = sim_.peak_phase();
    p_.at_peak = sim_.stats().at_peak;
    p_.peak_by_category = sim_.stats().peak_by_category;
    return std::move(p_);
  }

 private:
  int64_t ws(const Op& op, Phase phase) const { return workspace_ ? workspace_(op, phase) : 0; }

  void forward() {
    sim_.ref(value_buf_[static_cast<size_t>(g_.input)]);  // the value table's reference
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      sim_.set_moment(op.name, "forward");
      if (const int s = segment_of_[i]; s >= 0 && g_.segments[static_cast<size_t>(s)].first_op == static_cast<int>(i))
        keep_segment_inputs(static_cast<size_t>(s));
      const auto out = static_cast<size_t>(op.output);
      const std::vector<int> casts = cast_weights(op, saves_in_forward_[i]);
      if (output_aliases_input(op, training_) || op.in_place) {
        value_buf_[out] = value_buf_[static_cast<size_t>(op.inputs[0])];
        sim_.ref(value_buf_[out]);
        if (op.in_place) {
          SavedTensorFacts& f = kept_[value_buf_[out]];
          f.what = "output of " + op.name + " (in place over the " + f.what + ")";
          f.producer = op.name;
        }
      } else {
        value_buf_[out] = sim_.alloc(bytes_of(g_.desc(op.output)), saved_storage_[static_cast<size_t>(storage_[out])]
                                                                       ? MemoryCategory::saved
                                                                       : MemoryCategory::temporaries);
        kept_[value_buf_[out]].what = "output of " + op.name;
        kept_[value_buf_[out]].producer = op.name;
      }
      // Its aux, unless the op before made them and filled them (conv_bn_stats).
      std::vector<int> aux = std::move(filled_aux_[i]);
      if (aux.empty()) aux = make_aux(op, saves_in_forward_[i]);
      // The aux this op fills for a later op's call, made before its workspace.
      if (const int taker = training_ && statistics_ ? statistics_(static_cast<int>(i)) : -1; taker >= 0)
        filled_aux_.at(static_cast<size_t>(taker)) =
            make_aux(g_.ops.at(static_cast<size_t>(taker)), saves_in_forward_[static_cast<size_t>(taker)]);
      sim_.transient(ws(op, Phase::forward), MemoryCategory::workspace);
      if (saves_in_forward_[i])
        record(i, value_buf_, aux, casts);
      else
        for (int b : aux) sim_.unref(b);
      for (int b : casts) sim_.unref(b);  // the call's reference; the cache and the tape keep theirs
      release_last_uses(op, static_cast<int>(i), last_use_, value_buf_);
    }
    // Leaving torch.autocast clears its cache of cast parameters: those no backward saved go.
    for (int b : autocast_cache_) sim_.unref(b);
    autocast_cache_.clear();
  }

  // Mixed precision (Op::param_cast): the op's weights cast to the low dtype before it runs. A
  // parameter's copy is kept in autocast's cache until the forward ends (torch.autocast caches
  // casts of leaf tensors that need a gradient); a frozen conv's buffers are cast at each call and
  // not cached. The copies backward reads (SavedTensors::weights) are saved when the op records.
  std::vector<int> cast_weights(const Op& op, bool recorded) {
    std::vector<int> casts;
    if (!op.param_cast) return casts;
    const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, rg_));
    std::vector<const Param*> weights;
    for (int p : op.params) weights.push_back(&g_.params[static_cast<size_t>(p)]);
    for (int b : op.buffers) weights.push_back(&g_.buffers[static_cast<size_t>(b)]);
    for (size_t k = 0; k < weights.size(); ++k) {
      const bool saved =
          recorded && std::find(s.weights.begin(), s.weights.end(), static_cast<int>(k)) != s.weights.end();
      TensorDesc d = weights[k]->desc;
      d.dtype = *op.param_cast;
      casts.push_back(sim_.alloc(bytes_of(d), saved ? MemoryCategory::saved : MemoryCategory::temporaries));
      kept_[casts.back()].what = std::string(to_string(d.dtype)) + " copy of " + weights[k]->name;
      kept_[casts.back()].producer = op.name;
      if (k < op.params.size()) {
        sim_.ref(casts.back());
        autocast_cache_.push_back(casts.back());
      }
    }
    return casts;
  }

  std::vector<int> make_aux(const Op& op, bool saved) {
    std::vector<int> aux;
    if (!training_) return aux;
    const std::vector<TensorDesc> descs = aux_tensors(g_, op);
    for (size_t k = 0; k < descs.size(); ++k) {
      aux.push_back(sim_.alloc(bytes_of(descs[k]), saved ? MemoryCategory::saved : MemoryCategory::temporaries));
      kept_[aux.back()].what = aux_tensor_name(op, k);
      kept_[aux.back()].producer = op.name;
    }
    return aux;
  }

  // The op's tape takes a reference to every tensor its backward reads.
  void record(size_t i, const std::vector<int>& bufs, const std::vector<int>& aux, const std::vector<int>& casts = {}) {
    const Op& op = g_.ops[i];
    const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, rg_));
    if (!casts.empty())
      for (int k : s.weights) {
        sim_.ref(casts[static_cast<size_t>(k)]);
        tape_[i].push_back(casts[static_cast<size_t>(k)]);
      }
    for (int pos : s.inputs) {
      const int b = bufs[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])];
      sim_.ref(b);
      tape_[i].push_back(b);
    }
    if (s.output) {
      sim_.ref(bufs[static_cast<size_t>(op.output)]);
      tape_[i].push_back(bufs[static_cast<size_t>(op.output)]);
    }
    tape_[i].insert(tape_[i].end(), aux.begin(), aux.end());  // the tape takes the aux refs
    for (int b : tape_[i]) {
      std::vector<std::string>& by = kept_[b].saved_by;
      if (by.empty() || by.back() != op.name) by.push_back(op.name);
    }
  }

  void release_last_uses(const Op& op, int i, const std::vector<int>& last_use, const std::vector<int>& bufs) {
    std::vector<int> inputs = op.inputs;
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (int v : inputs)
      if (last_use[static_cast<size_t>(v)] == i) sim_.unref(bufs[static_cast<size_t>(v)]);
  }

  // A checkpointed segment holds its inputs from its start until its backward is done.
  void keep_segment_inputs(size_t s) {
    const RecomputePlan& plan = plans_.at(s);
    if (!plan.keeps_inputs) return;
    for (int v : plan.kept_inputs) {
      const int b = value_buf_[static_cast<size_t>(v)];
      sim_.ref(b);
      kept_inputs_[s].push_back(b);
      kept_[b].saved_by.push_back("checkpoint of " + g_.segments[s].name);
    }
  }

  // The segment's forward again, from its kept inputs, saving as a training forward does.
  void recompute(const RecomputePlan& plan) {
    // Per-value tables shared by every segment's recomputation, -1 outside one: the entries this
    // one sets are put back at its end (clearing whole tables per segment would be quadratic).
    std::vector<int>& bufs = rerun_buf_;
    std::vector<int>& last_use = rerun_last_use_;
    std::vector<int> touched = plan.kept_inputs;
    for (int j : plan.rerun_ops) {
      const Op& op = g_.ops[static_cast<size_t>(j)];
      touched.insert(touched.end(), op.inputs.begin(), op.inputs.end());
      touched.push_back(op.output);
    }
    const std::vector<int>& trigger_inputs = g_.ops[static_cast<size_t>(plan.trigger_op)].inputs;
    touched.insert(touched.end(), trigger_inputs.begin(), trigger_inputs.end());
    for (size_t k = 0; k < plan.kept_inputs.size(); ++k) {
      bufs[static_cast<size_t>(plan.kept_inputs[k])] = kept_inputs_[static_cast<size_t>(plan.segment)][k];
      sim_.ref(bufs[static_cast<size_t>(plan.kept_inputs[k])]);
    }
    for (int j : plan.rerun_ops)
      for (int v : g_.ops[static_cast<size_t>(j)].inputs) last_use[static_cast<size_t>(v)] = j;
    const bool trigger_runs = !plan.rerun_ops.empty() && plan.rerun_ops.back() == plan.trigger_op;
    if (!trigger_runs)  // what the trigger saves is held to the end, then its tape keeps it
      for (int v : g_.ops[static_cast<size_t>(plan.trigger_op)].inputs) last_use[static_cast<size_t>(v)] = -1;
    std::vector<int> held;  // the recomputation's own references, dropped when it ends
    for (int j : plan.rerun_ops) {
      const Op& op = g_.ops[static_cast<size_t>(j)];
      sim_.set_moment(op.name, "recompute");
      const auto out = static_cast<size_t>(op.output);
      const std::vector<int> casts = cast_weights(op, has_backward_[static_cast<size_t>(j)]);
      bufs[out] = sim_.alloc(bytes_of(g_.desc(op.output)),
                             saved_in_recompute_[out] ? MemoryCategory::saved : MemoryCategory::temporaries);
      const std::vector<int> aux = make_aux(op, has_backward_[static_cast<size_t>(j)]);
      sim_.transient(ws(op, Phase::forward), MemoryCategory::workspace);
      if (has_backward_[static_cast<size_t>(j)])
        record(static_cast<size_t>(j), bufs, aux, casts);
      else
        for (int b : aux) sim_.unref(b);
      for (int b : casts) sim_.unref(b);  // the call's reference; the cache and the tape keep theirs
      release_last_uses(op, j, last_use, bufs);
      if (last_use[out] < 0) held.push_back(bufs[out]);
    }
    for (int v : plan.kept_inputs)
      if (last_use[static_cast<size_t>(v)] < 0) held.push_back(bufs[static_cast<size_t>(v)]);
    // Stopped before its trigger (which saves only inputs): the trigger's tape keeps them, and,
    // under mixed precision, the copies of its weights autocast cast before it.
    if (!trigger_runs) {
      const Op& trigger = g_.ops[static_cast<size_t>(plan.trigger_op)];
      sim_.set_moment(trigger.name, "recompute");
      const std::vector<int> casts = cast_weights(trigger, true);
      record(static_cast<size_t>(plan.trigger_op), bufs, {}, casts);
      for (int b : casts) sim_.unref(b);
    }
    // torch.utils.checkpoint reruns the segment under autocast entered afresh; leaving it clears
    // the cache of cast parameters.
    for (int b : autocast_cache_) sim_.unref(b);
    autocast_cache_.clear();
    for (int b : held) sim_.unref(b);
    for (int v : touched) bufs[static_cast<size_t>(v)] = last_use[static_cast<size_t>(v)] = -1;
  }

  void backward(int dy) {
    std::vector<int> grad(g_.values.size(), -1);
    const bool loss_scaling = uses_loss_scaling(g_, training_);
    if (loss_scaling) {  // backward starts from a scaled copy of the upstream gradient
      sim_.set_moment("loss scaling", "backward");
      grad[static_cast<size_t>(g_.output)] = sim_.alloc(bytes_of(g_.desc(g_.output)), MemoryCategory::temporaries);
    } else {
      sim_.ref(dy);
      grad[static_cast<size_t>(g_.output)] = dy;
    }
    for (size_t i = g_.ops.size(); i-- > 0;) {
      if (!has_backward_[i]) continue;
      const Op& op = g_.ops[i];
      for (size_t p : triggered_at_[i]) recompute(plans_[p]);
      sim_.set_moment(op.name, "backward");
      const int g = grad[static_cast<size_t>(op.output)];
      grad[static_cast<size_t>(op.output)] = -1;
      std::vector<int> gi(op.inputs.size(), -1);
      for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
        const int v = op.inputs[pos];
        if (!rg_[static_cast<size_t>(v)]) continue;
        if (grad_flow(op, static_cast<int>(pos)) == GradFlow::alias) {
          sim_.ref(g);
          gi[pos] = g;
        } else {
          gi[pos] = sim_.alloc(bytes_of(g_.desc(v)), MemoryCategory::temporaries);
        }
      }
      // Under mixed precision the op computes its parameters' gradients in the low dtype; each is
      // then cast to float32 (ToCopyBackward) once the op's saved tensors are let go.
      std::vector<int> low_grads;
      for (int prm : op.params) {
        TensorDesc d = g_.params[static_cast<size_t>(prm)].desc;
        if (op.param_cast) {
          d.dtype = *op.param_cast;
          low_grads.push_back(sim_.alloc(bytes_of(d), MemoryCategory::temporaries));
          continue;
        }
        sim_.alloc(bytes_of(d), MemoryCategory::gradients);
        p_.gradient_bytes = checked_add(p_.gradient_bytes, bytes_of(d));
      }
      sim_.transient(ws(op, Phase::backward), MemoryCategory::workspace);
      for (int b : tape_[i]) sim_.unref(b);
      tape_[i].clear();
      sim_.unref(g);
      for (size_t k = 0; k < low_grads.size(); ++k) {
        const int64_t b = bytes_of(g_.params[static_cast<size_t>(op.params[k])].desc);
        sim_.alloc(b, MemoryCategory::gradients);
        p_.gradient_bytes = checked_add(p_.gradient_bytes, b);
        sim_.unref(low_grads[k]);
      }
      for (size_t p : released_at_[i])
        for (int b : kept_inputs_[static_cast<size_t>(plans_[p].segment)]) sim_.unref(b);
      for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
        if (gi[pos] < 0) continue;
        int& slot = grad[static_cast<size_t>(op.inputs[pos])];
        if (slot < 0) {
          slot = gi[pos];
        } else if (sim_.refs(slot) == 1) {
          sim_.unref(gi[pos]);  // added in place into the slot
        } else if (sim_.refs(gi[pos]) == 1) {
          sim_.unref(slot);  // the slot is added in place into the new gradient
          slot = gi[pos];
        } else {
          const int sum = sim_.alloc(bytes_of(g_.desc(op.inputs[pos])), MemoryCategory::temporaries);
          sim_.unref(slot);
          sim_.unref(gi[pos]);
          slot = sum;
        }
      }
    }
    if (loss_scaling) {  // unscaling the gradients: an inverse scale and a found-inf flag
      sim_.set_moment("loss scaling", "backward");
      sim_.transient(kLossScalerStepBytes, MemoryCategory::temporaries);
    }
  }

  const Graph& g_;
  bool training_;
  const WorkspaceQuery& workspace_;
  const StatisticsQuery& statistics_;
  std::vector<bool> rg_;
  std::vector<std::vector<int>> filled_aux_;  // per op: aux an earlier op made and filled for it
  std::vector<RecomputePlan> plans_;
  std::vector<int> segment_of_;
  std::vector<std::vector<size_t>> triggered_at_, released_at_;  // per op: plans (indices into plans_)
  std::vector<int> rerun_buf_, rerun_last_use_;                  // recompute()'s per-value tables
  std::vector<bool> has_backward_;                               // training and the op's output needs a gradient
  std::vector<bool> saves_in_forward_;                           // has a backward and is in no recompute segment
  std::vector<bool> saved_in_recompute_;  // per value: saved by an op of a segment when it reruns
  std::vector<bool> saved_storage_;       // per value (its storage's first value): kept at the end of forward
  std::vector<int> storage_;              // per value: the value whose storage it lives in (in place ops)
  std::vector<int> last_use_;
  std::vector<int> value_buf_;
  std::vector<std::vector<int>> tape_;
  std::vector<std::vector<int>> kept_inputs_;  // per segment: the buffers its checkpoint holds
  // Who made each buffer and who keeps it, for the attribution of saved bytes.
  std::map<int, SavedTensorFacts> kept_;
  std::vector<int> autocast_cache_;  // cast parameters held until the forward ends
  BufferSim sim_;
  MemoryPrediction p_;
};

}  // namespace

MemoryPrediction predict_memory(const Graph& graph, bool training, const WorkspaceQuery& workspace,
                                const StatisticsQuery& statistics) {
  return StepReplay(graph, training, workspace, statistics).run();
}

}  // namespace convbench
