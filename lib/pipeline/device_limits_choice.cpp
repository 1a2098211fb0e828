#include "pipeline/device_limits_choice.hpp"

#include <cstdlib>

#include "pipeline/cpu_limits_cache.hpp"
#include "results/gpu_datasheets.hpp"
#include "results/trust.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

constexpr const char* kRemeasureCpu = "re-measure them with --calibrate";

std::string text_of(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "?";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// The cpu's limits: a trusted cached entry, else (when the request allows it) a new measurement,
// cached when the machine was quiet while it ran.
std::optional<DeviceLimits> cpu_limits(const LimitsRequest& request, const nlohmann::json& provenance,
                                       std::ostream& notices) {
  const std::string path = request.cache_path.empty() ? default_limits_cache_path() : request.cache_path;
  const std::string key = cpu_limits_cache_key(provenance);
  const CpuLimitsCache cache = read_cpu_limits_cache(path, notices);
  if (!request.calibrate && cache.entries.contains(key)) {
    CachedLimits cached = cached_cpu_limits(cache.entries[key], provenance);
    if (cached.limits) {
      cached.limits->remedy = kRemeasureCpu;
      cached.limits->dtype = "float32";
      return cached.limits;
    }
    notices << "convbench: the limits cached in " << path << " " << cached.why_not << ": "
            << (request.measure ? "measuring them again" : "not used") << "\n";
  }
  if (!request.measure) {
    if (!cache.entries.contains(key))
      notices << "convbench: no measurement of this CPU's limits is cached" << (path.empty() ? "" : " in " + path)
              << ", and this command does not measure them: `convbench explain` does (about a second), or give "
                 "--peak-flops and --bandwidth\n";
    return std::nullopt;
  }

  notices << "convbench: measuring this CPU's peak FLOP/s and bandwidth (about a second; cached"
          << (path.empty() ? " nowhere: no HOME" : " in " + path) << ")\n";
  const CpuLimitsMeasurement m = request.measure_cpu ? request.measure_cpu() : measure_cpu_limits();
  if (!plausible_device_limits(m.peak_flops, m.bandwidth_bytes_per_s)) return std::nullopt;
  DeviceLimits l{m.peak_flops, m.bandwidth_bytes_per_s,
                 "measured on this CPU on " + text_of(provenance, "date") + ": " + m.method};
  l.remedy = kRemeasureCpu;
  l.dtype = "float32";
  const TrustAssessment trust = assess_host_activity(m.activity);
  if (trust.level != Trust::ok) {
    // Used all the same (it is the best this run has), but said, flagged and never reused.
    l.doubt = "measured while the machine was busy (" + evidence_text(trust) + "): likely too low";
    notices << "convbench: warning: this CPU's limits were " << l.doubt
            << ", which puts every op nearer its floor than it is; used for this run only, not cached\n";
    return l;
  }
  write_cpu_limits_cache(cache, key, cpu_limits_entry(l, m, provenance), notices);
  return l;
}

}  // namespace

std::string default_limits_cache_path() {
  if (const std::string d = env("CONVBENCH_CACHE_DIR"); !d.empty()) return d + "/device-limits.json";
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/convbench/device-limits.json";
  if (const std::string d = env("HOME"); !d.empty()) return d + "/.cache/convbench/device-limits.json";
  return "";
}

bool limits_given(const LimitsRequest& request) {
  return !request.device_name.empty() || (request.peak_flops > 0 && request.bandwidth > 0);
}

std::optional<DeviceLimits> choose_device_limits(const LimitsRequest& request, const std::string& device,
                                                 const std::string& dtype, const nlohmann::json& provenance,
                                                 std::ostream& notices, const std::optional<MeasuredLimits>& measured) {
  if (!request.device_name.empty()) {
    const GpuDatasheet* sheet = find_gpu_datasheet(request.device_name);
    if (!sheet) return std::nullopt;  // refused on the command line, before the run
    auto named = named_device_limits(*sheet, dtype, provenance);
    if (!named)
      notices << "convbench: " << sheet->name << "'s datasheet has no " << dtype << " peak (" << sheet->note
              << "): no limits for " << dtype << " rows\n";
    return named;
  }
  if (request.peak_flops > 0 && request.bandwidth > 0) {
    DeviceLimits given{request.peak_flops, request.bandwidth, "given with --peak-flops and --bandwidth"};
    given.remedy = "give larger --peak-flops and --bandwidth";
    return given;
  }
  if (device == "cuda") {
    const auto sheet = device_limits(provenance, dtype);
    if (!measured || !plausible_device_limits(measured->peak_flops, measured->bandwidth_bytes_per_s)) return sheet;
    std::string source =
        "measured on " + recorded_gpu_name(provenance) + " on " + text_of(provenance, "date") + ": " + measured->method;
    if (sheet)
      source += "; its " + sheet->source + ": " + format_fixed(sheet->peak_flops / 1e12, 0) + " TFLOP/s, " +
                format_fixed(sheet->bandwidth_bytes_per_s / 1e12, 2) + " TB/s";
    DeviceLimits gpu{measured->peak_flops, measured->bandwidth_bytes_per_s, source};
    gpu.dtype = dtype;
    gpu.remedy = "the measurement fell short; run again, on an idle GPU";
    return gpu;
  }
  if (device != "cpu") return std::nullopt;
  if (dtype != "float32") {  // measured for the cpu backend's float32 only (an sgemm)
    notices << "convbench: this CPU's limits are measured in float32 (oneDNN sgemm); " << dtype
            << " rows get none: give --peak-flops and --bandwidth for them\n";
    return std::nullopt;
  }
  return cpu_limits(request, provenance, notices);
}

void record_known_device_limits(ResultSet& results, LimitsRequest request, std::ostream& notices) {
  request.measure = false;
  request.calibrate = false;
  // One dtype per record, the first row's; a block of another dtype finds its own peak in the
  // same datasheet, or none (results/device_limits.hpp).
  const std::string dtype = results.rows.empty() ? "float32" : compute_dtype(results.rows.front());
  if (const auto l = choose_device_limits(request, results.device, dtype, results.provenance, notices))
    results.provenance["device_limits"] = device_limits_json(*l);
}

}  // namespace convbench
