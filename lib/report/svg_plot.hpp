// Small self-contained SVG charts: a log-log scatter (optionally under a roofline, with IQR error
// bars, points joined into series) and a stacked bar chart. Pure functions of their data; no
// scripts, no external references. Each SVG carries its namespace (xmlns) and its own <style>,
// so the same text works inlined in the HTML report and as a standalone figure file (Chromium,
// rsvg-convert, a paper's \includegraphics after conversion): nothing depends on the page.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace convbench {

struct PlotPoint {
  std::string label;  // drawn next to the point when there is room, and in the legend
  double x = 0, y = 0;
  double y_lo = 0, y_hi = 0;  // an error bar (the samples' quartiles) when 0 < y_lo <= y <= y_hi
  std::string series;         // points of one series share a colour and are joined, in x order
  // Why its y cannot be trusted ("disturbed", "noisy": results/trust.hpp), empty when it can: such a
  // point is drawn hollow, its tooltip says why, and the legend says what hollow means.
  std::string distrust;
};

// The roofline's roof: y = min(peak, bandwidth * x).
struct Roof {
  double peak = 0, bandwidth = 0;
  std::string peak_label, bandwidth_label;  // "67 TFLOP/s", "3.35 TB/s"
};

struct LogLogPlot {
  std::string id, css_class, title, x_label, y_label;
  std::vector<PlotPoint> points;  // points with x <= 0 or y <= 0 cannot be drawn and are skipped
  std::optional<Roof> roof;
};

struct StackedBar {
  std::string label;
  std::vector<double> values;  // one per category, stacked bottom to top
};

struct StackedBarPlot {
  std::string id, css_class, title, y_label, value_unit;  // value_unit: shown in tooltips ("MiB")
  std::vector<std::string> categories;
  std::vector<StackedBar> bars;
};

std::string render_loglog_svg(const LogLogPlot& plot);
std::string render_stacked_bars_svg(const StackedBarPlot& plot);

// Tick label of a log axis: 0.01, 0.5, 20 in plain digits; 1 k, 10 M, 1 G with SI prefixes from
// 1000 up; 1e-4 below 0.001.
std::string log_tick_label(double value);

}  // namespace convbench
