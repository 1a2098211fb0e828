#include "report/gbench_json.hpp"

#include <cmath>

namespace convbench {
namespace {

using json = nlohmann::ordered_json;

// Provenance fields convbench does not record are left at neutral values, and the context says
// which, rather than describing the machine that renders the report.
json context_of(const ResultSet& results) {
  const nlohmann::json& p = results.provenance;
  auto text = [&](const char* key, const std::string& fallback) {
    return p.contains(key) && p[key].is_string() ? p[key].get<std::string>() : fallback;
  };
  std::string executable = text("command_line", "convbench");
  executable = executable.substr(0, executable.find(' '));
  const int num_cpus = p.contains("hardware_threads") && p["hardware_threads"].is_number_integer()
                           ? p["hardware_threads"].get<int>()
                       : p.contains("threads") && p["threads"].is_number_integer() ? p["threads"].get<int>()
                                                                                   : 0;
  const bool has_mhz = p.contains("cpu_mhz") && p["cpu_mhz"].is_number();
  const bool has_scaling = p.contains("cpu_scaling_enabled") && p["cpu_scaling_enabled"].is_boolean();
  json c = {{"date", text("date", "")},
            {"host_name", text("host_name", "unknown")},
            {"executable", executable},
            {"num_cpus", num_cpus},
            {"mhz_per_cpu", has_mhz ? static_cast<int>(std::lround(p["cpu_mhz"].get<double>())) : 0},
            {"cpu_scaling_enabled", has_scaling && p["cpu_scaling_enabled"].get<bool>()},
            {"caches", json::array()},
            {"load_avg", json::array()},
            {"library_version", results.engine},
            {"library_build_type", text("build_type", "unknown")},
            {"json_schema_version", 1},
            // Custom context (string values, as benchmark::AddCustomContext writes them).
            {"convbench_engine", results.engine},
            {"convbench_device", results.device},
            {"cpu", text("cpu", "")},
            {"git_commit", text("git_commit", "")},
            {"spec_sha256", text("spec_sha256", "")}};
  std::string unknown;
  if (!has_mhz) unknown += "mhz_per_cpu";
  if (!has_scaling) unknown += std::string(unknown.empty() ? "" : ", ") + "cpu_scaling_enabled";
  if (!p.contains("host_name")) unknown += std::string(unknown.empty() ? "" : ", ") + "host_name";
  if (!unknown.empty()) c["convbench_not_recorded"] = unknown + " (not recorded by the run; neutral values written)";
  return c;
}

double stdev_of(const TimeStats& t) { return t.noise * t.mean; }

}  // namespace

std::string gbench_run_name(const ResultRow& row, const std::string& phase) {
  return row.block + "/" + row.variant + (row.point_label.empty() ? "" : "/" + row.point_label) + "/" + phase;
}

nlohmann::ordered_json results_to_gbench_json(const ResultSet& results) {
  json benchmarks = json::array();
  int family = 0;
  for (const ResultRow& r : results.rows) {
    if (r.status != RunStatus::ok) continue;
    const std::pair<const char*, const std::optional<TimeStats>*> phases[] = {
        {"forward", &r.forward},
        {"backward", &r.backward},
        {"step", &r.step},
        {is_training(r) ? "step_graph" : "forward_graph", &r.graph}};
    for (const auto& [phase, stats] : phases) {
      if (!*stats) continue;
      const TimeStats& t = **stats;
      const std::string run_name = gbench_run_name(r, phase);
      const int samples = t.samples() > 0 ? t.samples() : 1;
      // Google Benchmark's iteration entry reports the mean time per iteration.
      json entry = {{"name", run_name},
                    {"family_index", family},
                    {"per_family_instance_index", 0},
                    {"run_name", run_name},
                    {"run_type", "iteration"},
                    {"repetitions", 1},
                    {"repetition_index", 0},
                    {"threads", 1},
                    {"iterations", samples},
                    {"real_time", t.mean},
                    {"cpu_time", t.mean},
                    {"time_unit", "ms"}};
      benchmarks.push_back(entry);
      const std::pair<const char*, double> aggregates[] = {
          {"mean", t.mean}, {"median", t.median}, {"stddev", stdev_of(t)}, {"cv", t.noise}};
      for (const auto& [name, value] : aggregates) {
        const bool percentage = std::string(name) == "cv";
        benchmarks.push_back({{"name", run_name + "_" + name},
                              {"family_index", family},
                              {"per_family_instance_index", 0},
                              {"run_name", run_name},
                              {"run_type", "aggregate"},
                              {"repetitions", 1},
                              {"threads", 1},
                              {"aggregate_name", name},
                              {"aggregate_unit", percentage ? "percentage" : "time"},
                              {"iterations", samples},
                              {"real_time", value},
                              {"cpu_time", value},
                              {"time_unit", "ms"}});
      }
      ++family;
    }
  }
  return {{"context", context_of(results)}, {"benchmarks", benchmarks}};
}

}  // namespace convbench
