#include "pipeline/device_limits_choice.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "measure/cpu_limits.hpp"
#include "report/output_writer.hpp"
#include "spec/input_file.hpp"
#include "spec/json_text.hpp"

namespace convbench {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string text_of(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "?";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// What a measurement depends on: the CPU, the threads it used and the library it timed.
std::string cache_key(const nlohmann::json& provenance) {
  return text_of(provenance, "cpu") + " | threads " + text_of(provenance, "threads") + " | oneDNN " +
         text_of(provenance, "onednn_version");
}

// The cache's entries, or an empty object when the file is absent or unusable (said on notices).
nlohmann::json read_cache(const std::string& path, std::ostream& notices) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return nlohmann::json::object();
  try {
    const InputText file = read_input_file(path, "device-limits cache", int64_t{1} << 20);
    const nlohmann::json j = nlohmann::json::parse(file.text);
    if (j.is_object() && j.value("schema", "") == "convbench.device_limits/1" && j.contains("entries") &&
        j["entries"].is_object())
      return j["entries"];
    notices << "convbench: ignoring " << path << ": not a convbench device-limits cache\n";
  } catch (const std::exception& e) {
    notices << "convbench: ignoring " << path << ": " << e.what() << "\n";
  }
  return nlohmann::json::object();
}

std::string format_fixed(double v, int decimals) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(decimals);
  out << v;
  return out.str();
}

std::optional<DeviceLimits> cached_entry(const nlohmann::json& entries, const std::string& key) {
  if (!entries.contains(key)) return std::nullopt;
  return device_limits_from_json(entries[key], "?");
}

}  // namespace

std::string default_limits_cache_path() {
  if (const std::string d = env("CONVBENCH_CACHE_DIR"); !d.empty()) return d + "/device-limits.json";
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/convbench/device-limits.json";
  if (const std::string d = env("HOME"); !d.empty()) return d + "/.cache/convbench/device-limits.json";
  return "";
}

std::optional<DeviceLimits> choose_device_limits(const LimitsRequest& request, const std::string& device,
                                                 const std::string& dtype, const nlohmann::json& provenance,
                                                 std::ostream& notices, const std::optional<MeasuredLimits>& measured) {
  if (request.peak_flops > 0 && request.bandwidth > 0)
    return DeviceLimits{request.peak_flops, request.bandwidth, "given with --peak-flops and --bandwidth"};
  if (device == "cuda") {
    const auto sheet = device_limits(provenance, dtype);
    if (!measured || !plausible_device_limits(measured->peak_flops, measured->bandwidth_bytes_per_s)) return sheet;
    std::string source =
        "measured on " + recorded_gpu_name(provenance) + " on " + text_of(provenance, "date") + ": " + measured->method;
    if (sheet)
      source += "; its " + sheet->source + ": " + format_fixed(sheet->peak_flops / 1e12, 0) + " TFLOP/s, " +
                format_fixed(sheet->bandwidth_bytes_per_s / 1e12, 2) + " TB/s";
    return DeviceLimits{measured->peak_flops, measured->bandwidth_bytes_per_s, source};
  }
  if (device != "cpu" || dtype != "float32") return std::nullopt;  // measured for the cpu backend's float32 only

  const std::string path = request.cache_path.empty() ? default_limits_cache_path() : request.cache_path;
  const std::string key = cache_key(provenance);
  nlohmann::json entries = read_cache(path, notices);
  if (!request.calibrate)
    if (auto cached = cached_entry(entries, key)) return cached;

  notices << "convbench: measuring this CPU's peak FLOP/s and bandwidth (about a second; cached"
          << (path.empty() ? " nowhere: no HOME" : " in " + path) << ")\n";
  const CpuLimitsMeasurement m = measure_cpu_limits();
  if (!plausible_device_limits(m.peak_flops, m.bandwidth_bytes_per_s)) return std::nullopt;
  const std::string date = text_of(provenance, "date");
  DeviceLimits l{m.peak_flops, m.bandwidth_bytes_per_s, "measured on this CPU on " + date + ": " + m.method};
  if (!path.empty()) {
    entries[key] = {
        {"peak_flops", l.peak_flops}, {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s}, {"source", l.source}};
    try {
      std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      const nlohmann::json doc = {{"schema", "convbench.device_limits/1"}, {"entries", entries}};
      write_output_files({{{path, "device-limits cache"}, json_text(doc, 2) + "\n"}}, {});
    } catch (const std::exception& e) {
      notices << "convbench: could not cache the device limits in " << path << ": " << e.what() << "\n";
    }
  }
  return l;
}

}  // namespace convbench
