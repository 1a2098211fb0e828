#include "history/history_export.hpp"

#include <nlohmann/json.hpp>

#include "history/history_tables.hpp"
#include "util/input_error.hpp"
#include "util/json_text.hpp"
#include "util/markup_escape.hpp"

namespace convbench {

std::string export_history(HistoryReader& history, const std::string& format, const std::string& filter) {
  if (format != "csv" && format != "json")
    throw InputError({"command line", 0, 0}, "--format", "expected csv or json, got " + printable(format));
  using nlohmann::ordered_json;
  ordered_json records = ordered_json::array();
  const std::vector<std::string> columns = {"series_id",  "block",   "variant",    "point",        "dtype",
                                            "layout",     "mode",    "backend",    "device_model", "device_key",
                                            "graph_hash", "run_id",  "date",       "git_commit",   "host",
                                            "status",     "trust",   "phase",      "median_ms",    "q1_ms",
                                            "q3_ms",      "samples", "peak_bytes", "peak_source",  "raw_ms"};
  for (const StoredSeries& s : select_series(history, filter))
    for (const StoredMeasurement& m : history.measurements(s.id)) {
      ordered_json r;
      r["series_id"] = s.id;
      r["block"] = s.key.block;
      r["variant"] = s.key.variant;
      r["point"] = s.key.point;
      r["dtype"] = s.key.dtype;
      r["layout"] = s.key.layout;
      r["mode"] = s.key.mode;
      r["backend"] = s.key.backend;
      r["device_model"] = s.key.device_model;
      r["device_key"] = json_text(s.key.device_key);
      r["graph_hash"] = s.key.graph_hash;
      r["run_id"] = m.run_id;
      r["date"] = m.date;
      r["git_commit"] = m.git_commit;
      r["host"] = m.host;
      r["status"] = m.status;
      r["trust"] = m.trust;
      r["phase"] = m.phase;
      r["median_ms"] = m.median ? ordered_json(*m.median) : ordered_json(nullptr);
      r["q1_ms"] = m.q1 ? ordered_json(*m.q1) : ordered_json(nullptr);
      r["q3_ms"] = m.q3 ? ordered_json(*m.q3) : ordered_json(nullptr);
      r["samples"] = m.raw_ms.size();
      r["peak_bytes"] = m.peak_bytes;
      r["peak_source"] = m.peak_source;
      r["raw_ms"] = m.raw_ms;
      records.push_back(std::move(r));
    }
  if (format == "json") return json_text(records, 1) + "\n";
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
  out += "\n";
  for (const ordered_json& r : records) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const ordered_json& v = r[columns[i]];
      // Numbers as JSON writes them (shortest round-trip); empty for a missing time.
      const std::string cell = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
      out += (i ? "," : "") + csv_escape(cell);
    }
    out += "\n";
  }
  return out;
}

}  // namespace convbench
