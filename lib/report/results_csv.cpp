#include "report/results_csv.hpp"

#include <algorithm>
#include <functional>

#include "results/trust.hpp"
#include "spec/spec_field.hpp"
#include "util/join.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

// What a cell sees: the row and its trust (assessed once per row).
struct CsvRow {
  const ResultRow& r;
  const TrustAssessment& trust;
};

// A column: its name beside how its value is written, so that the two cannot drift apart.
struct CsvColumn {
  std::string name;
  std::function<std::string(const CsvRow&)> value;
};

// The k-th dim from the end ("" for a 2-D block's depth).
std::string dim_from_end(const std::vector<int64_t>& v, size_t k) {
  return v.size() >= k ? std::to_string(v[v.size() - k]) : std::string();
}

// median, q1 and q3 of one phase, in milliseconds.
void add_time_columns(std::vector<CsvColumn>& cols, const std::string& phase,
                      std::optional<TimeStats> ResultRow::*member) {
  const auto stat = [member](double TimeStats::*field) {
    return [member, field](const CsvRow& c) {
      const auto& t = c.r.*member;
      return t ? format_fixed((*t).*field, 6) : std::string();
    };
  };
  cols.push_back({phase + "_median_ms", stat(&TimeStats::median)});
  cols.push_back({phase + "_q1_ms", stat(&TimeStats::q1)});
  cols.push_back({phase + "_q3_ms", stat(&TimeStats::q3)});
}

std::vector<CsvColumn> make_csv_columns() {
  using C = const CsvRow&;
  const auto text = [](std::string ResultRow::*m) { return [m](C c) { return csv_escape(c.r.*m); }; };
  // A row that has no counts (status unreadable) leaves them empty, not 0.
  const auto integer = [](auto get) {
    return [get](C c) { return counted(c.r.status) ? std::to_string(get(c.r)) : std::string(); };
  };
  std::vector<CsvColumn> cols = {
      {"block", text(&ResultRow::block)},
      {"variant", text(&ResultRow::variant)},
      {"kind", text(&ResultRow::kind)},
      {"point", text(&ResultRow::point_label)},
      {"baseline", [](C c) { return std::string(c.r.is_baseline ? "true" : "false"); }},
      {"dims", [](C c) { return std::to_string(c.r.dims); }},
      {"dtype", text(&ResultRow::dtype)},
      {"layout", text(&ResultRow::layout)},
      {"mode", text(&ResultRow::mode)},
      {"input_shape", [](C c) { return shape_text(c.r.input_shape); }},
      {"output_shape", [](C c) { return shape_text(c.r.output_shape); }},
      {"params", integer([](const ResultRow& r) { return r.params; })},
      {"buffers", integer([](const ResultRow& r) { return r.buffers; })},
      {"macs_forward", integer([](const ResultRow& r) { return r.macs.forward; })},
      {"macs_backward_data", integer([](const ResultRow& r) { return r.macs.backward_data; })},
      {"macs_backward_weight", integer([](const ResultRow& r) { return r.macs.backward_weight; })},
      {"flops_forward", integer([](const ResultRow& r) { return r.flops.forward; })},
      {"flops_backward_data", integer([](const ResultRow& r) { return r.flops.backward_data; })},
      {"flops_backward_weight", integer([](const ResultRow& r) { return r.flops.backward_weight; })},
      {"bytes_forward", integer([](const ResultRow& r) { return r.bytes_forward; })},
      {"bytes_backward", integer([](const ResultRow& r) { return r.bytes_backward; })},
      {"predicted_peak_bytes", integer([](const ResultRow& r) { return r.predicted.peak_bytes; })},
      {"predicted_saved_bytes", integer([](const ResultRow& r) { return r.predicted.saved_bytes; })},
      {"device", text(&ResultRow::device)},
      {"status",
       [](C c) {
         return c.r.device.empty() && counted(c.r.status) ? std::string() : csv_escape(to_string(c.r.status));
       }},
      {"message", text(&ResultRow::message)},
      {"measured_peak_bytes",
       [](C c) {
         return c.r.measured && c.r.measured->peak_bytes >= 0 ? std::to_string(c.r.measured->peak_bytes)
                                                              : std::string();
       }},
  };
  add_time_columns(cols, "forward", &ResultRow::forward);
  add_time_columns(cols, "backward", &ResultRow::backward);
  add_time_columns(cols, "step", &ResultRow::step);
  cols.push_back({"step_noise", [](C c) { return c.r.step ? format_fixed(c.r.step->noise, 6) : std::string(); }});
  add_time_columns(cols, "graph", &ResultRow::graph);
  const std::vector<CsvColumn> rest = {
      {"clock_domain", [](C c) { return c.r.clock ? csv_escape(c.r.clock->domain) : std::string(); }},
      {"clock_before_mhz", [](C c) { return c.r.clock ? format_fixed(c.r.clock->before_mhz, 1) : std::string(); }},
      {"clock_after_mhz", [](C c) { return c.r.clock ? format_fixed(c.r.clock->after_mhz, 1) : std::string(); }},
      {"trust", [](C c) { return c.r.device.empty() ? std::string() : to_string(c.trust.level); }},
      {"trust_evidence", [](C c) { return csv_escape(join(c.trust.evidence, "; ")); }},
      {"cpu_pressure_share",
       [](C c) {
         const auto& a = c.r.activity;
         return a && a->cpu_pressure_share ? format_fixed(*a->cpu_pressure_share, 4) : std::string();
       }},
      {"steal_share",
       [](C c) {
         const auto& a = c.r.activity;
         return a && a->steal_share ? format_fixed(*a->steal_share, 4) : std::string();
       }},
      {"threads", [](C c) { return c.r.activity ? std::to_string(c.r.activity->threads) : std::string(); }},
      // The block's fields as numbers: 2-D blocks leave the depth columns empty.
      {"batch", [](C c) { return c.r.input_shape.empty() ? std::string() : std::to_string(c.r.input_shape.front()); }},
      {"in_channels",
       [](C c) { return c.r.input_shape.empty() ? std::string() : std::to_string(channels_of(c.r, c.r.input_shape)); }},
      {"out_channels",
       [](C c) {
         return c.r.output_shape.empty() ? std::string() : std::to_string(channels_of(c.r, c.r.output_shape));
       }},
      {"in_depth", [](C c) { return dim_from_end(spatial_of(c.r, c.r.input_shape), 3); }},
      {"in_height", [](C c) { return dim_from_end(spatial_of(c.r, c.r.input_shape), 2); }},
      {"in_width", [](C c) { return dim_from_end(spatial_of(c.r, c.r.input_shape), 1); }},
      {"kernel_depth", [](C c) { return dim_from_end(c.r.kernel, 3); }},
      {"kernel_height", [](C c) { return dim_from_end(c.r.kernel, 2); }},
      {"kernel_width", [](C c) { return dim_from_end(c.r.kernel, 1); }},
      {"samples_per_s",
       [](C c) {
         const std::optional<double> sps = samples_per_second(c.r);
         return sps && c.r.status == RunStatus::ok ? format_significant(*sps, 6) : std::string();
       }},
      {"layout_conversion", text(&ResultRow::layout_conversion)},
      {"memory_policy", text(&ResultRow::memory_policy)},
      {"flops_recompute", integer([](const ResultRow& r) { return r.flops.recompute; })},
      {"buffer_counters", integer([](const ResultRow& r) { return r.buffer_counters; })},
  };
  cols.insert(cols.end(), rest.begin(), rest.end());
  return cols;
}

const std::vector<CsvColumn>& csv_columns() {
  static const std::vector<CsvColumn> all = make_csv_columns();
  return all;
}

}  // namespace

std::vector<std::string> csv_column_names() {
  std::vector<std::string> names;
  for (const CsvColumn& c : csv_columns()) names.push_back(c.name);
  return names;
}

std::string format_csv(const ResultSet& results) {
  // One column per swept field, its value as a number where it is one (pandas reads it as such).
  std::vector<std::string> swept;
  for (const ResultRow& r : results.rows)
    for (const auto& [field, value] : r.point)
      if (std::find(swept.begin(), swept.end(), field) == swept.end()) swept.push_back(field);
  std::vector<std::string> header = csv_column_names();
  for (const std::string& f : swept) header.push_back("sweep_" + csv_escape(f));
  std::string out = join(header, ",") + "\n";
  for (const ResultRow& r : results.rows) {
    const TrustAssessment trust = assess_trust(r);
    const CsvRow row{r, trust};
    std::vector<std::string> cells;
    for (const CsvColumn& c : csv_columns()) cells.push_back(c.value(row));
    for (const std::string& f : swept) {
      std::string value;
      for (const auto& [field, v] : r.point)
        if (field == f) value = v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
      cells.push_back(csv_escape(value));
    }
    out += join(cells, ",") + "\n";
  }
  return out;
}

}  // namespace convbench
