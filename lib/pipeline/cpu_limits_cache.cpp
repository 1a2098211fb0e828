#include "pipeline/cpu_limits_cache.hpp"

#include <filesystem>

#include "results/json_results.hpp"
#include "results/trust.hpp"
#include "util/input_file.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"

namespace convbench {
namespace {

// The format before entries carried their trust: read, so that its entries are measured again
// saying why rather than ignored as a stranger's file.
constexpr const char* kOldSchema = "convbench.device_limits/1";

std::string field_text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "?";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

}  // namespace

CpuLimitsCache read_cpu_limits_cache(const std::string& path, std::ostream& notices) {
  CpuLimitsCache cache{path, nlohmann::json::object()};
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return cache;
  try {
    const InputText file = read_input_file(path, "device-limits cache", int64_t{1} << 20);
    const nlohmann::json j = nlohmann::json::parse(file.text);
    const std::string schema = j.is_object() ? j.value("schema", "") : "";
    if ((schema == kLimitsCacheSchema || schema == kOldSchema) && j.contains("entries") && j["entries"].is_object())
      cache.entries = j["entries"];
    else
      notices << "convbench: ignoring " << path << ": not a convbench device-limits cache\n";
  } catch (const std::exception& e) {
    notices << "convbench: ignoring " << path << ": " << e.what() << "\n";
  }
  return cache;
}

std::string cpu_limits_cache_key(const nlohmann::json& provenance) {
  return field_text(provenance, "cpu") + " | threads " + field_text(provenance, "threads") + " | oneDNN " +
         field_text(provenance, "onednn_version");
}

std::string build_of(const nlohmann::json& provenance) {
  return "convbench " + field_text(provenance, "convbench_version") + " at " + field_text(provenance, "git_commit");
}

CachedLimits cached_cpu_limits(const nlohmann::json& entry, const nlohmann::json& provenance) {
  if (!entry.is_object() || !entry.contains("host_activity") || !entry.contains("build"))
    return {std::nullopt,
            "have no record of what else the machine did while they were measured (an older convbench wrote them)"};
  const std::string build = field_text(entry, "build");
  if (build != build_of(provenance))
    return {std::nullopt, "were measured by another build (" + build + ", on " + field_text(entry, "date") +
                              "; this is " + build_of(provenance) + ")"};
  TrustAssessment trust;
  try {
    trust = assess_host_activity(host_activity_from_json(entry["host_activity"], "device-limits cache"));
  } catch (const std::exception& e) {
    return {std::nullopt, std::string("have an unreadable record of the machine's activity: ") + e.what()};
  }
  if (trust.level != Trust::ok)
    return {std::nullopt, "were measured while the machine was busy (" + evidence_text(trust) + ")"};
  auto limits = device_limits_from_json(entry, "?");
  if (!limits) return {std::nullopt, "are not limits a device can have"};
  return {limits, ""};
}

nlohmann::json cpu_limits_entry(const DeviceLimits& limits, const CpuLimitsMeasurement& m,
                                const nlohmann::json& provenance) {
  const TrustAssessment trust = assess_host_activity(m.activity);
  nlohmann::json entry = device_limits_json(limits);
  entry["build"] = build_of(provenance);
  entry["date"] = field_text(provenance, "date");
  entry["host_activity"] = host_activity_to_json(m.activity);
  entry["trust"] = to_string(trust.level);
  entry["trust_evidence"] = trust.evidence;
  return entry;
}

void write_cpu_limits_cache(const CpuLimitsCache& cache, const std::string& key, const nlohmann::json& entry,
                            std::ostream& notices) {
  if (cache.path.empty()) return;
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [k, e] : cache.entries.items())
    if (e.is_object() && e.contains("host_activity")) entries[k] = e;
  entries[key] = entry;
  try {
    std::filesystem::create_directories(std::filesystem::path(cache.path).parent_path());
    const nlohmann::json doc = {{"schema", kLimitsCacheSchema}, {"entries", entries}};
    write_output_files({{{cache.path, "device-limits cache"}, json_text(doc, 2) + "\n"}}, {});
  } catch (const std::exception& e) {
    notices << "convbench: could not cache the device limits in " << cache.path << ": " << e.what() << "\n";
  }
}

}  // namespace convbench
