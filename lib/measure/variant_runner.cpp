#include "measure/variant_runner.hpp"

#include <optional>
#include <random>

#include "measure/cache_flusher.hpp"
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
  PhaseRange(Backend& backend, const std::string& name) : backend_(backend) { backend_.range_push(name); }
  ~PhaseRange() { backend_.range_pop(); }
  PhaseRange(const PhaseRange&) = delete;
  PhaseRange& operator=(const PhaseRange&) = delete;
  void next(const std::string& name) {
    backend_.range_pop();
    backend_.range_push(name);
  }

 private:
  Backend& backend_;
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
    if (options.cold && !backend.flush_device_cache()) {
      if (!host_flusher) host_flusher.emplace();
      host_flusher->flush();
    }
    return backend.time_ms(work);
  };
  const std::string where = row.block + "/" + row.variant + (row.point_label.empty() ? "" : "[" + row.point_label + "]");
  PhaseRange range(backend, where + "/forward");
  row.forward = measure_until_stable(
      [&] {
        Tensor y;
        const double ms = timed([&] { y = ex.forward(state, x); });
        if (training) ex.backward(state, dy);  // consumes the tape; not timed
        Executor::clear_grads(state);
        return ms;
      },
      options.measure, steady_seconds);
  if (!training) return;
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

}  // namespace

void run_variant(const Graph& graph, bool training, Backend& backend, const RunOptions& options, ResultRow& row) {
  row.device = backend.name();
  row.status = "ok";
  row.message.clear();
  for (const Op& op : graph.ops) {
    if (auto why = backend.unsupported(graph, op)) {
      row.status = "unsupported";
      row.message = op.name + ": " + *why;
      return;
    }
  }
  backend.clear_op_details();
  try {
    measure(graph, training, backend, options, row);
    row.op_details = backend.op_details();
  } catch (const OutOfMemory& e) {
    row.status = "oom";
    row.message = e.what();
  } catch (const std::exception& e) {
    row.status = "error";
    row.message = e.what();
  }
  if (row.status != "ok") {
    row.measured.reset();
    row.forward.reset();
    row.backward.reset();
    row.step.reset();
  }
  backend.allocator().release_cached();
}

}  // namespace convbench
