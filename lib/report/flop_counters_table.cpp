#include "report/flop_counters_table.hpp"

#include <string>

namespace convbench {
namespace {

// The order the counters are listed in, FlopCounterMode first (PyTorch's own).
constexpr const char* kCounters[] = {
    "flop_counter_forward", "flop_counter_backward", "fvcore", "ptflops", "thop", "torchinfo"};

std::string row_label(const PeerRow& r) {
  return r.ours->block + "/" + r.ours->variant + (r.ours->point_label.empty() ? "" : " [" + r.ours->point_label + "]");
}

std::string counter_number(const nlohmann::json& v) {
  return v.is_number_integer() ? format_count(v.get<int64_t>()) : "-";
}

}  // namespace

std::optional<TextTable> flop_counters_table(const PeerComparison& c) {
  TextTable t;
  t.header = {"row", "counter", "number", "/ our MACs fwd", "its rule predicts", "rule", "why it differs"};
  t.right_aligned = {false, false, true, true, true, false, false};
  for (const PeerRow& r : c.rows) {
    const nlohmann::json& section = r.peer->counters;
    if (!section.is_object() || !section.contains("values") || !section["values"].is_object()) continue;
    const nlohmann::json& values = section["values"];
    const nlohmann::json predicted = section.value("predicted", nlohmann::json::object());
    const nlohmann::json rules = section.value("rules", nlohmann::json::object());
    const int64_t ours = r.ours->macs.forward;
    for (const char* name : kCounters) {
      if (!values.contains(name)) continue;
      const nlohmann::json& v = values[name];
      const nlohmann::json p = predicted.is_object() ? predicted.value(name, nlohmann::json()) : nlohmann::json();
      std::string verdict = "-";
      if (v.is_number_integer() && p.is_number_integer()) verdict = v == p ? "holds" : "BROKEN";
      const std::string ratio = v.is_number() && ours > 0
                                    ? format_fixed(v.get<double>() / static_cast<double>(ours), 4) + "x"
                                    : std::string("-");
      t.rows.push_back({row_label(r), name, counter_number(v), ratio, counter_number(p), verdict,
                        rules.is_object() && rules.contains(name) && rules[name].is_string()
                            ? rules[name].get<std::string>()
                            : std::string("")});
    }
    if (section.contains("errors") && section["errors"].is_object())
      for (const auto& [name, err] : section["errors"].items())
        t.rows.push_back({row_label(r), name, "error", "-", "-", "-", err.is_string() ? err.get<std::string>() : ""});
  }
  if (t.rows.empty()) return std::nullopt;
  return t;
}

}  // namespace convbench
