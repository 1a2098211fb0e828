#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include "report/markup_escape.hpp"
#include "report/text_table.hpp"

namespace convbench {
namespace {

constexpr double kWidth = 680, kHeight = 420;
constexpr double kLeft = 80, kRight = 170, kTop = 40, kBottom = 64;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

// Colour-blind-safe palette (Okabe-Ito), cycled.
const char* colour(size_t i) {
  static constexpr const char* palette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                            "#56B4E9", "#D55E00", "#F0E442", "#000000"};
  return palette[i % (sizeof palette / sizeof palette[0])];
}

std::string num(double v) { return format_fixed(v, 1); }

std::string svg_open(const std::string& id, const std::string& css_class, const std::string& title) {
  return "<svg id=\"" + html_escape(id) + "\" class=\"" + html_escape(css_class) + "\" viewBox=\"0 0 " + num(kWidth) +
         " " + num(kHeight) + "\" width=\"" + num(kWidth) + "\" height=\"" + num(kHeight) +
         "\" role=\"img\" aria-labelledby=\"" + html_escape(id) + "-title\">\n<title id=\"" + html_escape(id) +
         "-title\">" + html_escape(title) + "</title>\n<text class=\"plot-title\" x=\"" + num(kLeft) + "\" y=\"22\">" +
         html_escape(title) + "</text>\n";
}

std::string text(double x, double y, const std::string& css_class, const std::string& content,
                 const std::string& anchor = "start", const std::string& extra = "") {
  return "<text class=\"" + css_class + "\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" +
         extra + ">" + html_escape(content) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& css_class) {
  return "<line class=\"" + css_class + "\" x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) +
         "\" y2=\"" + num(y2) + "\"/>\n";
}

std::string axis_labels(const std::string& x_label, const std::string& y_label) {
  const double cx = kLeft + kPlotW / 2, cy = kTop + kPlotH / 2;
  return text(cx, kHeight - 16, "axis-label x-label", x_label, "middle") +
         text(18, cy, "axis-label y-label", y_label, "middle", " transform=\"rotate(-90 18 " + num(cy) + ")\"");
}

// A logarithmic axis over whole decades.
struct LogScale {
  int lo = 0, hi = 1;  // decades: the axis spans 10^lo .. 10^hi
  double to_unit(double v) const { return (std::log10(v) - lo) / (hi - lo); }
};

// The decade of a positive value, clamped to what a double can hold: a zero, a denormal or an
// infinity from a malformed file must not become an axis of 2^31 decades (the cast of -inf to
// int is undefined, and the tick loop would run that long).
double clamped_log10(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 0.0;
  return std::clamp(std::log10(v), -300.0, 300.0);
}

LogScale log_scale(double min_value, double max_value) {
  LogScale s;
  s.lo = static_cast<int>(std::floor(clamped_log10(min_value)));
  s.hi = static_cast<int>(std::ceil(clamped_log10(max_value)));
  if (s.hi <= s.lo) s.hi = s.lo + 1;
  return s;
}

int decade_step(const LogScale& s) { return std::max(1, (s.hi - s.lo + 7) / 8); }

// Tick values: every decade (or every few on a wide axis), plus 2 and 5 within one or two decades.
std::vector<double> log_ticks(const LogScale& s) {
  std::vector<double> ticks;
  const bool minor = s.hi - s.lo <= 2;
  for (int d = s.lo; d <= s.hi; d += decade_step(s)) {
    ticks.push_back(std::pow(10.0, d));
    if (minor && d < s.hi)
      for (double m : {2.0, 5.0}) ticks.push_back(m * std::pow(10.0, d));
  }
  return ticks;
}

}  // namespace

std::string log_tick_label(double value) {
  const int decade = static_cast<int>(std::floor(std::log10(value) + 1e-9));
  if (decade < -3) return format_significant(value / std::pow(10.0, decade), 1) + "e" + std::to_string(decade);
  if (decade < 3) return format_fixed(value, std::max(0, -decade));
  static constexpr const char* prefixes[] = {"k", "M", "G", "T", "P", "E"};
  const int group = std::min(decade / 3, 6);
  return format_fixed(value / std::pow(10.0, 3 * group), 0) + " " + prefixes[group - 1];
}

std::string render_loglog_svg(const LogLogPlot& plot) {
  std::vector<std::pair<size_t, PlotPoint>> points;
  for (size_t i = 0; i < plot.points.size(); ++i)
    if (plot.points[i].x > 0 && plot.points[i].y > 0 && std::isfinite(plot.points[i].x) &&
        std::isfinite(plot.points[i].y))
      points.emplace_back(i, plot.points[i]);
  double x_min = 1, x_max = 10, y_min = 1, y_max = 10;
  if (!points.empty()) {
    x_min = x_max = points.front().second.x;
    y_min = y_max = points.front().second.y;
    for (const auto& [i, p] : points) {
      x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x);
      y_min = std::min(y_min, p.y), y_max = std::max(y_max, p.y);
    }
  }
  const bool roof = plot.roof && plot.roof->peak > 0 && plot.roof->bandwidth > 0;
  if (roof) {  // the ridge point and the compute roof must be on the chart
    const double ridge = plot.roof->peak / plot.roof->bandwidth;
    x_min = std::min(x_min, ridge / 10), x_max = std::max(x_max, ridge * 10);
    y_max = std::max(y_max, plot.roof->peak);
  }
  const LogScale sx = log_scale(x_min, x_max), sy = log_scale(y_min, y_max);
  auto px = [&](double x) { return kLeft + sx.to_unit(x) * kPlotW; };
  auto py = [&](double y) { return kTop + kPlotH - sy.to_unit(y) * kPlotH; };

  std::string svg = svg_open(plot.id, plot.css_class, plot.title);
  svg += "<g class=\"grid\">\n";
  for (double v : log_ticks(sx)) {
    const double x = px(v);
    svg += line(x, kTop, x, kTop + kPlotH, "gridline");
    svg += text(x, kTop + kPlotH + 18, "tick-label", log_tick_label(v), "middle");
  }
  for (double v : log_ticks(sy)) {
    const double y = py(v);
    svg += line(kLeft, y, kLeft + kPlotW, y, "gridline");
    svg += text(kLeft - 6, y + 4, "tick-label", log_tick_label(v), "end");
  }
  svg += "</g>\n<g class=\"axes\">\n" + line(kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH, "axis") +
         line(kLeft, kTop, kLeft, kTop + kPlotH, "axis") + "</g>\n";
  svg += axis_labels(plot.x_label, plot.y_label);

  if (roof) {
    const Roof& r = *plot.roof;
    const double y_floor = std::pow(10.0, sy.lo), x_hi = std::pow(10.0, sx.hi);
    const double x_start = std::max(std::pow(10.0, sx.lo), y_floor / r.bandwidth), ridge = r.peak / r.bandwidth;
    svg += "<g class=\"roof\">\n<polyline class=\"roof-line\" points=\"" + num(px(x_start)) + "," +
           num(py(r.bandwidth * x_start)) + " " + num(px(ridge)) + "," + num(py(r.peak)) + " " + num(px(x_hi)) + "," +
           num(py(r.peak)) + "\"/>\n";
    svg += text(px(x_hi) - 4, py(r.peak) - 6, "roof-label", r.peak_label, "end");
    const double bx = std::sqrt(x_start * ridge);
    svg += text(px(bx) - 6, py(r.bandwidth * bx) - 8, "roof-label", r.bandwidth_label, "end");
    svg += "</g>\n";
  }

  svg += "<g class=\"points\">\n";
  for (const auto& [i, p] : points) {
    svg += "<circle class=\"point\" cx=\"" + num(px(p.x)) + "\" cy=\"" + num(py(p.y)) + "\" r=\"5\" fill=\"" +
           colour(i) + "\"><title>" +
           html_escape(p.label + ": x " + format_significant(p.x, 4) + ", y " + format_significant(p.y, 4)) +
           "</title></circle>\n";
    svg += text(px(p.x) + 8, py(p.y) - 6, "point-label", p.label);
  }
  return svg + "</g>\n</svg>\n";
}

std::string render_stacked_bars_svg(const StackedBarPlot& plot) {
  double max_total = 0;
  for (const StackedBar& b : plot.bars) {
    double total = 0;
    for (double v : b.values) total += std::max(0.0, v);
    max_total = std::max(max_total, total);
  }
  // Nice linear ticks: a step of 1, 2 or 5 times a power of ten, about five of them.
  const double raw = max_total > 0 ? max_total / 5 : 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  const double top = std::max(step, std::ceil(max_total / step) * step);
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
  auto py = [&](double v) { return kTop + kPlotH - v / top * kPlotH; };

  std::string svg = svg_open(plot.id, plot.css_class, plot.title);
  svg += "<g class=\"grid\">\n";
  for (int k = 0; k * step <= top * (1 + 1e-9); ++k) {
    const double y = py(k * step);
    svg += line(kLeft, y, kLeft + kPlotW, y, "gridline");
    svg += text(kLeft - 6, y + 4, "tick-label", format_fixed(k * step, decimals), "end");
  }
  svg += "</g>\n<g class=\"axes\">\n" + line(kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH, "axis") +
         line(kLeft, kTop, kLeft, kTop + kPlotH, "axis") + "</g>\n";
  svg += axis_labels("variant", plot.y_label);

  const double band = plot.bars.empty() ? kPlotW : kPlotW / static_cast<double>(plot.bars.size());
  const double width = std::min(band * 0.6, 90.0);
  svg += "<g class=\"bars\">\n";
  for (size_t b = 0; b < plot.bars.size(); ++b) {
    const StackedBar& bar = plot.bars[b];
    const double x = kLeft + band * (static_cast<double>(b) + 0.5) - width / 2;
    double base = 0;
    for (size_t c = 0; c < bar.values.size() && c < plot.categories.size(); ++c) {
      const double v = std::max(0.0, bar.values[c]);
      if (v <= 0) continue;
      svg += "<rect class=\"segment\" x=\"" + num(x) + "\" y=\"" + num(py(base + v)) + "\" width=\"" + num(width) +
             "\" height=\"" + num(py(base) - py(base + v)) + "\" fill=\"" + colour(c) + "\"><title>" +
             html_escape(bar.label + ", " + plot.categories[c] + ": " + format_fixed(v, 2) + " " + plot.value_unit) +
             "</title></rect>\n";
      base += v;
    }
    svg += text(x + width / 2, py(base) - 5, "bar-total", format_significant(base, 3), "middle");
    svg += text(x + width / 2, kTop + kPlotH + 18, "tick-label", bar.label, "middle");
  }
  svg += "</g>\n<g class=\"legend\">\n";
  for (size_t c = 0; c < plot.categories.size(); ++c) {
    const size_t from_top = plot.categories.size() - 1 - c;  // same order as the stack
    const double y = kTop + 10 + 20 * static_cast<double>(from_top);
    svg += "<rect x=\"" + num(kLeft + kPlotW + 16) + "\" y=\"" + num(y - 10) + "\" width=\"12\" height=\"12\" fill=\"" +
           colour(c) + "\"/>\n";
    svg += text(kLeft + kPlotW + 34, y, "legend-label", plot.categories[c]);
  }
  return svg + "</g>\n</svg>\n";
}

}  // namespace convbench
