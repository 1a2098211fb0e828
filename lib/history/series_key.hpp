// What makes two results rows points of the same series, so that a trend compares like with
// like: the workload (block, variant, sweep point, the resolved op graph's hash, dtype, layout,
// mode) and the machine as far as it changes speed (backend, device model, driver and library
// versions, the device's clock and size settings). A change in any of them starts a new series:
// a new GPU, driver or cuDNN is not a regression of the code. Host name and convbench's commit
// are not in the key: the commit is what the trend is over, and two identical machines in a CI
// pool share a series.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/results.hpp"

namespace convbench {

struct SeriesKey {
  std::string block, variant, point, graph_hash, graph_hash_source, dtype, layout, mode;
  std::string backend, device_model;
  // Versions and speed settings of the device, in a fixed order (lib/history/README.md):
  // cuda: driver, CUDA runtime, cuDNN, compute capability, SM count and memory size (a MIG slice
  // shows fewer of both), max SM and memory clocks; cpu: oneDNN, threads, CPUs allowed, hardware
  // threads. Fields the file does not record are left out.
  nlohmann::ordered_json device_key = nlohmann::ordered_json::object();

  nlohmann::ordered_json to_json() const;  // every field, in a fixed order
  std::string sha256() const;              // of to_json().dump()
  // "vnet-block [batch=8] / bottleneck" for tables and messages.
  std::string label() const;
  // "cuda NVIDIA H100 80GB HBM3" / "cpu AMD EPYC": the section of the trend report.
  std::string device_label() const;
};

// When the row has no graph_hash (a file from before it existed), the key is derived from the
// row's kind, shapes, kernel and counts, and graph_hash_source says so.
SeriesKey series_key(const ResultRow& row, const ResultSet& run);

// The backend a run was measured on: provenance.backend, else the file's device, else the row's.
std::string run_backend(const ResultSet& run);

}  // namespace convbench
