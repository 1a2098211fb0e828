#include "runtime/executor.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "ops/autograd_rules.hpp"
#include "ops/param_values.hpp"
#include "runtime/host_io.hpp"

namespace convbench {
namespace {

// Puts back the entries one recomputation set in the executor's shared per-value tables (each op
// of the segment reads and writes only its inputs and output, all listed in `touched`), also when
// a kernel throws.
class RerunTablesGuard {
 public:
  RerunTablesGuard(std::vector<Tensor>& values, std::vector<int>& last_use, std::vector<int> touched)
      : values_(values), last_use_(last_use), touched_(std::move(touched)) {}
  ~RerunTablesGuard() {
    for (int v : touched_) {
      values_[static_cast<size_t>(v)] = Tensor{};
      last_use_[static_cast<size_t>(v)] = -1;
    }
  }
  RerunTablesGuard(const RerunTablesGuard&) = delete;
  RerunTablesGuard& operator=(const RerunTablesGuard&) = delete;

 private:
  std::vector<Tensor>& values_;
  std::vector<int>& last_use_;
  std::vector<int> touched_;
};

}  // namespace

Executor::Executor(const Graph& graph, Backend& backend, bool training)
    : graph_(graph), backend_(backend), training_(training) {
  const size_t nv = graph.values.size(), nops = graph.ops.size();
  requires_grad_ = graph.requires_grad();
  has_backward_.assign(nops, false);
  records_forward_.assign(nops, false);
  saved_value_.assign(nv, false);
  saved_when_rerun_.assign(nv, false);
  last_use_.assign(nv, -1);
  rerun_values_.resize(nv);
  rerun_last_use_.assign(nv, -1);
  checkpoint_of_op_.assign(nops, -1);
  if (training)
    for (const RecomputeSegment& seg : graph.segments) {
      Checkpoint c;
      c.first = seg.first_op;
      for (int i = seg.first_op; i < seg.end_op; ++i)
        checkpoint_of_op_[static_cast<size_t>(i)] = static_cast<int>(checkpoints_.size());
      checkpoints_.push_back(std::move(c));
    }
  // A value written over in place shares its tensor with the value it overwrote: the tensor is
  // kept when any of them is saved, so it is allocated as saved from the start.
  std::vector<int> owner(nv);
  for (size_t v = 0; v < nv; ++v) owner[v] = static_cast<int>(v);
  std::vector<bool> saved(nv, false);
  for (size_t i = 0; i < nops; ++i) {
    const Op& op = graph.ops[i];
    for (int v : op.inputs) last_use_[static_cast<size_t>(v)] = static_cast<int>(i);
    if (op.in_place) owner[static_cast<size_t>(op.output)] = owner[static_cast<size_t>(op.inputs.at(0))];
    has_backward_[i] = training && requires_grad_[static_cast<size_t>(op.output)];
    if (!has_backward_[i]) continue;
    records_forward_[i] = checkpoint_of_op_[i] < 0;
    std::vector<bool>& mark = records_forward_[i] ? saved : saved_when_rerun_;
    const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, requires_grad_));
    for (int pos : s.inputs) mark[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])] = true;
    if (s.output) mark[static_cast<size_t>(op.output)] = true;
  }
  plan_checkpoints();
  for (const Checkpoint& c : checkpoints_)
    if (c.trigger >= 0)
      for (int v : c.inputs) saved[static_cast<size_t>(v)] = true;
  for (size_t v = 0; v < nv; ++v)
    if (saved[v]) saved_value_[static_cast<size_t>(owner[v])] = true;
  for (size_t v = 0; v < nv; ++v) saved_value_[v] = saved_value_[static_cast<size_t>(owner[v])];
}

// Each segment: which values it must keep, which op's backward recomputes it, how far the
// recomputation runs (it stops once everything the segment's backward reads exists again: an op
// that saves only its inputs need not run, one that saves its output or aux tensors must) and
// after which op's backward its inputs are let go (the first op that saved anything).
void Executor::plan_checkpoints() {
  // Per value: the checkpoint (+1) whose ops made it, and the last one (+1) that listed it as an
  // input: stamps instead of a fresh flag per value and checkpoint, which a network with one
  // checkpoint per slot would pay quadratically.
  std::vector<size_t> made_in(graph_.values.size(), 0), input_of(graph_.values.size(), 0);
  for (size_t k = 0; k < checkpoints_.size(); ++k) {
    Checkpoint& c = checkpoints_[k];
    const RecomputeSegment& seg = graph_.segments[k];
    bool needs_run = false;
    for (int i = seg.first_op; i < seg.end_op; ++i) {
      const Op& op = graph_.ops[static_cast<size_t>(i)];
      for (int v : op.inputs) {
        const auto value = static_cast<size_t>(v);
        if (made_in[value] == k + 1 || input_of[value] == k + 1) continue;
        input_of[value] = k + 1;
        c.inputs.push_back(v);
      }
      made_in[static_cast<size_t>(op.output)] = k + 1;
      if (!has_backward_[static_cast<size_t>(i)]) continue;
      const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, requires_grad_));
      const bool makes_saved = s.output || !aux_tensors(graph_, op).empty();
      if (s.inputs.empty() && !makes_saved) continue;
      if (c.release < 0) c.release = i;
      c.trigger = i;
      needs_run = makes_saved;
    }
    c.rerun_end = c.trigger < 0 ? c.first : (needs_run ? c.trigger + 1 : c.trigger);
  }
}

Tensor Executor::allocate(const TensorDesc& desc, MemoryCategory category) const {
  return make_tensor(backend_.allocator(), desc, category);
}

ModelState Executor::init_state(uint64_t seed) const {
  ModelState s;
  if (graph_.derivation) {  // a folded graph: from its source's values (ops/param_values.hpp)
    const GraphValues v = initial_graph_values(graph_, seed);
    for (size_t i = 0; i < graph_.params.size(); ++i) {
      s.params.push_back(allocate(graph_.params[i].desc, MemoryCategory::parameters));
      upload(backend_, s.params.back(), v.params[i]);
    }
    for (size_t i = 0; i < graph_.buffers.size(); ++i) {
      s.buffers.push_back(allocate(graph_.buffers[i].desc, MemoryCategory::buffers));
      upload(backend_, s.buffers.back(), v.buffers[i]);
    }
    s.grads.resize(graph_.params.size());
    add_loss_scaler(s);
    return s;
  }
  // One tensor at a time (a network's values need not all be on the host at once), drawn in the
  // order initial_graph_values draws them.
  std::mt19937_64 rng(seed);
  for (const Param& p : graph_.params) {
    Tensor t = allocate(p.desc, MemoryCategory::parameters);
    upload(backend_, t, initial_values(p, rng));
    s.params.push_back(std::move(t));
  }
  // After every parameter, so that a frozen conv's random weight does not shift the others'.
  for (const Param& b : graph_.buffers) {
    Tensor t = allocate(b.desc, MemoryCategory::buffers);
    upload(backend_, t, initial_values(b, rng));
    s.buffers.push_back(std::move(t));
  }
  s.grads.resize(graph_.params.size());
  add_loss_scaler(s);
  return s;
}

void Executor::add_loss_scaler(ModelState& s) const {
  if (!uses_loss_scaling(graph_, training_)) return;
  s.loss_scaler = LossScaler{};
  s.loss_scaler_state =
      allocate(TensorDesc{{kLossScalerStateBytes}, DType::uint8, Layout::channels_first}, MemoryCategory::buffers);
}

void Executor::with_workspace(const Op& op, Phase phase, const std::function<void(void*)>& run) {
  const int64_t bytes = backend_.workspace_bytes(graph_, op, phase, training_);
  if (bytes <= 0) {
    run(nullptr);
    return;
  }
  Tensor ws = allocate(TensorDesc{{bytes}, DType::uint8, Layout::channels_first}, MemoryCategory::workspace);
  run(ws.raw());
}

Tensor Executor::cast_copy(const Tensor& src, DType dtype, MemoryCategory category) {
  TensorDesc d = src.desc;
  d.dtype = dtype;
  Tensor dst = allocate(d, category);
  // The backend's kernels for a cast op, run on tensors that are no graph values.
  Op cast;
  cast.kind = OpKind::cast;
  cast.name = "autocast";
  cast.cast_to = dtype;
  ForwardCall call{.graph = graph_, .op = cast, .inputs = {&src}, .output = &dst};
  backend_.forward(call);
  return dst;
}

std::vector<Tensor> Executor::cast_weights(const Op& op, ModelState& state, const SavedTensors& saved, bool record) {
  std::vector<Tensor> casts;
  if (!op.param_cast) return casts;
  std::vector<const Tensor*> weights;
  for (int p : op.params) weights.push_back(&state.params[static_cast<size_t>(p)]);
  for (int b : op.buffers) weights.push_back(&state.buffers[static_cast<size_t>(b)]);
  for (size_t k = 0; k < weights.size(); ++k) {
    const bool kept =
        record && std::find(saved.weights.begin(), saved.weights.end(), static_cast<int>(k)) != saved.weights.end();
    casts.push_back(cast_copy(*weights[k], *op.param_cast, kept ? MemoryCategory::saved : MemoryCategory::temporaries));
    if (k < op.params.size()) autocast_cache_.push_back(casts.back());
  }
  return casts;
}

void Executor::run_forward_op(size_t i, std::vector<Tensor>& values, ModelState& state, bool record,
                              const std::vector<bool>& saved) {
  const Op& op = graph_.ops[i];
  const auto out = static_cast<size_t>(op.output);
  if (hook_) hook_(static_cast<int>(i), Phase::forward, true);
  const SavedTensors kept = saved_tensors(op, inputs_requiring_grad(op, requires_grad_));
  std::vector<Tensor> casts = cast_weights(op, state, kept, record);
  if (output_aliases_input(op, training_)) {
    values[out] = values[static_cast<size_t>(op.inputs[0])];
  } else {
    // In place: the output is the input's tensor, which the kernel reads and overwrites.
    values[out] = op.in_place ? values[static_cast<size_t>(op.inputs[0])]
                              : allocate(graph_.desc(op.output),
                                         saved[out] ? MemoryCategory::saved : MemoryCategory::temporaries);
    // Its aux, unless the op before made them (the batch norm whose statistics a conv filled).
    std::vector<Tensor> aux = std::move(filled_aux_[i]);
    filled_aux_[i].clear();
    if (training_ && aux.empty())
      for (const TensorDesc& a : aux_tensors(graph_, op))
        aux.push_back(allocate(a, record ? MemoryCategory::saved : MemoryCategory::temporaries));
    // The aux this op fills for a later one (Backend::fills_statistics_of), made now.
    const int filled = training_ ? backend_.fills_statistics_of(graph_, static_cast<int>(i)) : -1;
    if (filled >= 0) {
      if (recomputing_ || checkpoint_of_op_[i] >= 0 || checkpoint_of_op_[static_cast<size_t>(filled)] >= 0)
        throw std::logic_error("executor: " + op.name + " fills another op's statistics inside a recompute segment");
      const Op& taker = graph_.ops.at(static_cast<size_t>(filled));
      for (const TensorDesc& a : aux_tensors(graph_, taker))
        filled_aux_[static_cast<size_t>(filled)].push_back(allocate(
            a, records_forward_[static_cast<size_t>(filled)] ? MemoryCategory::saved : MemoryCategory::temporaries));
    }
    ForwardCall call{.graph = graph_,
                     .op = op,
                     .output = &values[out],
                     .training = training_,
                     .seed = dropout_seed_ + (dropout_seed_per_op_ ? i : 0)};
    for (int v : op.inputs) call.inputs.push_back(&values[static_cast<size_t>(v)]);
    // Under mixed precision the op reads its weights' cast copies: parameters first, then buffers.
    for (size_t k = 0; k < op.params.size(); ++k)
      call.params.push_back(casts.empty() ? &state.params[static_cast<size_t>(op.params[k])] : &casts[k]);
    for (size_t k = 0; k < op.buffers.size(); ++k)
      call.buffers.push_back(casts.empty() ? &state.buffers[static_cast<size_t>(op.buffers[k])]
                                           : &casts[op.params.size() + k]);
    for (Tensor& a : aux) call.aux.push_back(&a);
    if (filled >= 0)
      for (Tensor& a : filled_aux_[static_cast<size_t>(filled)]) call.filled_aux.push_back(&a);
    with_workspace(op, Phase::forward, [&](void* ws) {
      call.workspace = ws;
      backend_.forward(call);
    });
    if (record) tape_[i].aux = std::move(aux);
  }
  if (record) {
    const SavedTensors& s = kept;
    tape_[i].inputs.resize(op.inputs.size());
    for (int pos : s.inputs)
      tape_[i].inputs[static_cast<size_t>(pos)] = values[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])];
    if (s.output) tape_[i].output = values[out];
    if (!casts.empty()) {
      tape_[i].weights.resize(casts.size());
      for (int k : s.weights) tape_[i].weights[static_cast<size_t>(k)] = casts[static_cast<size_t>(k)];
    }
  }
  if (hook_) hook_(static_cast<int>(i), Phase::forward, false);
}

Tensor Executor::forward(ModelState& state, const Tensor& input) {
  if (input.desc.shape != graph_.desc(graph_.input).shape)
    throw std::invalid_argument("forward: input shape does not match the graph");
  std::vector<Tensor> values(graph_.values.size());
  values[static_cast<size_t>(graph_.input)] = input;
  tape_.assign(graph_.ops.size(), Record{});
  filled_aux_.assign(graph_.ops.size(), {});
  for (Checkpoint& c : checkpoints_) c.kept.clear();
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    const Op& op = graph_.ops[i];
    if (const int k = checkpoint_of_op_[i]; k >= 0) {
      Checkpoint& c = checkpoints_[static_cast<size_t>(k)];
      if (c.first == static_cast<int>(i) && c.trigger >= 0)
        for (int v : c.inputs) c.kept.push_back(values[static_cast<size_t>(v)]);
    }
    run_forward_op(i, values, state, records_forward_[i], saved_value_);
    for (int v : op.inputs)
      if (last_use_[static_cast<size_t>(v)] == static_cast<int>(i)) values[static_cast<size_t>(v)] = Tensor{};
  }
  autocast_cache_.clear();  // leaving torch.autocast: the copies no backward saved go
  have_tape_ = training_;
  return std::move(values[static_cast<size_t>(graph_.output)]);
}

// The segment's forward again, from the inputs it kept, recording what its ops save; the values
// no op saved are let go as in a forward pass, and the rest when this returns.
void Executor::recompute(Checkpoint& c, ModelState& state) {
  // Tables per value shared by every recomputation (fresh ones per checkpoint would cost a network
  // with a checkpoint per slot time quadratic in its length); the guard clears what this one set.
  std::vector<Tensor>& values = rerun_values_;
  std::vector<int>& last_use = rerun_last_use_;
  std::vector<int> touched = c.inputs;
  for (int i = c.first; i < c.rerun_end; ++i) touched.push_back(graph_.ops[static_cast<size_t>(i)].output);
  const RerunTablesGuard guard(values, last_use, std::move(touched));
  for (size_t k = 0; k < c.inputs.size(); ++k) values[static_cast<size_t>(c.inputs[k])] = c.kept[k];
  for (int i = c.first; i < c.rerun_end; ++i)
    for (int v : graph_.ops[static_cast<size_t>(i)].inputs) last_use[static_cast<size_t>(v)] = i;
  // The op that stops the rerun before running (it saves only inputs) still keeps them.
  if (c.rerun_end == c.trigger)
    for (int v : graph_.ops[static_cast<size_t>(c.trigger)].inputs) last_use[static_cast<size_t>(v)] = c.trigger;
  recomputing_ = true;
  for (int i = c.first; i < c.rerun_end; ++i) {
    const auto op = static_cast<size_t>(i);
    run_forward_op(op, values, state, has_backward_[op], saved_when_rerun_);
    for (int v : graph_.ops[op].inputs)
      if (last_use[static_cast<size_t>(v)] == i) values[static_cast<size_t>(v)] = Tensor{};
  }
  recomputing_ = false;
  if (c.rerun_end == c.trigger) {
    const Op& op = graph_.ops[static_cast<size_t>(c.trigger)];
    const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, requires_grad_));
    Record& r = tape_[static_cast<size_t>(c.trigger)];
    r.inputs.resize(op.inputs.size());
    for (int pos : s.inputs)
      r.inputs[static_cast<size_t>(pos)] = values[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])];
    // Under mixed precision autocast casts the op's weights before the op saves what it reads:
    // those copies are saved too.
    const std::vector<Tensor> casts = cast_weights(op, state, s, true);
    if (!casts.empty()) {
      r.weights.resize(casts.size());
      for (int k : s.weights) r.weights[static_cast<size_t>(k)] = casts[static_cast<size_t>(k)];
    }
  }
  // torch.utils.checkpoint reruns the segment under autocast entered afresh; leaving it clears the
  // cache: the cast copies no backward saved go.
  autocast_cache_.clear();
}

void Executor::accumulate(Tensor& slot, Tensor incoming) {
  if (!slot.defined()) {
    slot = std::move(incoming);
  } else if (slot.storage.use_count() == 1) {
    backend_.accumulate(slot, incoming);
  } else if (incoming.storage.use_count() == 1) {
    backend_.accumulate(incoming, slot);
    slot = std::move(incoming);
  } else {
    Tensor sum = allocate(slot.desc, MemoryCategory::temporaries);
    backend_.add(sum, slot, incoming);
    slot = std::move(sum);
  }
}

void Executor::backward(ModelState& state, const Tensor& grad_output) {
  if (!have_tape_) throw std::logic_error("backward needs a preceding forward in training mode");
  have_tape_ = false;
  std::vector<Tensor> grads(graph_.values.size());
  Tensor& seed = grads[static_cast<size_t>(graph_.output)];
  if (state.loss_scaler) {  // GradScaler's scale(loss): backward starts from the scaled gradient
    seed = allocate(grad_output.desc, MemoryCategory::temporaries);
    backend_.scale(seed, grad_output, state.loss_scaler->scale);
  } else {
    seed = grad_output;
  }
  for (size_t i = graph_.ops.size(); i-- > 0;) {
    if (!has_backward_[i]) continue;
    const Op& op = graph_.ops[i];
    Checkpoint* checkpoint =
        checkpoint_of_op_[i] >= 0 ? &checkpoints_[static_cast<size_t>(checkpoint_of_op_[i])] : nullptr;
    if (checkpoint && checkpoint->trigger == static_cast<int>(i)) recompute(*checkpoint, state);
    if (hook_) hook_(static_cast<int>(i), Phase::backward, true);
    Tensor g = std::move(grads[static_cast<size_t>(op.output)]);
    if (!g.defined()) throw std::logic_error(op.name + ": no gradient reached this op");
    std::vector<Tensor> grad_in(op.inputs.size());
    BackwardCall call{.graph = graph_, .op = op, .grad_output = &g};
    for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
      const int v = op.inputs[pos];
      // An op that saved nothing (a recompute segment's add after its last saving op) has no tape.
      const bool saved = pos < tape_[i].inputs.size() && tape_[i].inputs[pos].defined();
      call.inputs.push_back(saved ? &tape_[i].inputs[pos] : nullptr);
      Tensor* target = nullptr;
      if (requires_grad_[static_cast<size_t>(v)]) {
        if (grad_flow(op, static_cast<int>(pos)) == GradFlow::alias) {
          grad_in[pos] = g;
        } else {
          grad_in[pos] = allocate(graph_.desc(v), MemoryCategory::temporaries);
          target = &grad_in[pos];
        }
      }
      call.grad_inputs.push_back(target);
    }
    call.output = tape_[i].output.defined() ? &tape_[i].output : nullptr;
    for (const Tensor& a : tape_[i].aux) call.aux.push_back(&a);
    for (size_t k = 0; k < op.buffers.size(); ++k) {  // a frozen conv's weights: their cast copies when kept
      const size_t w = op.params.size() + k;
      const bool cast_copy_kept = w < tape_[i].weights.size() && tape_[i].weights[w].defined();
      call.buffers.push_back(cast_copy_kept ? &tape_[i].weights[w]
                                            : &state.buffers[static_cast<size_t>(op.buffers[k])]);
    }
    // Mixed precision: the op's parameter gradients in the low dtype, cast to float32 below.
    std::vector<Tensor> low_grads(op.param_cast ? op.params.size() : 0);
    for (size_t k = 0; k < op.params.size(); ++k) {
      const auto pi = static_cast<size_t>(op.params[k]);
      if (state.grads[pi].defined())
        throw std::logic_error(op.name + ": parameter gradient already set (call clear_grads between steps)");
      const bool cast_copy_kept = k < tape_[i].weights.size() && tape_[i].weights[k].defined();
      call.params.push_back(cast_copy_kept ? &tape_[i].weights[k] : &state.params[pi]);
      if (op.param_cast) {
        TensorDesc d = state.params[pi].desc;
        d.dtype = *op.param_cast;
        low_grads[k] = allocate(d, MemoryCategory::temporaries);
        call.grad_params.push_back(&low_grads[k]);
      } else {
        state.grads[pi] = allocate(state.params[pi].desc, MemoryCategory::gradients);
        call.grad_params.push_back(&state.grads[pi]);
      }
    }
    // An op without parameters whose every input gradient is the output's, passed on (add), has
    // nothing for its backend to compute.
    bool needs_backend = !op.params.empty();
    for (size_t pos = 0; pos < op.inputs.size(); ++pos)
      needs_backend = needs_backend || grad_flow(op, static_cast<int>(pos)) == GradFlow::compute;
    if (needs_backend) {
      with_workspace(op, Phase::backward, [&](void* ws) {
        call.workspace = ws;
        backend_.backward(call);
      });
    }
    tape_[i] = Record{};
    g = Tensor{};
    for (size_t k = 0; k < low_grads.size(); ++k) {
      state.grads[static_cast<size_t>(op.params[k])] =
          cast_copy(low_grads[k], DType::float32, MemoryCategory::gradients);
      low_grads[k] = Tensor{};
    }
    if (checkpoint && checkpoint->release == static_cast<int>(i)) checkpoint->kept.clear();
    for (size_t pos = 0; pos < op.inputs.size(); ++pos)
      if (grad_in[pos].defined()) accumulate(grads[static_cast<size_t>(op.inputs[pos])], std::move(grad_in[pos]));
    if (hook_) hook_(static_cast<int>(i), Phase::backward, false);
  }
  if (state.loss_scaler) unscale_gradients(state);
}

// GradScaler's unscale_ and update: every parameter gradient times 1/scale, checked for inf and
// NaN (the inverse scale and the found-inf flag are allocated for it, as GradScaler does), then
// the scale backs off or grows.
void Executor::unscale_gradients(ModelState& state) {
  Tensor flags =
      allocate(TensorDesc{{kLossScalerStepBytes}, DType::uint8, Layout::channels_first}, MemoryCategory::temporaries);
  std::vector<Tensor*> grads;
  for (Tensor& g : state.grads)
    if (g.defined()) grads.push_back(&g);
  const bool finite = backend_.unscale(grads, state.loss_scaler->inverse(), flags);
  state.loss_scaler->update(!finite);
}

void Executor::clear_grads(ModelState& state) {
  for (Tensor& g : state.grads) g = Tensor{};
}

}  // namespace convbench
