// The device's compute and memory-bandwidth limits that a roofline and a block's floor are drawn
// against: recorded in the results' provenance, or known for a few GPUs by name.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace convbench {

struct DeviceLimits {
  DeviceLimits() = default;
  // The numbers and their source; what else a DeviceLimits says is set member by member.
  DeviceLimits(double peak, double bandwidth, std::string where)
      : peak_flops(peak), bandwidth_bytes_per_s(bandwidth), source(std::move(where)) {}

  double peak_flops = 0;  // FLOP/s for the block's dtype
  double bandwidth_bytes_per_s = 0;
  std::string source;  // where the numbers come from, said next to the plot
  // Why the numbers may be wrong, said wherever they are used ("measured while the machine was
  // busy (...)": likely too low); empty when nothing suggests it.
  std::string doubt;
  // What to do when an op runs faster than the floor drawn from them (they are then too low):
  // "re-measure with --calibrate"; empty when nothing convbench can do would change them.
  std::string remedy;
};

// {"peak_flops", "bandwidth_bytes_per_s", "source", "doubt" (when there is one)}: how limits are
// written (provenance, caches).
nlohmann::json device_limits_json(const DeviceLimits& limits);
// Reads that object back: nullopt unless both numbers are there and plausible; `source` when the
// object names none.
std::optional<DeviceLimits> device_limits_from_json(const nlohmann::json& d, const std::string& source);

// provenance["device_limits"] = {"peak_flops", "bandwidth_bytes_per_s", "source"} wins. Else a
// GPU named in provenance ("gpu_name", "device_name", "gpu" as a string or {"name"}) that is an
// H100 SXM or an H200 gets its datasheet numbers for `dtype` (float32 | tf32 | float16 |
// bfloat16). Else none: the device's limits are unknown.
std::optional<DeviceLimits> device_limits(const nlohmann::json& provenance, const std::string& dtype);

// Limits a real device can have: 1 MFLOP/s to 1 EFLOP/s, 1 MB/s to 10 PB/s. A recorded
// device_limits outside them is malformed (results files are checked against these).
constexpr double kMinPeakFlops = 1e6, kMaxPeakFlops = 1e18;
constexpr double kMinBandwidth = 1e6, kMaxBandwidth = 1e16;
bool plausible_device_limits(double peak_flops, double bandwidth_bytes_per_s);

// The GPU name recorded in provenance (empty when none is).
std::string recorded_gpu_name(const nlohmann::json& provenance);

}  // namespace convbench
