#include "report/gbench_json.hpp"

#include <algorithm>
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
  constexpr double kNsPerMs = 1e6;
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
      const auto entry = [&](const std::string& name, const char* run_type, int repetitions, int64_t iterations,
                             double ms) {
        return json{{"name", name},
                    {"family_index", family},
                    {"per_family_instance_index", 0},
                    {"run_name", run_name},
                    {"run_type", run_type},
                    {"repetitions", repetitions},
                    {"threads", 1},
                    {"iterations", iterations},
                    {"real_time", ms * kNsPerMs},
                    {"cpu_time", ms * kNsPerMs},  // wall time: convbench does not measure CPU time
                    {"time_unit", "ns"}};
      };
      // Samples taken in order, cut into consecutive runs of (nearly) equal size.
      const std::vector<double>& raw = t.raw_ms;
      const int n = static_cast<int>(raw.size());
      const int reps = std::max(1, std::min(n, kGbenchMaxRepetitions));
      for (int i = 0; i < reps; ++i) {
        const size_t lo = static_cast<size_t>(static_cast<int64_t>(i) * n / reps);
        const size_t hi = static_cast<size_t>(static_cast<int64_t>(i + 1) * n / reps);
        double sum = 0;
        for (size_t k = lo; k < hi; ++k) sum += raw[k];
        const int64_t count = static_cast<int64_t>(hi - lo);
        json e = entry(run_name, "iteration", reps, std::max<int64_t>(count, 1), count > 0 ? sum / count : t.median);
        e["repetition_index"] = i;
        benchmarks.push_back(std::move(e));
      }
      const std::pair<const char*, double> aggregates[] = {
          {"median", t.median}, {"mean", t.mean}, {"stddev", stdev_of(t)}, {"cv", t.noise}};
      for (const auto& [name, value] : aggregates) {
        const bool percentage = std::string(name) == "cv";
        json a = entry(run_name + "_" + name, "aggregate", reps, std::max(n, 1), percentage ? 0.0 : value);
        a["aggregate_name"] = name;
        a["aggregate_unit"] = percentage ? "percentage" : "time";
        if (percentage) a["real_time"] = a["cpu_time"] = value;  // a fraction, not a time
        benchmarks.push_back(std::move(a));
      }
      ++family;
    }
  }
  return {{"context", context_of(results)}, {"benchmarks", benchmarks}};
}

}  // namespace convbench
