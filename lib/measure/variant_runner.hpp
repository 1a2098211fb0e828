// Runs one variant for real on a backend: a memory pass (one step, allocator statistics) and then
// timing of forward, backward and the whole step under the stopping rule. Fills the measured
// part of a result row; a variant that cannot run gets status oom / unsupported / error.
#pragma once

#include <functional>
#include <optional>

#include "graph/graph.hpp"
#include "measure/host_memory.hpp"
#include "measure/stopping_rule.hpp"
#include "results/results.hpp"
#include "runtime/backend.hpp"

namespace convbench {

struct RunOptions {
  MeasureOptions measure;
  uint64_t seed = 42;
  bool time = true;      // false: memory pass only
  bool cold = false;     // flush the caches before every sample
  int per_op_steps = 0;  // > 0: also time every op over this many extra steps (row.op_times)
  // Also time the headline phase (step in train mode, forward in infer mode) replayed from one
  // recorded capture (row.graph); needs a backend whose replay_unsupported() is nullopt.
  bool graph = false;
  // The host memory a host backend (cpu, reference) may use, asked before each variant: one whose
  // predicted peak (row.predicted) does not fit gets status oom instead of running. Null: no check.
  std::function<std::optional<HostMemory>()> host_memory = host_memory_available;
  // Asked before every timed sample and per-op step: true ends the measurement at once by
  // throwing RunInterrupted (compare's caught SIGINT or SIGTERM). Empty: never.
  std::function<bool()> stop_requested;
};

// Thrown out of run_variant when RunOptions::stop_requested says so: the row is unfinished and
// its caller decides what to keep. Not a std::exception, so no failure handler takes it for the
// row's own error.
struct RunInterrupted {};

// Measures `graph` and writes device, status, message, measured memory and times into `row`,
// and the backend's clock just before the first timed sample and after the last (row.clock).
void run_variant(const Graph& graph, bool training, Backend& backend, const RunOptions& options, ResultRow& row);

// Seeded uniform(-1, 1) values for a tensor (inputs and upstream gradients).
void fill_uniform(Backend& backend, Tensor& t, uint64_t seed);

}  // namespace convbench
