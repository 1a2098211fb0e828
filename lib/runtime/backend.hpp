// The interface every backend implements (reference, cpu, cuda). The executor walks the graph and
// calls forward() and backward() once per op with tensors it has allocated, which run the kernels
// the backend registered for the op's kind (runtime/kernel_table.hpp); a backend computes,
// and never allocates tensors the executor does not know about (its scratch space comes from the
// workspace the executor allocates on its behalf, sized by workspace_bytes()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"
#include "runtime/device_measurement.hpp"
#include "runtime/kernel_table.hpp"
#include "runtime/tensor.hpp"

namespace convbench {

enum class Phase { forward, backward };

// Thrown by a backend that finds only while running that it cannot run an op (every algorithm
// its library offers refused this shape, dtype and layout): the variant's row gets status
// "unsupported" with this message, and the other variants still run. Up front, unsupported()
// says why an op cannot run; this is for what only the library itself can tell.
class UnsupportedOp : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The calls' fields have defaults where a call may leave them out, so that every call site names
// what it sets (designated initialisers) instead of ten positional fields.
struct ForwardCall {
  const Graph& graph;
  const Op& op;
  std::vector<const Tensor*> inputs = {};  // one per op.inputs
  std::vector<const Tensor*> params = {};  // one per op.params
  std::vector<Tensor*> buffers = {};       // one per op.buffers (BN running stats; updated in training)
  Tensor* output = nullptr;
  std::vector<Tensor*> aux = {};  // aux_tensors(graph, op) in training, empty in inference
  bool training = false;
  uint64_t seed = 0;          // dropout: the mask is dropout_keep(i, seed, p)
  void* workspace = nullptr;  // workspace_bytes(graph, op, Phase::forward, training) bytes
  // Training, where fills_statistics_of(graph, this op) names an op: that op's aux tensors, made
  // before this call, which it fills for that op's call (a batch norm's saved statistics, filled
  // with the per-channel sums of this conv's output). Empty otherwise.
  std::vector<Tensor*> filled_aux = {};
};

struct BackwardCall {
  const Graph& graph;
  const Op& op;
  std::vector<const Tensor*> inputs = {};  // saved inputs (saved_tensors(op)); nullptr where not saved
  const Tensor* output = nullptr;          // the saved output (relu), else nullptr
  std::vector<const Tensor*> aux = {};     // the tensors forward filled in `aux`
  std::vector<const Tensor*> params = {};
  const Tensor* grad_output = nullptr;
  // One per op.inputs: where to write that input's gradient; nullptr when it needs none or when
  // the gradient is an alias of grad_output (see grad_flow()). Written, never accumulated.
  std::vector<Tensor*> grad_inputs = {};
  std::vector<Tensor*> grad_params = {};    // one per op.params; written, never accumulated
  void* workspace = nullptr;                // workspace_bytes(graph, op, Phase::backward, true) bytes
  std::vector<const Tensor*> buffers = {};  // one per op.buffers (a frozen conv's weight and bias)
};

// The call a kernel makes of another op in its place (a folded conv runs the plain conv it
// stands for): the same graph, inputs and output, mode and seed, with that op's weights (and
// weight gradients) and the rest of the workspace.
inline ForwardCall forward_call_as(const ForwardCall& call, const Op& op, std::vector<const Tensor*> params,
                                   void* workspace) {
  return ForwardCall{.graph = call.graph,
                     .op = op,
                     .inputs = call.inputs,
                     .params = std::move(params),
                     .output = call.output,
                     .training = call.training,
                     .seed = call.seed,
                     .workspace = workspace};
}
inline BackwardCall backward_call_as(const BackwardCall& call, const Op& op, std::vector<const Tensor*> params,
                                     std::vector<Tensor*> grad_params, void* workspace) {
  return BackwardCall{.graph = call.graph,
                      .op = op,
                      .inputs = call.inputs,
                      .params = std::move(params),
                      .grad_output = call.grad_output,
                      .grad_inputs = call.grad_inputs,
                      .grad_params = std::move(grad_params),
                      .workspace = workspace};
}

// What a conv computes with as its weight and bias: its parameters, or its buffers when it is
// frozen (its weight and bias are buffers then, conv.cpp).
template <class Call>
std::vector<const Tensor*> conv_weights(const Call& call) {
  if (!call.op.conv.frozen) return {call.params.begin(), call.params.end()};
  return {call.buffers.begin(), call.buffers.end()};
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Allocator& allocator() = 0;

  // Why this backend cannot run the op, or nullopt when it can: no kernels registered for its
  // kind, or a limitation of the kernels it has (limitation()).
  std::optional<std::string> unsupported(const Graph& graph, const Op& op) const;
  // What the backend's kernels for this op's kind cannot do (e.g. a dtype it lacks), or nullopt.
  virtual std::optional<std::string> limitation(const Graph& graph, const Op& op) const = 0;
  // Every op kind's forward and backward kernels on this backend.
  virtual const KernelTable& kernels() const = 0;
  // Scratch bytes the op needs in the given phase (0 when none).
  virtual int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) = 0;
  // Training only: the index of the op whose aux tensors the forward call of op `index` fills, or
  // -1 (every op makes its own). `--conv-fusion conv_bn_stats` (backends/conv_fusion.hpp): a conv
  // writes its output's per-channel sums into the next batch norm's saved statistics. The
  // executor then makes that op's aux just before op `index` runs (after its output, before its
  // workspace) and passes them in ForwardCall::filled_aux; the memory model does the same.
  virtual int fills_statistics_of(const Graph& /*graph*/, int /*index*/) const { return -1; }

  // Run the registered kernels of the op's kind (an unregistered kind throws UnsupportedOp).
  // Backends override them only to wrap every op (the CUDA backend's profiler ranges).
  virtual void forward(const ForwardCall& call);
  virtual void backward(const BackwardCall& call);

  // dst += src, same desc (gradient accumulation where a value feeds several ops).
  virtual void accumulate(Tensor& dst, const Tensor& src) = 0;
  // out = a + b, same desc (accumulation when neither gradient may be overwritten).
  virtual void add(Tensor& out, const Tensor& a, const Tensor& b) = 0;

  // Loss scaling under amp_float16 (runtime/loss_scaler.hpp): out = in * factor, same desc; and
  // every t in `grads` *= factor in place, returning false when an element was inf or NaN.
  // `flags` (kLossScalerStepBytes) holds what GradScaler allocates for it: the factor and the
  // found-inf flag, as float32; a device backend reads the flag back once, after every gradient.
  // The host and cuda backends have them; a backend that does not run AMP keeps these, which throw.
  virtual void scale(Tensor& out, const Tensor& in, double factor);
  virtual bool unscale(const std::vector<Tensor*>& grads, double factor, Tensor& flags);

  // Raw byte copies between host memory and a tensor's storage (memcpy on host backends).
  virtual void copy_from_host(Tensor& dst, const void* src) = 0;
  virtual void copy_to_host(const Tensor& src, void* dst) = 0;
  // Waits for queued work (no-op on host backends).
  virtual void synchronize() {}

  // Per-op choices the backend made (e.g. cuDNN algorithms), keyed by op name, since the last
  // clear_op_details(); recorded in the result rows.
  virtual nlohmann::json op_details() const { return nlohmann::json::object(); }
  virtual void clear_op_details() {}

  // Timing, cache flushing, profiler ranges, clocks, device information and graph capture: the
  // measurement-facing interface of this backend's device (runtime/device_measurement.hpp).
  virtual DeviceMeasurement& measurement() = 0;
};

}  // namespace convbench
