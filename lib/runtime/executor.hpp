// Runs a variant's graph on a backend: forward, and in training backward, with exactly the
// lifetimes PyTorch autograd gives tensors (see analysis/memory_model.hpp for the rules, which
// predict this executor's allocator statistics byte for byte). Tensors are reference counted; a
// tensor is freed when its last holder (value table, tape of saved tensors, gradient slot, the
// caller) lets go. The executor knows nothing about any particular backend.
//
// Memory policies are in the graph (graph/graph.hpp): an op with in_place writes its output into
// its input's tensor; the ops of a recompute segment save nothing in forward, the segment keeps
// its inputs, and its forward runs again (saving this time) when backward reaches its last op
// that saved anything, as torch.utils.checkpoint(use_reentrant=False) with early stop does
// (analysis/recompute_plan.hpp states the rule; this file implements it on its own).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "graph/graph.hpp"
#include "ops/op_definition.hpp"
#include "runtime/backend.hpp"
#include "runtime/loss_scaler.hpp"

namespace convbench {

// The tensors a variant owns across steps: parameters, buffers, and (after backward) gradients.
struct ModelState {
  std::vector<Tensor> params;
  std::vector<Tensor> buffers;
  std::vector<Tensor> grads;  // one per param; undefined until backward, cleared by clear_grads()
  // Training under amp_float16: GradScaler's dynamic loss scale (runtime/loss_scaler.hpp), and
  // the device bytes that hold it (its scale and growth tracker, as GradScaler keeps them).
  std::optional<LossScaler> loss_scaler;
  Tensor loss_scaler_state;
};

// Called around every op: (op index, phase, true before / false after). A recompute segment's
// forward run again in backward calls it with Phase::forward while recomputing() is true.
using OpHook = std::function<void(int op, Phase phase, bool begin)>;

class Executor {
 public:
  Executor(const Graph& graph, Backend& backend, bool training);

  // Allocates and initialises parameters and buffers as PyTorch does (uniform in
  // +-1/sqrt(fan_in) for conv weights and biases, ones and zeros for norm affine, zero mean and
  // unit variance running stats), deterministically from `seed`.
  ModelState init_state(uint64_t seed) const;

  // Forward pass. In training, records what backward needs; returns the block output.
  Tensor forward(ModelState& state, const Tensor& input);
  // Backward pass from the upstream gradient `grad_output`; parameter gradients land in
  // state.grads. Requires a preceding forward in training mode.
  void backward(ModelState& state, const Tensor& grad_output);
  // Frees the parameter gradients (like zero_grad(set_to_none=True)).
  static void clear_grads(ModelState& state);

  void set_op_hook(OpHook hook) { hook_ = std::move(hook); }
  // Seed for dropout masks: op i uses seed + i, or `seed` for every op when `same_for_every_op`
  // (how the PyTorch peer's tensor dumps draw their masks).
  void set_dropout_seed(uint64_t seed, bool same_for_every_op = false) {
    dropout_seed_ = seed;
    dropout_seed_per_op_ = !same_for_every_op;
  }

  // True while a recompute segment's forward runs again inside backward (for op hooks).
  bool recomputing() const { return recomputing_; }

  const Graph& graph() const { return graph_; }
  Backend& backend() const { return backend_; }
  bool training() const { return training_; }

 private:
  void add_loss_scaler(ModelState& s) const;
  void unscale_gradients(ModelState& state);
  struct Record {                // what one op keeps for backward
    std::vector<Tensor> inputs;  // by position; undefined where not saved
    Tensor output;
    std::vector<Tensor> aux;
    std::vector<Tensor> weights;  // mixed precision: cast weights by position; undefined where not saved
  };
  // A recompute segment as this executor runs it.
  struct Checkpoint {
    std::vector<int> inputs;  // values its ops read that are made outside it (or the block input)
    int trigger = -1;         // the op whose backward needs the recomputation (-1: none saves anything)
    int rerun_end = 0;        // ops [first op, rerun_end) run again
    int release = -1;         // after this op's backward the inputs are let go
    int first = 0;
    std::vector<Tensor> kept;  // the inputs, held from the segment's start to `release`
  };
  Tensor allocate(const TensorDesc& desc, MemoryCategory category) const;
  void with_workspace(const Op& op, Phase phase, const std::function<void(void*)>& run);
  void accumulate(Tensor& slot, Tensor incoming);
  void plan_checkpoints();
  // Runs op i forward on `values`; records its tape when `record`; outputs of values marked in
  // `saved` are allocated as saved activations.
  void run_forward_op(size_t i, std::vector<Tensor>& values, ModelState& state, bool record,
                      const std::vector<bool>& saved);
  void recompute(Checkpoint& c, ModelState& state);
  // Mixed precision: `src` converted into a new tensor of `dtype` by the backend's cast kernels.
  Tensor cast_copy(const Tensor& src, DType dtype, MemoryCategory category);
  // The op's weights (params, then buffers) cast to Op::param_cast for one call; parameters'
  // copies also join the autocast cache, which the forward clears at its end.
  std::vector<Tensor> cast_weights(const Op& op, ModelState& state, const SavedTensors& saved, bool record);

  const Graph& graph_;
  Backend& backend_;
  bool training_;
  std::vector<bool> requires_grad_;
  std::vector<bool> has_backward_;       // per op: its output needs a gradient (training only)
  std::vector<bool> records_forward_;    // per op: has a backward and is in no recompute segment
  std::vector<bool> saved_value_;        // per value: its tensor is kept for backward by the forward pass
  std::vector<bool> saved_when_rerun_;   // per value: a segment's op saves it when the segment reruns
  std::vector<int> last_use_;            // per value: index of its last forward consumer
  std::vector<int> checkpoint_of_op_;    // per op: index into checkpoints_, or -1
  std::vector<Checkpoint> checkpoints_;  // training only
  std::vector<Tensor> rerun_values_;     // recompute()'s per-value tables, empty between calls
  std::vector<int> rerun_last_use_;
  std::vector<Record> tape_;
  // Per op: aux tensors an earlier op made and filled for it (Backend::fills_statistics_of),
  // held from that op's call to this one's; empty otherwise.
  std::vector<std::vector<Tensor>> filled_aux_;
  std::vector<Tensor> autocast_cache_;  // cast parameters, held until the forward ends
  bool have_tape_ = false;
  bool recomputing_ = false;
  OpHook hook_;
  uint64_t dropout_seed_ = 0x5eed;
  bool dropout_seed_per_op_ = true;
};

}  // namespace convbench
