// Small self-contained SVG charts for the HTML report: a log-log scatter (optionally under a
// roofline) and a stacked bar chart. Pure functions of their data; no scripts, no external
// references, no xmlns (the SVG is inlined into HTML5).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace convbench {

struct PlotPoint {
  std::string label;  // drawn next to the point
  double x = 0, y = 0;
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
