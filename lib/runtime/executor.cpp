#include "runtime/executor.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "ops/autograd_rules.hpp"
#include "ops/param_values.hpp"
#include "runtime/host_io.hpp"

namespace convbench {

Executor::Executor(const Graph& graph, Backend& backend, bool training)
    : graph_(graph), backend_(backend), training_(training) {
  const size_t nv = graph.values.size(), nops = graph.ops.size();
  requires_grad_ = graph.requires_grad();
  recorded_.assign(nops, false);
  saved_value_.assign(nv, false);
  last_use_.assign(nv, -1);
  for (size_t i = 0; i < nops; ++i) {
    const Op& op = graph.ops[i];
    for (int v : op.inputs) last_use_[static_cast<size_t>(v)] = static_cast<int>(i);
    recorded_[i] = training && requires_grad_[static_cast<size_t>(op.output)];
    if (!recorded_[i]) continue;
    const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, requires_grad_));
    for (int pos : s.inputs) saved_value_[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])] = true;
    if (s.output) saved_value_[static_cast<size_t>(op.output)] = true;
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
  return s;
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

Tensor Executor::forward(ModelState& state, const Tensor& input) {
  if (input.desc.shape != graph_.desc(graph_.input).shape)
    throw std::invalid_argument("forward: input shape does not match the graph");
  std::vector<Tensor> values(graph_.values.size());
  values[static_cast<size_t>(graph_.input)] = input;
  tape_.assign(graph_.ops.size(), Record{});
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    const Op& op = graph_.ops[i];
    const auto out = static_cast<size_t>(op.output);
    if (hook_) hook_(static_cast<int>(i), Phase::forward, true);
    if (output_aliases_input(op, training_)) {
      values[out] = values[static_cast<size_t>(op.inputs[0])];
    } else {
      values[out] =
          allocate(graph_.desc(op.output), saved_value_[out] ? MemoryCategory::saved : MemoryCategory::temporaries);
      std::vector<Tensor> aux;
      if (training_)
        for (const TensorDesc& a : aux_tensors(graph_, op))
          aux.push_back(allocate(a, recorded_[i] ? MemoryCategory::saved : MemoryCategory::temporaries));
      ForwardCall call{
          graph_, op, {}, {}, {}, &values[out], {}, training_, dropout_seed_ + (dropout_seed_per_op_ ? i : 0), nullptr};
      for (int v : op.inputs) call.inputs.push_back(&values[static_cast<size_t>(v)]);
      for (int p : op.params) call.params.push_back(&state.params[static_cast<size_t>(p)]);
      for (int b : op.buffers) call.buffers.push_back(&state.buffers[static_cast<size_t>(b)]);
      for (Tensor& a : aux) call.aux.push_back(&a);
      with_workspace(op, Phase::forward, [&](void* ws) {
        call.workspace = ws;
        backend_.forward(call);
      });
      if (recorded_[i]) tape_[i].aux = std::move(aux);
    }
    if (recorded_[i]) {
      const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, requires_grad_));
      tape_[i].inputs.resize(op.inputs.size());
      for (int pos : s.inputs)
        tape_[i].inputs[static_cast<size_t>(pos)] = values[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])];
      if (s.output) tape_[i].output = values[out];
    }
    for (int v : op.inputs)
      if (last_use_[static_cast<size_t>(v)] == static_cast<int>(i)) values[static_cast<size_t>(v)] = Tensor{};
    if (hook_) hook_(static_cast<int>(i), Phase::forward, false);
  }
  have_tape_ = training_;
  return std::move(values[static_cast<size_t>(graph_.output)]);
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
  grads[static_cast<size_t>(graph_.output)] = grad_output;
  for (size_t i = graph_.ops.size(); i-- > 0;) {
    if (!recorded_[i]) continue;
    const Op& op = graph_.ops[i];
    if (hook_) hook_(static_cast<int>(i), Phase::backward, true);
    Tensor g = std::move(grads[static_cast<size_t>(op.output)]);
    if (!g.defined()) throw std::logic_error(op.name + ": no gradient reached this op");
    std::vector<Tensor> grad_in(op.inputs.size());
    BackwardCall call{graph_, op, {}, nullptr, {}, {}, &g, {}, {}, nullptr};
    for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
      const int v = op.inputs[pos];
      call.inputs.push_back(tape_[i].inputs[pos].defined() ? &tape_[i].inputs[pos] : nullptr);
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
    for (int b : op.buffers) call.buffers.push_back(&state.buffers[static_cast<size_t>(b)]);
    for (int p : op.params) {
      const auto pi = static_cast<size_t>(p);
      if (state.grads[pi].defined())
        throw std::logic_error(op.name + ": parameter gradient already set (call clear_grads between steps)");
      state.grads[pi] = allocate(state.params[pi].desc, MemoryCategory::gradients);
      call.params.push_back(&state.params[pi]);
      call.grad_params.push_back(&state.grads[pi]);
    }
    const bool needs_backend = op.kind != OpKind::add;  // add's gradients are aliases only
    if (needs_backend) {
      with_workspace(op, Phase::backward, [&](void* ws) {
        call.workspace = ws;
        backend_.backward(call);
      });
    }
    tape_[i] = Record{};
    g = Tensor{};
    for (size_t pos = 0; pos < op.inputs.size(); ++pos)
      if (grad_in[pos].defined()) accumulate(grads[static_cast<size_t>(op.inputs[pos])], std::move(grad_in[pos]));
    if (hook_) hook_(static_cast<int>(i), Phase::backward, false);
  }
}

void Executor::clear_grads(ModelState& state) {
  for (Tensor& g : state.grads) g = Tensor{};
}

}  // namespace convbench
