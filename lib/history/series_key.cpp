#include "history/series_key.hpp"

#include "util/json_text.hpp"
#include "util/sha256.hpp"

namespace convbench {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string text_of(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) return "";
  const json& v = object[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

void add_if_present(ordered_json& out, const json& object, const char* key) {
  if (object.is_object() && object.contains(key) && !object[key].is_null()) out[key] = object[key];
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// What a file without graph_hash still says about the graph: enough that a changed block
// (another kernel or width, other counts) starts a new series.
std::string derived_graph_hash(const ResultRow& r) {
  const std::string text = "derived/1 kind " + r.kind + " in " + shape_text(r.input_shape) + " out " +
                           shape_text(r.output_shape) + " kernel " + shape_text(r.kernel) + " params " +
                           std::to_string(r.params) + " buffers " + std::to_string(r.buffers) + " macs " +
                           std::to_string(r.macs.forward) + "," + std::to_string(r.macs.backward_data) + "," +
                           std::to_string(r.macs.backward_weight) + " flops " + std::to_string(r.flops.forward) + "," +
                           std::to_string(r.flops.backward_data) + "," + std::to_string(r.flops.backward_weight);
  return sha256_hex(text);
}

}  // namespace

std::string run_backend(const ResultSet& run) {
  if (const std::string b = text_of(run.provenance, "backend"); !b.empty()) return b;
  if (!run.device.empty()) return run.device;
  for (const ResultRow& r : run.rows)
    if (!r.device.empty()) return r.device;
  return "none";
}

SeriesKey series_key(const ResultRow& row, const ResultSet& run) {
  SeriesKey k;
  k.block = row.block;
  k.variant = row.variant;
  k.point = row.point_label;
  if (!row.graph_hash.empty()) {
    k.graph_hash = row.graph_hash;
    k.graph_hash_source = "graph";
  } else {
    k.graph_hash = derived_graph_hash(row);
    k.graph_hash_source = "derived from shapes and counts";
  }
  k.dtype = row.dtype;
  k.layout = row.layout;
  k.mode = row.mode;
  k.backend = row.device.empty() ? run_backend(run) : row.device;
  const json& p = run.provenance;
  const json device = p.is_object() && p.contains("device") && p["device"].is_object() ? p["device"] : json::object();
  if (k.backend == "cuda") {
    k.device_model = text_of(device, "gpu");
    for (const char* f : {"driver_cuda_version", "runtime_cuda_version", "cudnn_runtime_version", "compute_capability",
                          "multiprocessors", "memory_bytes", "sm_clock_max_mhz", "memory_clock_mhz"})
      add_if_present(k.device_key, device, f);
    // Older files: the build's versions when the device did not report its own.
    if (!k.device_key.contains("runtime_cuda_version")) add_if_present(k.device_key, p, "cuda_version");
    if (!k.device_key.contains("cudnn_runtime_version")) add_if_present(k.device_key, p, "cudnn_version");
  } else {
    k.device_model = text_of(p, "cpu");
    if (k.backend == "cpu") add_if_present(k.device_key, p, "onednn_version");
    for (const char* f : {"threads", "cpus_allowed", "hardware_threads"}) add_if_present(k.device_key, p, f);
  }
  if (k.device_model.empty()) k.device_model = "unknown";
  return k;
}

ordered_json SeriesKey::to_json() const {
  return {{"block", block},
          {"variant", variant},
          {"point", point},
          {"graph_hash", graph_hash},
          {"graph_hash_source", graph_hash_source},
          {"dtype", dtype},
          {"layout", layout},
          {"mode", mode},
          {"backend", backend},
          {"device_model", device_model},
          {"device_key", device_key}};
}

std::string SeriesKey::sha256() const { return sha256_hex(json_text(to_json())); }

std::string SeriesKey::label() const { return block + (point.empty() ? "" : " [" + point + "]") + " / " + variant; }

std::string SeriesKey::device_label() const { return backend + " " + device_model; }

}  // namespace convbench
