// The device's compute and memory-bandwidth limits that a roofline and a block's floor are drawn
// against: recorded in the results' provenance, or a GPU's datasheet (results/gpu_datasheets.hpp),
// known by the name the results record or named with --limits.
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
  // The dtype the peak is for ("float32"); empty: every dtype's (numbers the user gave). A roofline
  // of a block in another dtype does not use them.
  std::string dtype;
  // The datasheet row they come from ("h100-sxm"; results/gpu_datasheets.hpp), which also gives
  // them for the other dtypes; empty when measured or given.
  std::string datasheet;
  // The datasheet of a GPU that did not run these rows (--limits NAME on another device): a floor
  // drawn from them is a lower bound on that GPU, not a prediction, and no time measured here is
  // compared with it.
  bool other_device = false;
};

// {"peak_flops", "bandwidth_bytes_per_s", "source"} and, when set, "doubt", "dtype", "datasheet"
// and "other_device": how limits are written (provenance, caches). The remedy is not written: it
// belongs to the run that chose the limits.
nlohmann::json device_limits_json(const DeviceLimits& limits);
// Reads that object back: nullopt unless both numbers are there and plausible; `source` when the
// object names none.
std::optional<DeviceLimits> device_limits_from_json(const nlohmann::json& d, const std::string& source);

// A datasheet row's limits for `dtype`, their source "H100 SXM datasheet (float32, dense)";
// nullopt when the row has no peak for that dtype.
struct GpuDatasheet;
std::optional<DeviceLimits> datasheet_limits(const GpuDatasheet& d, const std::string& dtype);
// --limits NAME: the row's limits for `dtype`, other_device unless `provenance` records that GPU.
std::optional<DeviceLimits> named_device_limits(const GpuDatasheet& d, const std::string& dtype,
                                                const nlohmann::json& provenance);

// For a roofline of rows in `dtype`: provenance["device_limits"] when it is for that dtype (or for
// every dtype), or the same datasheet row's numbers for that dtype when it names one. Else the
// datasheet of the GPU recorded in provenance ("gpu_name", "device_name", "gpu" as a string or
// {"name"}) when convbench knows it. Else none: the device's limits are unknown.
std::optional<DeviceLimits> device_limits(const nlohmann::json& provenance, const std::string& dtype);

// Limits a real device can have: 1 MFLOP/s to 1 EFLOP/s, 1 MB/s to 10 PB/s. A recorded
// device_limits outside them is malformed (results files are checked against these).
constexpr double kMinPeakFlops = 1e6, kMaxPeakFlops = 1e18;
constexpr double kMinBandwidth = 1e6, kMaxBandwidth = 1e16;
bool plausible_device_limits(double peak_flops, double bandwidth_bytes_per_s);

// The GPU name recorded in provenance (empty when none is).
std::string recorded_gpu_name(const nlohmann::json& provenance);

}  // namespace convbench
