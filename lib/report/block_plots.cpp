#include "report/block_plots.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "report/svg_plot.hpp"
#include "results/device_limits.hpp"
#include "results/runtime_names.hpp"
#include "results/trust.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

// Why a row's times cannot be trusted ("disturbed", "noisy"), empty when they can: its points are
// drawn hollow.
std::string distrust(const ResultRow& r) {
  const Trust t = assess_trust(r).level;
  return t == Trust::ok ? "" : to_string(t);
}

bool timed(const ResultRow& r) {
  const auto& t = headline_time(r);
  return r.status == RunStatus::ok && t && t->median > 0;
}

std::string phase_words(bool train) { return train ? "training step (forward + backward)" : "forward pass"; }

BlockPlot time_vs_flops(const ResultSet& results, const std::vector<const ResultRow*>& group, size_t index) {
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
    if (timed(*r)) {
      const TimeStats& t = *headline_time(*r);
      plot.points.push_back(
          {r->variant, static_cast<double>(headline_flops(*r)), t.median, t.q1, t.q3, "", distrust(*r)});
    }
  if (plot.points.empty())
    return {"time-vs-flops", id, "",
            "Time vs FLOPs: no timing in these results (analysis only, or no variant ran). Run convbench compare to "
            "draw it."};
  std::string caption =
      "Each point is a variant; lower is faster, left has fewer FLOPs; bars span the samples' quartiles.";
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
    // A speed is a runtime's: the same variant can be faster on one runtime and slower on another.
    const std::string on = " on " + runtime_phrase(results.engine, base.device);
    caption += paradox.empty()
                   ? " No variant with fewer FLOPs than the baseline (" + base.variant + ") is slower" + on + "."
                   : " Fewer FLOPs but slower than the baseline (" + base.variant + ")" + on + ": " + paradox + ".";
  }
  return {"time-vs-flops", id, render_loglog_svg(plot), caption};
}

bool has_measured_breakdown(const ResultRow& r) {
  if (r.status != RunStatus::ok || !r.measured) return false;
  // Any category above zero (a sum could overflow on a malformed file; the figures are >= 0).
  return std::any_of(r.measured->at_peak.begin(), r.measured->at_peak.end(), [](int64_t b) { return b > 0; });
}

BlockPlot memory_breakdown(const std::vector<const ResultRow*>& group, size_t index) {
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
  return {"memory-breakdown", plot.id, render_stacked_bars_svg(plot), caption};
}

std::string duration(double seconds) {
  if (seconds >= 1e-3) return format_significant(seconds * 1e3, 3) + " ms";
  return format_significant(seconds * 1e6, 3) + " µs";
}

std::string rate_label(double value, const char* unit) { return format_significant(value / 1e12, 3) + " " + unit; }

BlockPlot roofline(const ResultSet& results, const std::vector<const ResultRow*>& group, size_t index) {
  const ResultRow& base = baseline_of(group);
  const std::string id = "roofline-" + std::to_string(index);
  const auto limits = device_limits(results.provenance, compute_dtype(base));
  LogLogPlot plot{id, "plot roofline", "Roofline", "arithmetic intensity, FLOP per byte (log)", "achieved FLOP/s (log)",
                  {}, std::nullopt};
  std::string floors;
  for (const ResultRow* r : group) {
    if (!timed(*r) || headline_bytes(*r) <= 0) continue;
    const double flops = static_cast<double>(headline_flops(*r)), bytes = static_cast<double>(headline_bytes(*r));
    const double seconds = headline_time(*r)->median * 1e-3;
    const TimeStats& t = *headline_time(*r);  // FLOP/s over the quartiles of the time
    plot.points.push_back({r->variant, flops / bytes, flops / seconds, t.q3 > 0 ? flops / (t.q3 * 1e-3) : 0,
                           t.q1 > 0 ? flops / (t.q1 * 1e-3) : 0, "", distrust(*r)});
    if (limits) {
      const double floor_s = std::max(flops / limits->peak_flops, bytes / limits->bandwidth_bytes_per_s);
      // On another GPU's datasheet the floor is that GPU's, a lower bound there: the time measured
      // here is no fraction of it.
      floors += (floors.empty() ? "" : "; ") + r->variant + ": floor " + duration(floor_s) +
                (limits->other_device ? ""
                                      : ", measured " + duration(seconds) + " (" +
                                            format_significant(floor_s / seconds * 100.0, 3) + "% of the roof)");
    }
  }
  if (plot.points.empty())
    return {"roofline", id, "",
            "Roofline: no timing in these results (analysis only, or no variant ran). Run convbench compare to draw "
            "it."};
  std::string caption = "Achieved FLOP/s of the " + phase_words(is_training(base)) +
                        ", its FLOPs over its median time, against its arithmetic intensity, its FLOPs over the "
                        "minimum bytes its ops move. ";
  if (limits) {
    plot.roof = Roof{limits->peak_flops, limits->bandwidth_bytes_per_s, rate_label(limits->peak_flops, "TFLOP/s"),
                     format_significant(limits->bandwidth_bytes_per_s / 1e12, 3) + " TB/s"};
    if (limits->other_device)
      caption +=
          "Roof: " + limits->datasheet + ", from its " + limits->source +
          ", a GPU these rows did not run on. Floor on " + limits->datasheet +
          " from its datasheet = max(FLOPs / peak, bytes / bandwidth), a lower bound, not a prediction: " + floors +
          ".";
    else
      caption += "Roof: " + limits->source + ". Floor = max(FLOPs / peak, bytes / bandwidth): " + floors + ".";
    if (!limits->doubt.empty()) caption += " These limits were " + limits->doubt + ".";
  } else {
    caption +=
        "Device limits unknown: no roof is drawn (give --peak-flops and --bandwidth or --limits NAME, or run on a "
        "known GPU).";
  }
  return {"roofline", id, render_loglog_svg(plot), caption};
}

// The numeric value of a swept field at a row's point; nullopt when it is not a number.
std::optional<double> swept_value(const ResultRow& r, const std::string& field) {
  for (const auto& [f, v] : r.point)
    if (f == field) {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && *end == '\0' && std::isfinite(x) && x > 0) return x;
    }
  return std::nullopt;
}

// The line a row's point belongs to in a plot against `x_field`: its variant, and its value of
// every other swept field (a layout, a dtype, another size), so that the points of one variant in
// two layouts are two labelled lines, not one line zigzagging between them.
std::string series_of(const ResultRow& r, const std::string& x_field) {
  std::string series = r.variant;
  for (const auto& [f, v] : r.point) {
    if (f == x_field) continue;
    const bool text = v.size() >= 2 && v.front() == '"' && v.back() == '"';
    series += " " + (text ? v.substr(1, v.size() - 2) : f + "=" + v);
  }
  return series;
}

}  // namespace

std::vector<BlockPlot> point_plots(const ResultSet& results, const std::vector<const ResultRow*>& group, size_t index) {
  return {time_vs_flops(results, group, index), memory_breakdown(group, index), roofline(results, group, index)};
}

std::vector<std::vector<const ResultRow*>> rows_of_each_block(const ResultSet& results) {
  std::vector<std::vector<const ResultRow*>> blocks;
  std::map<std::string, size_t> at;
  for (const ResultRow& r : results.rows) {
    auto [it, added] = at.emplace(r.block, blocks.size());
    if (added) blocks.emplace_back();
    blocks[it->second].push_back(&r);
  }
  return blocks;
}

std::vector<BlockPlot> sweep_plots(const std::vector<const ResultRow*>& block_rows, size_t index) {
  std::vector<std::string> fields;
  for (const ResultRow* r : block_rows)
    for (const auto& [f, v] : r->point)
      if (std::find(fields.begin(), fields.end(), f) == fields.end() && swept_value(*r, f)) fields.push_back(f);
  std::vector<BlockPlot> plots;
  const bool train = !block_rows.empty() && is_training(*block_rows.front());
  for (const std::string& field : fields) {
    LogLogPlot time{"time-vs-" + field + "-" + std::to_string(index),
                    "plot time-vs-sweep",
                    "Time against " + field,
                    field + " (log)",
                    std::string("median ") + (train ? "step" : "forward") + " time, ms (log)",
                    {},
                    std::nullopt};
    LogLogPlot rate{"throughput-vs-" + field + "-" + std::to_string(index),
                    "plot throughput-vs-sweep",
                    "Throughput against " + field,
                    field + " (log)",
                    "samples per second (log)",
                    {},
                    std::nullopt};
    for (const ResultRow* r : block_rows) {
      const std::optional<double> x = swept_value(*r, field);
      if (!x || !timed(*r)) continue;
      const TimeStats& t = *headline_time(*r);
      const double batch = r->input_shape.empty() ? 0 : static_cast<double>(r->input_shape.front());
      const std::string series = series_of(*r, field);
      time.points.push_back({r->variant + " " + r->point_label, *x, t.median, t.q1, t.q3, series, distrust(*r)});
      if (batch > 0)
        rate.points.push_back({r->variant + " " + r->point_label, *x, batch / (t.median * 1e-3),
                               t.q3 > 0 ? batch / (t.q3 * 1e-3) : 0, t.q1 > 0 ? batch / (t.q1 * 1e-3) : 0, series,
                               distrust(*r)});
    }
    if (time.points.size() < 2) continue;
    const std::string block = block_rows.front()->block;
    plots.push_back({"time-vs-" + field, time.id, render_loglog_svg(time),
                     block + ": median " + (train ? "step" : "forward") + " time of each variant against " + field +
                         "; bars span the samples' quartiles."});
    plots.push_back(
        {"throughput-vs-" + field, rate.id, render_loglog_svg(rate),
         block + ": samples per second (the batch over the median time) of each variant against " + field + "."});
  }
  return plots;
}

}  // namespace convbench
