// The cache of the cpu's measured limits (pipeline/device_limits_choice.hpp): one JSON file,
// {"schema": "convbench.device_limits/2", "entries": {KEY: ENTRY}}, KEY naming what a measurement
// depends on (CPU model, threads, oneDNN version) and ENTRY holding
//   peak_flops, bandwidth_bytes_per_s, source     the limits, as provenance.device_limits has them
//   build, date                                   the convbench that measured them, and when
//   host_activity, trust, trust_evidence          what else the machine did meanwhile, and its
//                                                 judgement then (recomputed when read)
// An entry is reused only when this build wrote it and the machine was quiet while it measured.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/cpu_limits.hpp"
#include "results/device_limits.hpp"

namespace convbench {

inline constexpr const char* kLimitsCacheSchema = "convbench.device_limits/2";

struct CpuLimitsCache {
  std::string path;                                   // empty: nowhere to cache (no HOME)
  nlohmann::json entries = nlohmann::json::object();  // KEY -> ENTRY as read
};

// The file's entries; none when it is absent or unusable (said on `notices`: a cache is input).
CpuLimitsCache read_cpu_limits_cache(const std::string& path, std::ostream& notices);

// "CPU | threads N | oneDNN V", from the run's provenance.
std::string cpu_limits_cache_key(const nlohmann::json& provenance);
// "convbench VERSION at COMMIT", from the run's provenance.
std::string build_of(const nlohmann::json& provenance);

// The limits an entry holds, or why they cannot be used for this run (`why_not`, a clause: "were
// measured by another build (...)").
struct CachedLimits {
  std::optional<DeviceLimits> limits;
  std::string why_not;
};
CachedLimits cached_cpu_limits(const nlohmann::json& entry, const nlohmann::json& provenance);

// The entry of a measurement this run made (its trust judged from m.activity).
nlohmann::json cpu_limits_entry(const DeviceLimits& limits, const CpuLimitsMeasurement& m,
                                const nlohmann::json& provenance);

// Writes `cache` with `entry` under `key`, dropping the entries no build can reuse (the older
// format's); says on `notices` when it cannot.
void write_cpu_limits_cache(const CpuLimitsCache& cache, const std::string& key, const nlohmann::json& entry,
                            std::ostream& notices);

}  // namespace convbench
