#include "results/device_limits.hpp"

#include <cmath>

#include "results/gpu_datasheets.hpp"

namespace convbench {

bool plausible_device_limits(double peak_flops, double bandwidth_bytes_per_s) {
  return std::isfinite(peak_flops) && std::isfinite(bandwidth_bytes_per_s) && peak_flops >= kMinPeakFlops &&
         peak_flops <= kMaxPeakFlops && bandwidth_bytes_per_s >= kMinBandwidth &&
         bandwidth_bytes_per_s <= kMaxBandwidth;
}

std::string recorded_gpu_name(const nlohmann::json& provenance) {
  if (!provenance.is_object()) return "";
  for (const char* key : {"gpu_name", "device_name", "gpu"}) {
    const auto it = provenance.find(key);
    if (it == provenance.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("name") && (*it)["name"].is_string()) return (*it)["name"].get<std::string>();
  }
  return "";
}

nlohmann::json device_limits_json(const DeviceLimits& l) {
  nlohmann::json j = {
      {"peak_flops", l.peak_flops}, {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s}, {"source", l.source}};
  if (!l.doubt.empty()) j["doubt"] = l.doubt;
  if (!l.dtype.empty()) j["dtype"] = l.dtype;
  if (!l.datasheet.empty()) j["datasheet"] = l.datasheet;
  if (l.other_device) j["other_device"] = true;
  return j;
}

std::optional<DeviceLimits> device_limits_from_json(const nlohmann::json& d, const std::string& source) {
  if (!d.is_object() || !d.contains("peak_flops") || !d["peak_flops"].is_number() ||
      !d.contains("bandwidth_bytes_per_s") || !d["bandwidth_bytes_per_s"].is_number())
    return std::nullopt;
  DeviceLimits l{d["peak_flops"].get<double>(), d["bandwidth_bytes_per_s"].get<double>(),
                 d.contains("source") && d["source"].is_string() ? d["source"].get<std::string>() : source};
  if (!plausible_device_limits(l.peak_flops, l.bandwidth_bytes_per_s)) return std::nullopt;
  const auto text = [&](const char* key) {
    return d.contains(key) && d[key].is_string() ? d[key].get<std::string>() : std::string();
  };
  l.doubt = text("doubt");
  l.dtype = text("dtype");
  l.datasheet = text("datasheet");
  l.other_device = d.contains("other_device") && d["other_device"].is_boolean() && d["other_device"].get<bool>();
  return l;
}

std::optional<DeviceLimits> datasheet_limits(const GpuDatasheet& d, const std::string& dtype) {
  const auto peak = datasheet_peak_flops(d, dtype);
  if (!peak) return std::nullopt;
  DeviceLimits l{*peak, d.bandwidth_bytes_per_s, d.title + " datasheet (" + dtype + ", dense)"};
  l.dtype = dtype;
  l.datasheet = d.name;
  return l;
}

std::optional<DeviceLimits> named_device_limits(const GpuDatasheet& d, const std::string& dtype,
                                                const nlohmann::json& provenance) {
  auto l = datasheet_limits(d, dtype);
  if (l) l->other_device = gpu_datasheet_for(recorded_gpu_name(provenance)) != &d;
  return l;
}

std::optional<DeviceLimits> device_limits(const nlohmann::json& provenance, const std::string& dtype) {
  if (provenance.is_object() && provenance.contains("device_limits"))
    if (auto l = device_limits_from_json(provenance["device_limits"], "recorded in the results")) {
      if (l->dtype.empty() || l->dtype == dtype) return l;
      // Recorded for another dtype: the same datasheet's numbers for this one, when it names one
      // (a float32 peak says nothing about a float16 block).
      if (const GpuDatasheet* d = find_gpu_datasheet(l->datasheet)) {
        auto other = datasheet_limits(*d, dtype);
        if (other) other->other_device = l->other_device;
        return other;
      }
    }
  const GpuDatasheet* d = gpu_datasheet_for(recorded_gpu_name(provenance));
  return d ? datasheet_limits(*d, dtype) : std::nullopt;
}

}  // namespace convbench
