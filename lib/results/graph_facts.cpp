#include "results/graph_facts.hpp"

#include "util/text_table.hpp"

namespace convbench {

GraphFacts graph_facts(const ResultRow& row) {
  return GraphFacts{.graph_hash = row.graph_hash,
                    .structure = row.structure,
                    .params = row.params,
                    .macs_forward = row.macs.forward,
                    .macs_backward = row.macs.backward(),
                    .saved_bytes = row.predicted.saved_bytes,
                    .predicted_peak_bytes = row.predicted.peak_bytes};
}

nlohmann::json to_json(const GraphFacts& f) {
  return nlohmann::json{{"graph_hash", f.graph_hash},
                        {"structure", f.structure},
                        {"params", f.params},
                        {"macs_forward", f.macs_forward},
                        {"macs_backward", f.macs_backward},
                        {"saved_bytes", f.saved_bytes},
                        {"predicted_peak_bytes", f.predicted_peak_bytes}};
}

std::optional<GraphFacts> graph_facts_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto text = [&](const char* k) { return j.contains(k) && j[k].is_string(); };
  auto integer = [&](const char* k) { return j.contains(k) && j[k].is_number_integer(); };
  if (!text("graph_hash") || !text("structure")) return std::nullopt;
  for (const char* k : {"params", "macs_forward", "macs_backward", "saved_bytes", "predicted_peak_bytes"})
    if (!integer(k)) return std::nullopt;
  return GraphFacts{.graph_hash = j["graph_hash"],
                    .structure = j["structure"],
                    .params = j["params"],
                    .macs_forward = j["macs_forward"],
                    .macs_backward = j["macs_backward"],
                    .saved_bytes = j["saved_bytes"],
                    .predicted_peak_bytes = j["predicted_peak_bytes"]};
}

namespace {

std::string relative_change(int64_t before, int64_t after) {
  if (before == 0) return "";
  const double change = static_cast<double>(after) / static_cast<double>(before) - 1.0;
  return std::string(" (") + (change >= 0 ? "+" : "") + format_fixed(change * 100.0, 1) + "%)";
}

}  // namespace

std::string graph_change_text(const GraphFacts& a, const GraphFacts& b) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (a.structure != b.structure && !a.structure.empty() && !b.structure.empty())
    add("structure: " + a.structure + " -> " + b.structure);
  auto count = [&](const char* what, int64_t x, int64_t y) {
    if (x != y) add(std::string(what) + " " + format_count(x) + " -> " + format_count(y) + relative_change(x, y));
  };
  auto bytes = [&](const char* what, int64_t x, int64_t y) {
    if (x != y) add(std::string(what) + " " + format_bytes(x) + " -> " + format_bytes(y) + relative_change(x, y));
  };
  count("params", a.params, b.params);
  count("forward MACs", a.macs_forward, b.macs_forward);
  count("backward MACs", a.macs_backward, b.macs_backward);
  bytes("saved for backward", a.saved_bytes, b.saved_bytes);
  bytes("predicted peak", a.predicted_peak_bytes, b.predicted_peak_bytes);
  return out;
}

}  // namespace convbench
