#include "results/device_limits.hpp"

#include <cmath>

namespace convbench {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Dense datasheet peaks (no sparsity). H100 SXM5 and H200 share the compute; H200 has 4.8 TB/s
// of HBM3e against the H100 SXM's 3.35 TB/s of HBM3. The PCIe and NVL parts have other limits and
// are not guessed.
std::optional<double> hopper_peak_flops(const std::string& dtype) {
  if (dtype == "float32") return 67e12;
  if (dtype == "tf32") return 495e12;
  if (dtype == "float16" || dtype == "bfloat16") return 989e12;
  return std::nullopt;
}

}  // namespace

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
  return j;
}

std::optional<DeviceLimits> device_limits_from_json(const nlohmann::json& d, const std::string& source) {
  if (!d.is_object() || !d.contains("peak_flops") || !d["peak_flops"].is_number() ||
      !d.contains("bandwidth_bytes_per_s") || !d["bandwidth_bytes_per_s"].is_number())
    return std::nullopt;
  DeviceLimits l{d["peak_flops"].get<double>(), d["bandwidth_bytes_per_s"].get<double>(),
                 d.contains("source") && d["source"].is_string() ? d["source"].get<std::string>() : source};
  if (!plausible_device_limits(l.peak_flops, l.bandwidth_bytes_per_s)) return std::nullopt;
  if (d.contains("doubt") && d["doubt"].is_string()) l.doubt = d["doubt"].get<std::string>();
  return l;
}

std::optional<DeviceLimits> device_limits(const nlohmann::json& provenance, const std::string& dtype) {
  if (provenance.is_object() && provenance.contains("device_limits"))
    if (auto l = device_limits_from_json(provenance["device_limits"], "recorded in the results")) return l;
  const std::string gpu = recorded_gpu_name(provenance);
  if (contains(gpu, "PCIe") || contains(gpu, "NVL")) return std::nullopt;
  const auto peak = hopper_peak_flops(dtype);
  if (!peak) return std::nullopt;
  if (contains(gpu, "H100")) return DeviceLimits{*peak, 3.35e12, "H100 SXM datasheet (" + dtype + ", dense)"};
  if (contains(gpu, "H200")) return DeviceLimits{*peak, 4.8e12, "H200 datasheet (" + dtype + ", dense)"};
  return std::nullopt;
}

}  // namespace convbench
