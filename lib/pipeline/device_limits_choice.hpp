// Which device limits an explanation (and a roofline) is drawn against, and where they came from:
//   1. --peak-flops and --bandwidth, when given; or --limits NAME, a GPU's datasheet
//      (results/gpu_datasheets.hpp), a lower bound on that GPU when it did not run the rows;
//   2. on cpu (float32): measured on this machine (measure/cpu_limits.hpp) once per CPU model,
//      thread count and oneDNN version, and cached in a small JSON file with what else the
//      machine did while it measured (its trust, judged by the rows' rules: results/trust.hpp),
//      the build that measured and the date. A measurement made on a busy machine is used for the
//      run, marked doubtful, and not cached; a cached entry from another build, from an older
//      convbench (no record of the machine's activity) or made on a busy machine is measured
//      again, saying why. --calibrate measures again;
//   3. on cuda: measured on the GPU during the run (a copy and a cuDNN product in the block's
//      dtype: backends/cuda/cuda_limits.hpp), the source naming the datasheet's numbers when
//      convbench knows the GPU by name; without a measurement, those datasheet numbers
//      (results/device_limits.hpp);
//   4. otherwise none: outputs then say the limits are unknown and classify nothing.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/cpu_limits.hpp"
#include "results/device_limits.hpp"
#include "results/results.hpp"
#include "runtime/device_measurement.hpp"

namespace convbench {

struct LimitsRequest {
  double peak_flops = 0, bandwidth = 0;  // both > 0: given by the user
  std::string device_name;               // --limits NAME: a datasheet row (checked on the command line)
  bool calibrate = false;                // measure again even when cached
  std::string cache_path;                // empty: default_limits_cache_path()
  // false: never measure the cpu, use a trusted cached entry or nothing (compare, whose user asked
  // for the blocks' times, not for a second of sgemm and 512 MiB of copies beside them).
  bool measure = true;
  // What measures the cpu (tests give a stand-in); empty: measure_cpu_limits().
  std::function<CpuLimitsMeasurement()> measure_cpu;
};

// $CONVBENCH_CACHE_DIR/device-limits.json, else $XDG_CACHE_HOME/convbench/..., else
// $HOME/.cache/convbench/...; empty when none of them is set.
std::string default_limits_cache_path();

// `provenance` is the run's (its cpu, threads and onednn_version key the cache, its
// convbench_version and git_commit name the build; a GPU's name picks its datasheet). `measured`:
// what the run's device measured of itself (cuda). Says on `notices` when it measures, why a
// cached entry is not used, and when a measurement was made on a busy machine (a cache is never
// trusted over a measurement: it is checked like any input).
// Whether the request names its limits itself (--peak-flops and --bandwidth, or --limits): then
// nothing is measured.
bool limits_given(const LimitsRequest& request);

std::optional<DeviceLimits> choose_device_limits(const LimitsRequest& request, const std::string& device,
                                                 const std::string& dtype, const nlohmann::json& provenance,
                                                 std::ostream& notices,
                                                 const std::optional<MeasuredLimits>& measured = std::nullopt);

// compare: records in results.provenance["device_limits"] the limits that are known without
// measuring anything, for the HTML roofline and the JSON: a trusted cached measurement of this
// cpu (float32; `request.measure` is taken as false), a GPU's datasheet by its recorded name.
// Nothing is recorded when none is known, and `notices` says why. --peak-flops, --bandwidth and
// --limits are recorded by the outputs (app/output_options.hpp), over these.
void record_known_device_limits(ResultSet& results, LimitsRequest request, std::ostream& notices);

}  // namespace convbench
