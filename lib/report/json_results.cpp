#include "report/json_results.hpp"

#include <fstream>
#include <sstream>

#include "spec/spec_error.hpp"

namespace convbench {
namespace {

using nlohmann::json;

json directions(const DirectionCounts& c) {
  return {{"forward", c.forward}, {"backward_data", c.backward_data}, {"backward_weight", c.backward_weight}};
}

DirectionCounts directions_from(const json& j) {
  DirectionCounts c;
  if (!j.is_object()) return c;
  c.forward = j.value("forward", int64_t{0});
  c.backward_data = j.value("backward_data", int64_t{0});
  c.backward_weight = j.value("backward_weight", int64_t{0});
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
  if (!j.is_object()) return b;
  for (int i = 0; i < kMemoryCategoryCount; ++i)
    b[static_cast<size_t>(i)] = j.value(std::string(to_string(static_cast<MemoryCategory>(i))), int64_t{0});
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
  if (!j.is_object()) return m;
  m.at_peak = categories_from(j.value("at_peak", json::object()));
  m.peak_by_category = categories_from(j.value("peak_by_category", json::object()));
  m.saved_bytes = j.value("saved_bytes", int64_t{0});
  m.reserved_peak_bytes = j.value("reserved_peak_bytes", int64_t{-1});
  return m;
}

json time_stats(const TimeStats& t) {
  return {{"median", t.median}, {"min", t.min},     {"max", t.max},
          {"q1", t.q1},         {"q3", t.q3},       {"mean", t.mean},
          {"noise", t.noise},   {"noise_met", t.noise_met},
          {"samples", t.samples()}, {"raw_ms", t.raw_ms}};
}

TimeStats time_stats_from(const json& j) {
  TimeStats t;
  t.median = j.value("median", 0.0);
  t.min = j.value("min", 0.0);
  t.max = j.value("max", 0.0);
  t.q1 = j.value("q1", 0.0);
  t.q3 = j.value("q3", 0.0);
  t.mean = j.value("mean", t.median);
  t.noise = j.value("noise", 0.0);
  t.noise_met = j.value("noise_met", false);
  if (j.contains("raw_ms") && j["raw_ms"].is_array()) t.raw_ms = j["raw_ms"].get<std::vector<double>>();
  return t;
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
    memory["peak_bytes"] = r.measured->peak_bytes;
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
    j["time_ms"] = t;
  }
  return j;
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
  if (!doc.is_object() || doc.value("schema", std::string()) != kResultsSchema)
    throw SpecError(where, "schema", std::string("not a convbench results file (expected \"schema\": \"") + kResultsSchema + "\")");
  if (!doc.contains("results") || !doc["results"].is_array())
    throw SpecError(where, "results", "missing the \"results\" list");
  ResultSet set;
  set.engine = doc.value("engine", std::string("convbench"));
  set.device = doc.value("device", std::string());
  set.provenance = doc.value("provenance", json::object());
  size_t i = 0;
  for (const json& j : doc["results"]) {
    const std::string path = "results[" + std::to_string(i++) + "]";
    try {
      ResultRow r;
      r.block = j.at("block").get<std::string>();
      r.variant = j.at("variant").get<std::string>();
      r.kind = j.value("kind", std::string());
      if (j.contains("point") && j["point"].is_object())
        for (const auto& [k, v] : j["point"].items()) r.point.emplace_back(k, v.dump());
      r.point_label = j.value("point_label", std::string());
      r.is_baseline = j.value("baseline", false);
      r.dims = j.value("dims", 2);
      r.dtype = j.value("dtype", std::string());
      r.layout = j.value("layout", std::string());
      r.mode = j.value("mode", std::string());
      r.input_shape = j.value("input_shape", std::vector<int64_t>{});
      r.output_shape = j.value("output_shape", std::vector<int64_t>{});
      r.params = j.value("params", int64_t{0});
      r.buffers = j.value("buffers", int64_t{0});
      r.macs = directions_from(j.value("macs", json::object()));
      r.flops = directions_from(j.value("flops", json::object()));
      const json bytes = j.value("bytes", json::object());
      r.bytes_forward = bytes.value("forward", int64_t{0});
      r.bytes_backward = bytes.value("backward", int64_t{0});
      const json mem = j.value("memory", json::object());
      r.predicted = memory_figures_from(mem.value("predicted", json::object()), mem.value("predicted_peak_bytes", int64_t{0}));
      if (mem.contains("peak_bytes") || mem.contains("measured"))
        r.measured = memory_figures_from(mem.value("measured", json::object()), mem.value("peak_bytes", int64_t{0}));
      r.device = j.value("device", std::string());
      r.status = j.value("status", std::string("ok"));
      r.message = j.value("message", std::string());
      const json t = j.value("time_ms", json::object());
      if (t.contains("forward")) r.forward = time_stats_from(t["forward"]);
      if (t.contains("backward")) r.backward = time_stats_from(t["backward"]);
      if (t.contains("step")) r.step = time_stats_from(t["step"]);
      set.rows.push_back(std::move(r));
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
