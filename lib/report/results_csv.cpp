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

// median, q1 and q3 of one phase, in milliseconds: three columns.
std::vector<CsvColumn> time_columns(const std::string& phase, std::optional<TimeStats> ResultRow::*member) {
  const auto stat = [member](double TimeStats::*field) {
    return [member, field](const CsvRow& c) {
      const auto& t = c.r.*member;
      return t ? format_fixed((*t).*field, 6) : std::string();
    };
  };
  return {{.name = phase + "_median_ms", .value = stat(&TimeStats::median)},
          {.name = phase + "_q1_ms", .value = stat(&TimeStats::q1)},
          {.name = phase + "_q3_ms", .value = stat(&TimeStats::q3)}};
}

std::vector<CsvColumn> concatenated(std::initializer_list<std::vector<CsvColumn>> runs) {
  std::vector<CsvColumn> all;
  for (const std::vector<CsvColumn>& run : runs) all.insert(all.end(), run.begin(), run.end());
  return all;
}

std::vector<CsvColumn> make_csv_columns() {
  using C = const CsvRow&;
  const auto text = [](std::string ResultRow::*m) { return [m](C c) { return csv_escape(c.r.*m); }; };
  // A row that has no counts (status unreadable) leaves them empty, not 0.
  const auto integer = [](auto get) {
    return [get](C c) { return counted(c.r.status) ? std::to_string(get(c.r)) : std::string(); };
  };
  // Every column, in the header's order: one list, in runs (a phase's times are three columns).
  return concatenated({
      {
          {.name = "block", .value = text(&ResultRow::block)},
          {.name = "variant", .value = text(&ResultRow::variant)},
          {.name = "kind", .value = text(&ResultRow::kind)},
          {.name = "point", .value = text(&ResultRow::point_label)},
          {.name = "baseline", .value = [](C c) { return std::string(c.r.is_baseline ? "true" : "false"); }},
          {.name = "dims", .value = [](C c) { return std::to_string(c.r.dims); }},
          {.name = "dtype", .value = text(&ResultRow::dtype)},
          {.name = "layout", .value = text(&ResultRow::layout)},
          {.name = "mode", .value = text(&ResultRow::mode)},
          {.name = "input_shape", .value = [](C c) { return shape_text(c.r.input_shape); }},
          {.name = "output_shape", .value = [](C c) { return shape_text(c.r.output_shape); }},
          {.name = "params", .value = integer([](const ResultRow& r) { return r.params; })},
          {.name = "buffers", .value = integer([](const ResultRow& r) { return r.buffers; })},
          {.name = "macs_forward", .value = integer([](const ResultRow& r) { return r.macs.forward; })},
          {.name = "macs_backward_data", .value = integer([](const ResultRow& r) { return r.macs.backward_data; })},
          {.name = "macs_backward_weight", .value = integer([](const ResultRow& r) { return r.macs.backward_weight; })},
          {.name = "flops_forward", .value = integer([](const ResultRow& r) { return r.flops.forward; })},
          {.name = "flops_backward_data", .value = integer([](const ResultRow& r) { return r.flops.backward_data; })},
          {.name = "flops_backward_weight",
           .value = integer([](const ResultRow& r) { return r.flops.backward_weight; })},
          {.name = "bytes_forward", .value = integer([](const ResultRow& r) { return r.bytes_forward; })},
          {.name = "bytes_backward", .value = integer([](const ResultRow& r) { return r.bytes_backward; })},
          {.name = "predicted_peak_bytes", .value = integer([](const ResultRow& r) { return r.predicted.peak_bytes; })},
          {.name = "predicted_saved_bytes",
           .value = integer([](const ResultRow& r) { return r.predicted.saved_bytes; })},
          {.name = "device", .value = text(&ResultRow::device)},
          {.name = "status",
           .value =
               [](C c) {
                 return c.r.device.empty() && counted(c.r.status) ? std::string() : csv_escape(to_string(c.r.status));
               }},
          {.name = "message", .value = text(&ResultRow::message)},
          {.name = "measured_peak_bytes",
           .value =
               [](C c) {
                 return c.r.measured && c.r.measured->peak_bytes >= 0 ? std::to_string(c.r.measured->peak_bytes)
                                                                      : std::string();
               }},
      },
      time_columns("forward", &ResultRow::forward),
      time_columns("backward", &ResultRow::backward),
      time_columns("step", &ResultRow::step),
      {{.name = "step_noise",
        .value = [](C c) { return c.r.step ? format_fixed(c.r.step->noise, 6) : std::string(); }}},
      time_columns("graph", &ResultRow::graph),
      {
          {.name = "clock_domain",
           .value = [](C c) { return c.r.clock ? csv_escape(c.r.clock->domain) : std::string(); }},
          {.name = "clock_before_mhz",
           .value = [](C c) { return c.r.clock ? format_fixed(c.r.clock->before_mhz, 1) : std::string(); }},
          {.name = "clock_after_mhz",
           .value = [](C c) { return c.r.clock ? format_fixed(c.r.clock->after_mhz, 1) : std::string(); }},
          {.name = "trust", .value = [](C c) { return c.r.device.empty() ? std::string() : to_string(c.trust.level); }},
          {.name = "trust_evidence", .value = [](C c) { return csv_escape(join(c.trust.evidence, "; ")); }},
          {.name = "cpu_pressure_share",
           .value =
               [](C c) {
                 const auto& a = c.r.activity;
                 return a && a->cpu_pressure_share ? format_fixed(*a->cpu_pressure_share, 4) : std::string();
               }},
          {.name = "steal_share",
           .value =
               [](C c) {
                 const auto& a = c.r.activity;
                 return a && a->steal_share ? format_fixed(*a->steal_share, 4) : std::string();
               }},
          {.name = "threads",
           .value = [](C c) { return c.r.activity ? std::to_string(c.r.activity->threads) : std::string(); }},
          // The block's fields as numbers: 2-D blocks leave the depth columns empty.
          {.name = "batch",
           .value =
               [](C c) { return c.r.input_shape.empty() ? std::string() : std::to_string(c.r.input_shape.front()); }},
          {.name = "in_channels",
           .value =
               [](C c) {
                 return c.r.input_shape.empty() ? std::string() : std::to_string(channels_of(c.r, c.r.input_shape));
               }},
          {.name = "out_channels",
           .value =
               [](C c) {
                 return c.r.output_shape.empty() ? std::string() : std::to_string(channels_of(c.r, c.r.output_shape));
               }},
          {.name = "in_depth", .value = [](C c) { return dim_from_end(spatial_of(c.r, c.r.input_shape), 3); }},
          {.name = "in_height", .value = [](C c) { return dim_from_end(spatial_of(c.r, c.r.input_shape), 2); }},
          {.name = "in_width", .value = [](C c) { return dim_from_end(spatial_of(c.r, c.r.input_shape), 1); }},
          {.name = "kernel_depth", .value = [](C c) { return dim_from_end(c.r.kernel, 3); }},
          {.name = "kernel_height", .value = [](C c) { return dim_from_end(c.r.kernel, 2); }},
          {.name = "kernel_width", .value = [](C c) { return dim_from_end(c.r.kernel, 1); }},
          {.name = "samples_per_s",
           .value =
               [](C c) {
                 const std::optional<double> sps = samples_per_second(c.r);
                 return sps && c.r.status == RunStatus::ok ? format_significant(*sps, 6) : std::string();
               }},
          {.name = "layout_conversion", .value = text(&ResultRow::layout_conversion)},
          {.name = "memory_policy", .value = text(&ResultRow::memory_policy)},
          {.name = "flops_recompute", .value = integer([](const ResultRow& r) { return r.flops.recompute; })},
          {.name = "buffer_counters", .value = integer([](const ResultRow& r) { return r.buffer_counters; })},
      },
  });
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
