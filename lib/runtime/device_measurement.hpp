// The measurement-facing side of a backend: how the variant runner times work, evicts caches,
// marks profiler ranges, reads the clock, describes the device and records work for replay. It
// is kept apart from Backend, which only computes, so that each interface does one job: a new
// backend implements Backend, and gets host measurement (HostMeasurement) until it has its own.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/dtype.hpp"
#include "runtime/device_clock.hpp"

namespace convbench {

// A device's compute and memory limits as measured on the device itself (a large product and a
// large copy), for one dtype.
struct MeasuredLimits {
  double peak_flops = 0;             // FLOP/s, best of the repetitions
  double bandwidth_bytes_per_s = 0;  // read + write counted, as STREAM's copy; best of the repetitions
  std::string method;                // what was timed, for the limits' source
};

// Device work recorded once and replayed without the host: a CUDA graph of a whole step, whose
// kernels launch back to back with none of the executor's per-op host work between them.
class ReplayableWork {
 public:
  virtual ~ReplayableWork() = default;
  // Queues one replay on the backend's stream (time it with DeviceMeasurement::time_ms).
  virtual void replay() = 0;
};

class DeviceMeasurement {
 public:
  virtual ~DeviceMeasurement() = default;

  // Milliseconds `work` takes as the device sees it: a steady clock around synchronous work on
  // the host; events recorded on the stream on a GPU.
  virtual double time_ms(const std::function<void()>& work) = 0;
  // Evicts the device's own caches before a cold-cache sample; false when it has none (host
  // backends: the runner scrubs the CPU's last-level cache instead).
  virtual bool flush_device_cache() { return false; }
  // Marks a named range (block / variant / phase) for profilers such as Nsight Systems.
  virtual void range_push(const std::string& /*name*/) {}
  virtual void range_pop() {}
  // The device for provenance (name, memory, clocks, library versions); empty on host backends.
  virtual nlohmann::json device_info() const { return nlohmann::json::object(); }
  // The clock the backend computes at right now (read before and after timing); the host CPU's
  // by default. nullopt when it cannot be read.
  virtual std::optional<ClockReading> clock() const { return read_host_cpu_clock(); }
  // How many other processes are computing on the device right now (they compete for it while a
  // row is timed); nullopt when the device cannot say (host backends: the host's CPU pressure
  // covers them).
  virtual std::optional<int> other_processes() const { return std::nullopt; }
  // The device's limits for `dtype`, measured on it in about a second; nullopt where the backend
  // has no such measurement (the host backends: the cpu's is measure/cpu_limits.hpp, cached per
  // machine) or cannot run one for this dtype.
  virtual std::optional<MeasuredLimits> measure_limits(DType /*dtype*/) { return std::nullopt; }

  // --- graph replay (`compare --graph`) ---
  // Why this device cannot record work for replay, or nullopt when capture() works.
  virtual std::optional<std::string> replay_unsupported() const = 0;
  // Records the device work that `work` queues, without running it, and returns it for replay.
  // Every buffer the recorded work touches keeps its address: the caller must not let the
  // allocator hand those blocks to anything else while it replays. Throws when capture fails
  // (an op that cannot be recorded); only called when replay_unsupported() is nullopt.
  virtual std::unique_ptr<ReplayableWork> capture(const std::function<void()>& work);
};

// The measurement of the host backends (reference, cpu), which compute synchronously on the
// calling thread: a steady clock around the work, the host CPU's clock, no replay.
class HostMeasurement : public DeviceMeasurement {
 public:
  explicit HostMeasurement(std::string backend_name) : backend_name_(std::move(backend_name)) {}
  double time_ms(const std::function<void()>& work) override;
  std::optional<std::string> replay_unsupported() const override;

 private:
  std::string backend_name_;
};

}  // namespace convbench
