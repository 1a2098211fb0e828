#include "report/html_report.hpp"

#include <algorithm>
#include <numeric>

#include "report/markup_escape.hpp"
#include "report/summary_tables.hpp"
#include "report/svg_plot.hpp"
#include "report/text_table.hpp"
#include "results/device_limits.hpp"

namespace convbench {
namespace {

const char* kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.1em}
table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em}
th,td{border-bottom:1px solid #ddd;padding:0.25em 0.6em;text-align:left;white-space:nowrap}
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.better{color:#0a7a2f;font-weight:600}td.worse{color:#b00020;font-weight:600}
table.meta td:first-child{color:#555}
figure{margin:1em 0}figcaption{font-size:0.9em;color:#444;max-width:680px}
svg.plot{border:1px solid #ddd;background:#fff;font-size:12px}
svg .gridline{stroke:#e6e6e6;stroke-width:1}svg .axis{stroke:#333;stroke-width:1.2}
svg .tick-label,svg .legend-label,svg .bar-total{fill:#333;font-size:11px}
svg .axis-label{fill:#111;font-size:13px}svg .plot-title{fill:#111;font-size:14px;font-weight:600}
svg .point{stroke:#fff;stroke-width:1.5}svg .point-label{fill:#111;font-size:12px}
svg .roof-line{fill:none;stroke:#b00020;stroke-width:2}svg .roof-label{fill:#b00020;font-size:12px}
p.no-plot{border:1px dashed #bbb;padding:1em;color:#555;max-width:640px}
p.mismatch{color:#b00020;font-weight:700}p.agree{color:#0a7a2f}
.notes{font-size:0.9em;color:#444})";

bool timed(const ResultRow& r) {
  const auto& t = headline_time(r);
  return r.status == RunStatus::ok && t && t->median > 0;
}

std::string phase_words(bool train) { return train ? "training step (forward + backward)" : "forward pass"; }

std::string time_vs_flops(const std::vector<const ResultRow*>& group, size_t index) {
  const ResultRow& base = baseline_of(group);
  const bool train = is_training(base);
  const std::string id = "time-vs-flops-" + std::to_string(index);
  LogLogPlot plot{id,
                  "plot time-vs-flops",
                  "Time vs FLOPs",
                  "FLOPs per " + phase_words(train) + " (log)",
                  std::string("median ") + (train ? "step" : "forward") + " time, ms (log)",
                  {},
                  std::nullopt};
  for (const ResultRow* r : group)
    if (timed(*r))
      plot.points.push_back({r->variant, static_cast<double>(headline_flops(*r)), headline_time(*r)->median});
  if (plot.points.empty())
    return "<p class=\"no-plot time-vs-flops\" id=\"" + id +
           "\">Time vs FLOPs: no timing in these results (analysis only, or no variant ran). Run <code>convbench "
           "compare</code> to draw it.</p>\n";
  std::string caption = "Each point is a variant; lower is faster, left has fewer FLOPs.";
  if (timed(base)) {
    std::string paradox;
    for (const ResultRow* r : group) {
      if (r == &base || !timed(*r) || headline_flops(*r) >= headline_flops(base)) continue;
      const double t = headline_time(*r)->median / headline_time(base)->median;
      if (t <= 1.0) continue;
      paradox += (paradox.empty() ? "" : "; ") + r->variant + ": " +
                 format_ratio(static_cast<double>(headline_flops(*r)) / static_cast<double>(headline_flops(base))) +
                 " the FLOPs, " + format_ratio(t) + " the time";
    }
    caption += paradox.empty() ? " No variant with fewer FLOPs than the baseline (" + base.variant + ") is slower."
                               : " Fewer FLOPs but slower than the baseline (" + base.variant + "): " + paradox + ".";
  }
  return "<figure>\n" + render_loglog_svg(plot) + "<figcaption>" + html_escape(caption) + "</figcaption>\n</figure>\n";
}

bool has_measured_breakdown(const ResultRow& r) {
  if (r.status != RunStatus::ok || !r.measured) return false;
  // Any category above zero (a sum could overflow on a malformed file; the figures are >= 0).
  return std::any_of(r.measured->at_peak.begin(), r.measured->at_peak.end(), [](int64_t b) { return b > 0; });
}

std::string memory_breakdown(const std::vector<const ResultRow*>& group, size_t index) {
  StackedBarPlot plot{"memory-breakdown-" + std::to_string(index),
                      "plot memory-breakdown",
                      "Memory at the peak, by category",
                      "MiB at the peak",
                      "MiB",
                      {},
                      {}};
  for (int c = 0; c < kMemoryCategoryCount; ++c)
    plot.categories.emplace_back(to_string(static_cast<MemoryCategory>(c)));
  int measured = 0;
  for (const ResultRow* r : group) {
    const bool meas = has_measured_breakdown(*r);
    measured += meas;
    const CategoryBytes& bytes = meas ? r->measured->at_peak : r->predicted.at_peak;
    StackedBar bar{r->variant + (meas ? " (meas.)" : " (pred.)"), {}};
    for (int64_t b : bytes) bar.values.push_back(static_cast<double>(b) / (1024.0 * 1024.0));
    plot.bars.push_back(std::move(bar));
  }
  const bool train = is_training(baseline_of(group));
  std::string caption =
      "What is live at the moment of the peak of one " + std::string(train ? "training step" : "inference pass") + ": ";
  if (measured == static_cast<int>(group.size()))
    caption += "measured by the runtime's allocator (meas.).";
  else if (measured == 0)
    caption += "predicted by convbench's memory model (pred.); these results have no measured breakdown.";
  else
    caption += "measured by the allocator where the variant ran (meas.), else predicted by the memory model (pred.).";
  return "<figure>\n" + render_stacked_bars_svg(plot) + "<figcaption>" + html_escape(caption) +
         "</figcaption>\n</figure>\n";
}

std::string duration(double seconds) {
  if (seconds >= 1e-3) return format_significant(seconds * 1e3, 3) + " ms";
  return format_significant(seconds * 1e6, 3) + " µs";
}

std::string rate_label(double value, const char* unit) { return format_significant(value / 1e12, 3) + " " + unit; }

std::string roofline(const ResultSet& results, const std::vector<const ResultRow*>& group, size_t index) {
  const ResultRow& base = baseline_of(group);
  const std::string id = "roofline-" + std::to_string(index);
  const auto limits = device_limits(results.provenance, base.dtype);
  LogLogPlot plot{id, "plot roofline", "Roofline", "arithmetic intensity, FLOP per byte (log)", "achieved FLOP/s (log)",
                  {}, std::nullopt};
  std::string floors;
  for (const ResultRow* r : group) {
    if (!timed(*r) || headline_bytes(*r) <= 0) continue;
    const double flops = static_cast<double>(headline_flops(*r)), bytes = static_cast<double>(headline_bytes(*r));
    const double seconds = headline_time(*r)->median * 1e-3;
    plot.points.push_back({r->variant, flops / bytes, flops / seconds});
    if (limits) {
      const double floor_s = std::max(flops / limits->peak_flops, bytes / limits->bandwidth_bytes_per_s);
      floors += (floors.empty() ? "" : "; ") + r->variant + ": floor " + duration(floor_s) + ", measured " +
                duration(seconds) + " (" + format_significant(floor_s / seconds * 100.0, 3) + "% of the roof)";
    }
  }
  if (plot.points.empty())
    return "<p class=\"no-plot roofline\" id=\"" + id +
           "\">Roofline: no timing in these results (analysis only, or no variant ran). Run <code>convbench "
           "compare</code> to draw it.</p>\n";
  std::string caption = "Achieved FLOP/s of the " + phase_words(is_training(base)) +
                        ", its FLOPs over its median time, against its arithmetic intensity, its FLOPs over the "
                        "minimum bytes its ops move. ";
  if (limits) {
    plot.roof = Roof{limits->peak_flops, limits->bandwidth_bytes_per_s, rate_label(limits->peak_flops, "TFLOP/s"),
                     format_significant(limits->bandwidth_bytes_per_s / 1e12, 3) + " TB/s"};
    caption += "Roof: " + limits->source + ". Floor = max(FLOPs / peak, bytes / bandwidth): " + floors + ".";
  } else {
    caption +=
        "Device limits unknown: no roof is drawn (record \"device_limits\" in the provenance, or run on a "
        "known GPU).";
  }
  return "<figure>\n" + render_loglog_svg(plot) + "<figcaption>" + html_escape(caption) + "</figcaption>\n</figure>\n";
}

std::string meta_table(const ResultSet& results) {
  TextTable t;
  t.header = {"", ""};
  t.right_aligned = {false, false};
  t.rows.push_back({"engine", results.engine});
  if (!results.device.empty()) t.rows.push_back({"device", results.device});
  const std::string gpu = recorded_gpu_name(results.provenance);
  if (!gpu.empty()) t.rows.push_back({"GPU", gpu});
  for (const char* key : {"date", "git_commit", "spec_file", "spec", "spec_sha256", "cpu", "hardware_threads",
                          "backend", "onednn_version", "cuda_version", "cudnn_version", "torch", "command_line"}) {
    if (!results.provenance.contains(key)) continue;
    const auto& v = results.provenance[key];
    t.rows.push_back({key, v.is_string() ? v.get<std::string>() : v.dump()});
  }
  std::string html = t.render_html();
  return "<table class=\"meta\">" + html.substr(html.find("<tbody>"));  // no header row for key/value pairs
}

}  // namespace

std::string format_html(const ResultSet& results, const PeerComparison* against) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>convbench report: " +
                    html_escape(results.engine) + "</title>\n<style>\n" + kStyle + "\n</style>\n</head>\n<body>\n" +
                    "<h1>convbench report</h1>\n" + meta_table(results);
  const auto tables = block_tables(results);
  const auto groups = group_by_block(results);
  for (size_t i = 0; i < groups.size(); ++i) {
    out += "<section class=\"block\" id=\"block-" + std::to_string(i) + "\">\n<h2>" + html_escape(tables[i].title) +
           "</h2>\n" + tables[i].table.render_html();
    out += time_vs_flops(groups[i], i) + memory_breakdown(groups[i], i) + roofline(results, groups[i], i);
    out += "</section>\n";
  }
  if (against) out += peer_comparison_html(*against);
  return out + "<footer class=\"notes\">\n<p>" + html_escape_lines(tables_footnote(results)) +
         "</p>\n</footer>\n</body>\n</html>\n";
}

}  // namespace convbench
