#include "report/json_results.hpp"

#include <fstream>
#include <sstream>

#include "spec/spec_error.hpp"

namespace convbench {
namespace {

using nlohmann::json;

// Reading is tolerant of absent and null fields (the PyTorch peer writes null for what it could
// not measure) but not of wrong types: get<T>() throws json::type_error, reported as a malformed row.
template <class T>
T field(const json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

const json& object_field(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

bool has_value(const json& j, const char* key) { return j.is_object() && j.contains(key) && !j[key].is_null(); }

json directions(const DirectionCounts& c) {
  return {{"forward", c.forward}, {"backward_data", c.backward_data}, {"backward_weight", c.backward_weight}};
}

DirectionCounts directions_from(const json& j) {
  DirectionCounts c;
  c.forward = field(j, "forward", int64_t{0});
  c.backward_data = field(j, "backward_data", int64_t{0});
  c.backward_weight = field(j, "backward_weight", int64_t{0});
  return c;
}

json categories(const CategoryBytes& b) {
  json j = json::object();
  for (int i = 0; i < kMemoryCategoryCount; ++i)
    j[std::string(to_string(static_cast<MemoryCategory>(i)))] = b[static_cast<size_t>(i)];
  return j;
}

CategoryBytes categories_from(const json& j) {
  CategoryBytes b{};
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    const std::string name(to_string(static_cast<MemoryCategory>(i)));
    b[static_cast<size_t>(i)] = field(j, name.c_str(), int64_t{0});
  }
  return b;
}

json memory_figures(const MemoryFigures& m) {
  json j = {{"at_peak", categories(m.at_peak)},
            {"peak_by_category", categories(m.peak_by_category)},
            {"saved_bytes", m.saved_bytes}};
  if (m.reserved_peak_bytes >= 0) j["reserved_peak_bytes"] = m.reserved_peak_bytes;
  return j;
}

MemoryFigures memory_figures_from(const json& j, int64_t peak) {
  MemoryFigures m;
  m.peak_bytes = peak;
  m.at_peak = categories_from(object_field(j, "at_peak"));
  m.peak_by_category = categories_from(object_field(j, "peak_by_category"));
  m.saved_bytes = field(j, "saved_bytes", int64_t{0});
  m.reserved_peak_bytes = field(j, "reserved_peak_bytes", int64_t{-1});
  return m;
}

// The measured memory of a row: convbench writes {"peak_bytes", "measured": {...}}; the PyTorch
// peer writes {"saved_bytes", ...} on any device plus "peak_bytes" and "peak_reserved_bytes" on
// CUDA, with no breakdown. A peak that was not measured is -1.
std::optional<MemoryFigures> measured_from(const json& mem) {
  if (has_value(mem, "measured"))
    return memory_figures_from(object_field(mem, "measured"), field(mem, "peak_bytes", int64_t{-1}));
  if (!has_value(mem, "peak_bytes") && !has_value(mem, "saved_bytes")) return std::nullopt;
  MemoryFigures m;
  m.peak_bytes = field(mem, "peak_bytes", int64_t{-1});
  m.saved_bytes = field(mem, "saved_bytes", int64_t{0});
  m.reserved_peak_bytes = field(mem, "peak_reserved_bytes", int64_t{-1});
  return m;
}

json time_stats(const TimeStats& t) {
  return {{"median", t.median}, {"min", t.min},     {"max", t.max},
          {"q1", t.q1},         {"q3", t.q3},       {"mean", t.mean},
          {"noise", t.noise},   {"noise_met", t.noise_met},
          {"samples", t.samples()}, {"raw_ms", t.raw_ms}};
}

// convbench writes noise and noise_met; the peer writes rel_stdev (null for one sample) and
// stop ("converged" | "timeout").
std::optional<TimeStats> time_stats_from(const json& t, const char* phase) {
  if (!has_value(t, phase)) return std::nullopt;
  const json& j = t[phase];
  TimeStats s;
  s.median = field(j, "median", 0.0);
  s.min = field(j, "min", 0.0);
  s.max = field(j, "max", 0.0);
  s.q1 = field(j, "q1", 0.0);
  s.q3 = field(j, "q3", 0.0);
  s.mean = field(j, "mean", s.median);
  s.noise = field(j, "noise", field(j, "rel_stdev", 0.0));
  s.noise_met = field(j, "noise_met", field(j, "stop", std::string()) == "converged");
  s.raw_ms = field(j, "raw_ms", std::vector<double>{});
  return s;
}

json row_to_json(const ResultRow& r) {
  json point = json::object();
  for (const auto& [k, v] : r.point) point[k] = json::parse(v);
  json j = {{"block", r.block},
            {"variant", r.variant},
            {"kind", r.kind},
            {"point", point},
            {"point_label", r.point_label},
            {"baseline", r.is_baseline},
            {"dims", r.dims},
            {"dtype", r.dtype},
            {"layout", r.layout},
            {"mode", r.mode},
            {"input_shape", r.input_shape},
            {"output_shape", r.output_shape},
            {"params", r.params},
            {"buffers", r.buffers},
            {"macs", directions(r.macs)},
            {"flops", directions(r.flops)},
            {"bytes", {{"forward", r.bytes_forward}, {"backward", r.bytes_backward}}}};
  json memory = {{"predicted_peak_bytes", r.predicted.peak_bytes}, {"predicted", memory_figures(r.predicted)}};
  if (r.measured) {
    if (r.measured->peak_bytes >= 0) memory["peak_bytes"] = r.measured->peak_bytes;
    memory["measured"] = memory_figures(*r.measured);
  }
  j["memory"] = memory;
  if (!r.device.empty()) {
    j["device"] = r.device;
    j["status"] = r.status;
    j["message"] = r.message;
    json t = json::object();
    if (r.forward) t["forward"] = time_stats(*r.forward);
    if (r.backward) t["backward"] = time_stats(*r.backward);
    if (r.step) t["step"] = time_stats(*r.step);
    if (r.graph) t["graph"] = time_stats(*r.graph);
    j["time_ms"] = t;
    if (!r.graph_message.empty()) j["graph_message"] = r.graph_message;
    if (r.clock)
      j["clock"] = {{"domain", r.clock->domain},
                    {"before_mhz", r.clock->before_mhz},
                    {"after_mhz", r.clock->after_mhz},
                    {"limits_after", r.clock->limits_after}};
    if (!r.op_details.empty()) j["op_details"] = r.op_details;
    if (!r.op_times.empty()) j["op_times"] = r.op_times;
  }
  return j;
}

ResultRow row_from_json(const json& j) {
  ResultRow r;
  r.block = j.at("block").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.kind = field(j, "kind", std::string());
  for (const auto& [k, v] : object_field(j, "point").items()) r.point.emplace_back(k, v.dump());
  r.point_label = field(j, "point_label", std::string());
  r.is_baseline = field(j, "baseline", false);
  r.dims = field(j, "dims", 2);
  r.dtype = field(j, "dtype", std::string());
  r.layout = field(j, "layout", std::string());
  r.mode = field(j, "mode", std::string());
  r.input_shape = field(j, "input_shape", std::vector<int64_t>{});
  r.output_shape = field(j, "output_shape", std::vector<int64_t>{});
  r.params = field(j, "params", int64_t{0});
  r.buffers = field(j, "buffers", int64_t{0});
  r.macs = directions_from(object_field(j, "macs"));
  r.flops = directions_from(object_field(j, "flops"));
  const json& bytes = object_field(j, "bytes");
  r.bytes_forward = field(bytes, "forward", int64_t{0});
  r.bytes_backward = field(bytes, "backward", int64_t{0});
  const json& mem = object_field(j, "memory");
  r.predicted = memory_figures_from(object_field(mem, "predicted"), field(mem, "predicted_peak_bytes", int64_t{0}));
  r.measured = measured_from(mem);
  r.device = field(j, "device", std::string());
  r.status = field(j, "status", std::string("ok"));
  r.message = field(j, "message", std::string());
  if (j.contains("op_details") && j["op_details"].is_object()) r.op_details = j["op_details"];
  if (j.contains("op_times") && j["op_times"].is_object()) r.op_times = j["op_times"];
  const json& t = object_field(j, "time_ms");
  r.forward = time_stats_from(t, "forward");
  r.backward = time_stats_from(t, "backward");
  r.step = time_stats_from(t, "step");
  r.graph = time_stats_from(t, "graph");
  r.graph_message = field(j, "graph_message", std::string());
  if (has_value(j, "clock")) {
    const json& c = object_field(j, "clock");
    r.clock = ClockWindow{field(c, "domain", std::string()), field(c, "before_mhz", 0.0), field(c, "after_mhz", 0.0),
                          field(c, "limits_after", std::vector<std::string>{})};
  }
  return r;
}

}  // namespace

json results_to_json(const ResultSet& results) {
  json rows = json::array();
  for (const ResultRow& r : results.rows) rows.push_back(row_to_json(r));
  json doc = {{"schema", kResultsSchema}, {"engine", results.engine}};
  if (!results.device.empty()) doc["device"] = results.device;
  doc["provenance"] = results.provenance;
  doc["results"] = rows;
  return doc;
}

ResultSet results_from_json(const json& doc, const std::string& file_name) {
  const SourceLocation where{file_name, 0, 0};
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string() || doc["schema"] != kResultsSchema)
    throw SpecError(where, "schema", std::string("not a convbench results file (expected \"schema\": \"") + kResultsSchema + "\")");
  if (!doc.contains("results") || !doc["results"].is_array())
    throw SpecError(where, "results", "missing the \"results\" list");
  ResultSet set;
  try {
    set.engine = field(doc, "engine", std::string("convbench"));
    set.device = field(doc, "device", std::string());
  } catch (const json::exception& e) {
    throw SpecError(where, "engine", std::string("malformed header: ") + e.what());
  }
  set.provenance = object_field(doc, "provenance");
  size_t i = 0;
  for (const json& j : doc["results"]) {
    const std::string path = "results[" + std::to_string(i++) + "]";
    try {
      set.rows.push_back(row_from_json(j));
    } catch (const json::exception& e) {
      throw SpecError(where, path, std::string("malformed row: ") + e.what());
    }
  }
  return set;
}

ResultSet load_results_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError({path, 0, 0}, "", "cannot open the results file");
  std::stringstream buf;
  buf << in.rdbuf();
  json doc;
  try {
    doc = json::parse(buf.str());
  } catch (const json::parse_error& e) {
    throw SpecError({path, 0, 0}, "", std::string("malformed JSON: ") + e.what());
  }
  return results_from_json(doc, path);
}

}  // namespace convbench
