#include "measure/variant_runner.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <optional>
#include <random>

#include "measure/cache_flusher.hpp"
#include "measure/host_activity.hpp"
#include "results/sample_stats.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"

namespace convbench {

void fill_uniform(Backend& backend, Tensor& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(t.desc.numel()));
  for (double& x : v) x = u(rng);
  upload(backend, t, v);
}

namespace {

// A profiler range (NVTX on CUDA) around one measured phase.
class PhaseRange {
 public:
  PhaseRange(DeviceMeasurement& device, const std::string& name) : device_(device) { device_.range_push(name); }
  ~PhaseRange() { device_.range_pop(); }
  PhaseRange(const PhaseRange&) = delete;
  PhaseRange& operator=(const PhaseRange&) = delete;
  void next(const std::string& name) {
    device_.range_pop();
    device_.range_push(name);
  }

 private:
  DeviceMeasurement& device_;
};

MemoryFigures figures_from_stats(const MemoryStats& s, int64_t saved) {
  MemoryFigures m;
  m.peak_bytes = s.peak;
  m.at_peak = s.at_peak;
  m.peak_by_category = s.peak_by_category;
  m.saved_bytes = saved;
  m.reserved_peak_bytes = s.reserved_peak;
  return m;
}

// Times every op separately over `steps` extra steps: the device is synchronised around each op,
// so the per-op times add up to more than the phase times (launch gaps are not overlapped). Like
// every phase, it stops once `timeout_s` of wall time has passed (after one step at least): each
// op's entry says how many steps it was timed over (`samples`).
nlohmann::json time_ops(const Graph& graph, bool training, Backend& backend, Executor& ex, ModelState& state,
                        const Tensor& x, const Tensor& dy, int steps, double timeout_s,
                        const std::function<bool()>& stop_requested) {
  std::vector<std::vector<double>> fwd(graph.ops.size()), bwd(graph.ops.size()), again(graph.ops.size());
  double start = 0;
  ex.set_op_hook([&](int op, Phase phase, bool begin) {
    backend.synchronize();
    if (begin) {
      start = steady_seconds();
      return;
    }
    // A recompute segment's forward run again in backward is timed apart from the first one.
    auto& samples = phase == Phase::backward ? bwd : ex.recomputing() ? again : fwd;
    samples[static_cast<size_t>(op)].push_back((steady_seconds() - start) * 1000.0);
  });
  const double begin = steady_seconds();
  for (int i = 0; i < steps && (i == 0 || steady_seconds() - begin < timeout_s); ++i) {
    if (stop_requested && stop_requested()) {
      ex.set_op_hook(nullptr);
      throw RunInterrupted{};
    }
    Tensor y = ex.forward(state, x);
    if (training) ex.backward(state, dy);
    Executor::clear_grads(state);
  }
  ex.set_op_hook(nullptr);
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    nlohmann::json entry = {{"kind", std::string(to_string(graph.ops[i].kind))}};
    if (!fwd[i].empty()) entry["forward_ms"] = quantile(fwd[i], 0.5);
    if (!bwd[i].empty()) entry["backward_ms"] = quantile(bwd[i], 0.5);
    if (!again[i].empty()) entry["recompute_ms"] = quantile(again[i], 0.5);
    entry["samples"] = std::max(fwd[i].size(), bwd[i].size());
    out[graph.ops[i].name] = entry;
  }
  return out;
}

// Records the headline phase once and times its replays. A capture that fails leaves the eager
// times standing and says why in row.graph_message.
void time_graph_replay(bool training, Backend& backend, Executor& ex, ModelState& state, const Tensor& x,
                       const Tensor& dy, const std::function<double(const std::function<void()>&)>& timed,
                       const MeasureOptions& options, ResultRow& row) {
  if (uses_loss_scaling(ex.graph(), training)) {
    row.graph_message =
        "not captured: an amp_float16 training step reads GradScaler's found-inf flag back (a synchronisation, "
        "which stream capture forbids)";
    return;
  }
  std::unique_ptr<ReplayableWork> recorded;
  try {
    recorded = backend.measurement().capture([&] {
      Tensor y = ex.forward(state, x);
      if (training) ex.backward(state, dy);
    });
  } catch (const std::exception& e) {  // out of memory included: the eager times stand either way
    Executor::clear_grads(state);
    row.graph_message = std::string("capture failed: ") + e.what();
    return;
  }
  // The gradient slots go back to the allocator's cache, but the recorded work keeps writing
  // their blocks; nothing allocates while it replays, so nothing else can be given them.
  Executor::clear_grads(state);
  row.graph = measure_until_stable([&] { return timed([&] { recorded->replay(); }); }, options, steady_seconds);
}

void measure(const Graph& graph, bool training, Backend& backend, const RunOptions& options, ResultRow& row) {
  Allocator& alloc = backend.allocator();
  Executor ex(graph, backend, training);
  ModelState state = ex.init_state(options.seed);
  Tensor x = make_tensor(alloc, graph.desc(graph.input), MemoryCategory::inputs);
  fill_uniform(backend, x, options.seed + 1);
  Tensor dy;
  if (training) {
    dy = make_tensor(alloc, graph.desc(graph.output), MemoryCategory::inputs);
    fill_uniform(backend, dy, options.seed + 2);
  }

  // Memory pass, never timed: one step from a fresh peak.
  backend.synchronize();
  alloc.reset_peak();
  int64_t saved = 0;
  {
    Tensor y = ex.forward(state, x);
    saved = alloc.stats().current_by_category[static_cast<size_t>(MemoryCategory::saved)];
    if (training) ex.backward(state, dy);
    backend.synchronize();
  }
  row.measured = figures_from_stats(alloc.stats(), saved);
  Executor::clear_grads(state);
  if (!options.time) return;

  std::optional<CacheFlusher> host_flusher;
  auto timed = [&](const std::function<void()>& work) {
    if (options.stop_requested && options.stop_requested()) throw RunInterrupted{};
    if (options.cold && !backend.measurement().flush_device_cache()) {
      if (!host_flusher) host_flusher.emplace();
      host_flusher->flush();
    }
    return backend.measurement().time_ms(work);
  };
  const std::string where =
      row.block + "/" + row.variant + (row.point_label.empty() ? "" : "[" + row.point_label + "]");
  // Read once the first phase has warmed up, right before its first timed sample: after the
  // memory pass alone a GPU's clock may still be ramping up from idle, and a "drop" measured
  // from there would be the ramp, not throttling.
  std::optional<ClockReading> clock_before;
  // What else the machine does is read over the same window as the clock (measure/host_activity.hpp).
  std::optional<HostActivitySnapshot> activity_before;
  PhaseRange range(backend.measurement(), where + "/forward");
  row.forward = measure_until_stable(
      [&] {
        Tensor y;
        const double ms = timed([&] { y = ex.forward(state, x); });
        if (training) ex.backward(state, dy);  // consumes the tape; not timed
        Executor::clear_grads(state);
        return ms;
      },
      options.measure, steady_seconds,
      [&] {
        clock_before = backend.measurement().clock();
        activity_before = read_host_activity();
      });
  if (training) {
    range.next(where + "/backward");
    row.backward = measure_until_stable(
        [&] {
          Tensor y = ex.forward(state, x);
          const double ms = timed([&] { ex.backward(state, dy); });
          Executor::clear_grads(state);
          return ms;
        },
        options.measure, steady_seconds);
    range.next(where + "/step");
    row.step = measure_until_stable(
        [&] {
          const double ms = timed([&] {
            Tensor y = ex.forward(state, x);
            ex.backward(state, dy);
          });
          Executor::clear_grads(state);
          return ms;
        },
        options.measure, steady_seconds);
  }
  if (options.graph) {
    range.next(where + "/graph");
    time_graph_replay(training, backend, ex, state, x, dy, timed, options.measure, row);
  }
  const std::optional<ClockReading> clock_after = backend.measurement().clock();
  if (activity_before) {
    row.activity =
        host_activity_between(*activity_before, read_host_activity(), compute_threads(), cpu_affinity_count());
    row.activity->gpu_other_processes = backend.measurement().other_processes();
  }
  if (clock_before && clock_after)
    row.clock = ClockWindow{clock_before->domain, clock_before->mhz, clock_after->mhz, clock_after->limits};
  if (options.per_op_steps > 0) {
    range.next(where + "/per-op");
    row.op_times = time_ops(graph, training, backend, ex, state, x, dy, options.per_op_steps, options.measure.timeout_s,
                            options.stop_requested);
  }
}

}  // namespace

void run_variant(const Graph& graph, bool training, Backend& backend, const RunOptions& options, ResultRow& row) {
  row.device = backend.name();
  row.status = RunStatus::ok;
  row.message.clear();
  row.graph_message.clear();
  for (const Op& op : graph.ops) {
    if (auto why = backend.unsupported(graph, op)) {
      row.status = RunStatus::unsupported;
      row.message = op.name + ": " + *why;
      return;
    }
  }
  if (!backend.allocator().on_device() && options.host_memory) {
    if (const std::optional<HostMemory> host = options.host_memory();
        host && row.predicted.peak_bytes > host->available_bytes) {
      row.status = RunStatus::oom;
      row.message = "the predicted peak of " + std::to_string(row.predicted.peak_bytes) +
                    " bytes does not fit the host's memory (" + host->source + " available): not run";
      return;
    }
  }
  backend.clear_op_details();
  try {
    measure(graph, training, backend, options, row);
    row.op_details = backend.op_details();
  } catch (const RunInterrupted&) {
    backend.allocator().release_cached();
    throw;
  } catch (const std::bad_alloc&) {
    row.status = RunStatus::oom;
    row.message = "out of host memory (an allocation failed)";
  } catch (const OutOfMemory& e) {
    row.status = RunStatus::oom;
    row.message = e.what();
  } catch (const UnsupportedOp& e) {
    row.status = RunStatus::unsupported;
    row.message = e.what();
  } catch (const std::exception& e) {
    row.status = RunStatus::error;
    row.message = e.what();
  }
  if (row.status != RunStatus::ok) {
    row.measured.reset();
    row.forward.reset();
    row.backward.reset();
    row.step.reset();
    row.graph.reset();
    row.clock.reset();
    row.activity.reset();
  }
  backend.allocator().release_cached();
}

}  // namespace convbench
