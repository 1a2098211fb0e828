// The interface every backend implements (reference, cpu, cuda). The executor walks the graph and
// calls forward() and backward() once per op with tensors it has allocated; a backend computes,
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
#include "runtime/device_clock.hpp"
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

struct ForwardCall {
  const Graph& graph;
  const Op& op;
  std::vector<const Tensor*> inputs;  // one per op.inputs
  std::vector<const Tensor*> params;  // one per op.params
  std::vector<Tensor*> buffers;       // one per op.buffers (BN running stats; updated in training)
  Tensor* output;
  std::vector<Tensor*> aux;  // aux_tensors(graph, op) in training, empty in inference
  bool training;
  uint64_t seed;    // dropout: the mask is dropout_keep(i, seed, p)
  void* workspace;  // workspace_bytes(graph, op, Phase::forward, training) bytes
};

struct BackwardCall {
  const Graph& graph;
  const Op& op;
  std::vector<const Tensor*> inputs;  // saved inputs (saved_tensors(op)); nullptr where not saved
  const Tensor* output;               // the saved output (relu), else nullptr
  std::vector<const Tensor*> aux;     // the tensors forward filled in `aux`
  std::vector<const Tensor*> params;
  const Tensor* grad_output;
  // One per op.inputs: where to write that input's gradient; nullptr when it needs none or when
  // the gradient is an alias of grad_output (see grad_flow()). Written, never accumulated.
  std::vector<Tensor*> grad_inputs;
  std::vector<Tensor*> grad_params;  // one per op.params; written, never accumulated
  void* workspace;                   // workspace_bytes(graph, op, Phase::backward, true) bytes
};

// Device work recorded once and replayed without the host: a CUDA graph of a whole step, whose
// kernels launch back to back with none of the executor's per-op host work between them.
class ReplayableWork {
 public:
  virtual ~ReplayableWork() = default;
  // Queues one replay on the backend's stream (time it with Backend::time_ms).
  virtual void replay() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Allocator& allocator() = 0;

  // Why this backend cannot run the op (e.g. a dtype it lacks), or nullopt when it can.
  virtual std::optional<std::string> unsupported(const Graph& graph, const Op& op) const = 0;
  // Scratch bytes the op needs in the given phase (0 when none).
  virtual int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) = 0;

  virtual void forward(const ForwardCall& call) = 0;
  virtual void backward(const BackwardCall& call) = 0;

  // dst += src, same desc (gradient accumulation where a value feeds several ops).
  virtual void accumulate(Tensor& dst, const Tensor& src) = 0;
  // out = a + b, same desc (accumulation when neither gradient may be overwritten).
  virtual void add(Tensor& out, const Tensor& a, const Tensor& b) = 0;

  // Raw byte copies between host memory and a tensor's storage (memcpy on host backends).
  virtual void copy_from_host(Tensor& dst, const void* src) = 0;
  virtual void copy_to_host(const Tensor& src, void* dst) = 0;
  // Waits for queued work (no-op on host backends).
  virtual void synchronize() {}

  // --- measurement hooks; the defaults suit host backends ---
  // Milliseconds `work` takes as the device sees it: a steady clock around synchronised work on
  // the host; events recorded on the stream on a GPU.
  virtual double time_ms(const std::function<void()>& work);
  // Evicts the device's own caches before a cold-cache sample; false when it has none (host
  // backends: the runner scrubs the CPU's last-level cache instead).
  virtual bool flush_device_cache() { return false; }
  // Marks a named range (block / variant / phase) for profilers such as Nsight Systems.
  virtual void range_push(const std::string& /*name*/) {}
  virtual void range_pop() {}
  // Per-op choices the backend made (e.g. cuDNN algorithms), keyed by op name, since the last
  // clear_op_details(); recorded in the result rows.
  virtual nlohmann::json op_details() const { return nlohmann::json::object(); }
  virtual void clear_op_details() {}
  // The device for provenance (name, memory, clocks, library versions); empty on host backends.
  virtual nlohmann::json device_info() const { return nlohmann::json::object(); }
  // The clock the backend computes at right now (read before and after timing); the host CPU's
  // by default. nullopt when it cannot be read.
  virtual std::optional<ClockReading> clock() const { return read_host_cpu_clock(); }

  // --- graph replay (`compare --graph`) ---
  // Why this backend cannot record work for replay, or nullopt when capture() works.
  virtual std::optional<std::string> replay_unsupported() const;
  // Records the device work that `work` queues, without running it, and returns it for replay.
  // Every buffer the recorded work touches keeps its address: the caller must not let the
  // allocator hand those blocks to anything else while it replays. Throws when capture fails
  // (an op that cannot be recorded); only called when replay_unsupported() is nullopt.
  virtual std::unique_ptr<ReplayableWork> capture(const std::function<void()>& work);
};

}  // namespace convbench
