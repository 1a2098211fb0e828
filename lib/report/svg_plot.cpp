#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

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

// The plot's own styles, scoped to its id: a figure file has no page CSS to lean on.
std::string plot_style(const std::string& id) {
  const std::string s = "#" + id + " ";
  return "<style>\n" + s + ".gridline{stroke:#e6e6e6;stroke-width:1}" + s + ".axis{stroke:#333;stroke-width:1.2}" + s +
         ".tick-label," + s + ".legend-label," + s + ".bar-total{fill:#333;font-size:11px}" + s +
         ".axis-label{fill:#111;font-size:13px}" + s + ".plot-title{fill:#111;font-size:14px;font-weight:600}" + s +
         ".point{stroke:#fff;stroke-width:1.5}" + s + ".point-label{fill:#111;font-size:12px}" + s +
         ".error-bar{stroke-width:1.5}" + s + ".series-line{fill:none;stroke-width:1.5}" + s +
         ".roof-line{fill:none;stroke:#b00020;stroke-width:2}" + s + ".roof-label{fill:#b00020;font-size:12px}\n" +
         "</style>\n";
}

std::string svg_open(const std::string& id, const std::string& css_class, const std::string& title,
                     double height = kHeight) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + html_escape(id) + "\" class=\"" + html_escape(css_class) +
         "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" width=\"" + num(kWidth) + "\" height=\"" +
         num(height) + "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\" role=\"img\" " +
         "aria-labelledby=\"" + html_escape(id) + "-title\">\n<title id=\"" + html_escape(id) + "-title\">" +
         html_escape(title) + "</title>\n" + plot_style(html_escape(id)) + "<rect width=\"" + num(kWidth) +
         "\" height=\"" + num(height) + "\" fill=\"#fff\"/>\n<text class=\"plot-title\" x=\"" + num(kLeft) +
         "\" y=\"22\">" + html_escape(title) + "</text>\n";
}

// A legend entry in lines of at most 22 characters: one line when it fits, else broken at its last
// space that fits ("separable" / "channels_last": a series' variant and its other swept values),
// the rest cut with "…"; at most two lines.
std::vector<std::string> legend_lines(const std::string& name) {
  constexpr size_t kWidth = 22;
  const auto cut = [](const std::string& s) { return s.size() > kWidth ? s.substr(0, kWidth - 1) + "…" : s; };
  if (name.size() <= kWidth) return {name};
  const size_t space = name.rfind(' ', kWidth);
  if (space == std::string::npos || space == 0) return {cut(name)};
  return {name.substr(0, space), cut(name.substr(space + 1))};
}

// A label cut to 24 characters, for places with little room.
std::string shortened(const std::string& label) { return label.size() > 24 ? label.substr(0, 23) + "…" : label; }

// A label's box in pixels, for placing labels where they do not overlap.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

Box text_box(double x, double y, const std::string& content, double size = 12) {
  const double w = 0.6 * size * static_cast<double>(content.size());  // DejaVu Sans averages ~0.6 em
  return {x, y - size, x + w, y + 3};
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

std::string axis_labels(const std::string& x_label, const std::string& y_label, double height = kHeight) {
  const double cx = kLeft + kPlotW / 2, cy = kTop + kPlotH / 2;
  return text(cx, height - 16, "axis-label x-label", x_label, "middle") +
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
  std::vector<Box> roof_boxes;  // point labels keep off the roof's labels
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
    const double peak_w = text_box(0, 0, r.peak_label).x1;
    roof_boxes.push_back(text_box(px(x_hi) - 4 - peak_w, py(r.peak) - 6, r.peak_label));
    const double bx = std::sqrt(x_start * ridge);
    svg += text(px(bx) - 6, py(r.bandwidth * bx) - 8, "roof-label", r.bandwidth_label, "end");
    const double bw_w = text_box(0, 0, r.bandwidth_label).x1;
    roof_boxes.push_back(text_box(px(bx) - 6 - bw_w, py(r.bandwidth * bx) - 8, r.bandwidth_label));
    svg += "</g>\n";
  }

  // Colours: one per series when the points form series, else one per point.
  std::vector<std::string> keys;
  for (const auto& [i, p] : points) {
    const std::string key = p.series.empty() ? p.label : p.series;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  const auto colour_of = [&](const PlotPoint& p) {
    const std::string key = p.series.empty() ? p.label : p.series;
    return colour(static_cast<size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin()));
  };
  // Series: joined in x order.
  svg += "<g class=\"series\">\n";
  for (const std::string& key : keys) {
    std::vector<const PlotPoint*> members;
    for (const auto& [i, p] : points)
      if (!p.series.empty() && p.series == key) members.push_back(&p);
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(), [](const PlotPoint* a, const PlotPoint* b) { return a->x < b->x; });
    svg += "<polyline class=\"series-line\" stroke=\"" + std::string(colour_of(*members.front())) + "\" points=\"";
    for (const PlotPoint* m : members) svg += num(px(m->x)) + "," + num(py(m->y)) + " ";
    svg += "\"/>\n";
  }
  svg += "</g>\n<g class=\"points\">\n";
  std::vector<Box> taken = roof_boxes;
  std::vector<std::pair<double, double>> dots;
  for (const auto& [i, p] : points) dots.emplace_back(px(p.x), py(p.y));
  for (const auto& [x, y] : dots) taken.push_back({x - 6, y - 6, x + 6, y + 6});
  for (size_t n = 0; n < points.size(); ++n) {
    const PlotPoint& p = points[n].second;
    const char* c = colour_of(p);
    const double x = dots[n].first, y = dots[n].second;
    if (p.y_lo > 0 && p.y_lo <= p.y && p.y <= p.y_hi && p.y_hi > p.y_lo) {  // the samples' quartiles
      const double lo = py(p.y_lo), hi = py(p.y_hi);
      svg += "<g class=\"error-bar\" stroke=\"" + std::string(c) + "\">" + line(x, lo, x, hi, "error-bar") +
             line(x - 4, lo, x + 4, lo, "error-bar") + line(x - 4, hi, x + 4, hi, "error-bar") + "</g>\n";
    }
    // An untrusted point is hollow: a ring in its series' colour (a style: .point's white stroke
    // in the stylesheet would win over a presentation attribute).
    const std::string paint = p.distrust.empty()
                                  ? "fill=\"" + std::string(c) + "\""
                                  : "fill=\"#fff\" style=\"stroke:" + std::string(c) + ";stroke-width:2.5\"";
    svg += "<circle class=\"point" + std::string(p.distrust.empty() ? "" : " untrusted") + "\" cx=\"" + num(x) +
           "\" cy=\"" + num(y) + "\" r=\"5\" " + paint + "><title>" +
           html_escape(p.label + (p.distrust.empty() ? "" : " (" + p.distrust + ")") + ": x " +
                       format_significant(p.x, 4) + ", y " + format_significant(p.y, 4) +
                       (p.y_hi > p.y_lo ? " (quartiles " + format_significant(p.y_lo, 4) + " to " +
                                              format_significant(p.y_hi, 4) + ")"
                                        : "")) +
           "</title></circle>\n";
  }
  // Labels next to their points where they fit without covering another label or point (right,
  // left, above, below); the legend names every colour either way.
  for (size_t n = 0; n < points.size(); ++n) {
    const PlotPoint& p = points[n].second;
    if (!p.series.empty()) continue;  // series are named by the legend
    const double x = dots[n].first, y = dots[n].second;
    const double w = text_box(0, 0, p.label).x1;
    const std::pair<double, double> spots[] = {
        {x + 8, y - 6}, {x - 8 - w, y - 6}, {x - w / 2, y - 10}, {x - w / 2, y + 18}};
    for (const auto& [lx, ly] : spots) {
      const Box b = text_box(lx, ly, p.label);
      if (b.x0 < kLeft || b.x1 > kLeft + kPlotW || b.y0 < kTop || b.y1 > kTop + kPlotH) continue;
      if (std::any_of(taken.begin(), taken.end(),
                      [&](const Box& t) { return t.overlaps(b) && !(t.x0 == x - 6 && t.y0 == y - 6); }))
        continue;
      taken.push_back(b);
      svg += text(lx, ly, "point-label", p.label);
      break;
    }
  }
  svg += "</g>\n<g class=\"legend\">\n";
  // What a hollow point means goes below the colours whenever one is drawn: room kept for it.
  const bool any_untrusted =
      std::any_of(points.begin(), points.end(), [](const auto& ip) { return !ip.second.distrust.empty(); });
  const double bottom = kTop + 10 + 18 * std::floor(kPlotH / 18) - (any_untrusted ? 54 : 0);
  double y = kTop + 10;
  size_t shown = 0;
  for (; shown < keys.size(); ++shown) {
    const std::vector<std::string> lines = legend_lines(keys[shown]);
    const double last = y + 13 * static_cast<double>(lines.size() - 1);
    if (last >= bottom) break;
    svg += "<circle cx=\"" + num(kLeft + kPlotW + 22) + "\" cy=\"" + num(y - 4) + "\" r=\"5\" fill=\"" + colour(shown) +
           "\"/>\n";
    for (size_t l = 0; l < lines.size(); ++l)
      svg += text(kLeft + kPlotW + 32, y + 13 * static_cast<double>(l), "legend-label", lines[l]);
    y = last + 18;
  }
  if (shown < keys.size()) {
    svg += text(kLeft + kPlotW + 16, y, "legend-label", "+" + std::to_string(keys.size() - shown) + " more");
    y += 18;
  }
  if (any_untrusted) {
    y += 18;
    svg += "<circle class=\"untrusted-key\" cx=\"" + num(kLeft + kPlotW + 22) + "\" cy=\"" + num(y - 4) +
           "\" r=\"5\" fill=\"#fff\" stroke=\"#333\" stroke-width=\"2.5\"/>\n";
    svg += text(kLeft + kPlotW + 32, y, "legend-label", "time not trusted");
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

  // Labels wider than their band are turned; the canvas grows by what they need below the axis.
  const double band = plot.bars.empty() ? kPlotW : kPlotW / static_cast<double>(plot.bars.size());
  double widest = 0;
  for (const StackedBar& b : plot.bars) widest = std::max(widest, text_box(0, 0, shortened(b.label), 11).x1);
  const bool turn = widest > band - 4;
  const double height = kHeight + (turn ? 0.57 * widest : 0.0);  // sin 35 degrees of the widest label
  std::string svg = svg_open(plot.id, plot.css_class, plot.title, height);
  svg += "<g class=\"grid\">\n";
  for (int k = 0; k * step <= top * (1 + 1e-9); ++k) {
    const double y = py(k * step);
    svg += line(kLeft, y, kLeft + kPlotW, y, "gridline");
    svg += text(kLeft - 6, y + 4, "tick-label", format_fixed(k * step, decimals), "end");
  }
  svg += "</g>\n<g class=\"axes\">\n" + line(kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH, "axis") +
         line(kLeft, kTop, kLeft, kTop + kPlotH, "axis") + "</g>\n";
  svg += axis_labels("variant", plot.y_label, height);

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
    // Turned labels, so neighbours do not print over each other.
    if (turn) {
      const double lx = x + width / 2, ly = kTop + kPlotH + 12;
      svg += text(lx, ly, "tick-label", shortened(bar.label), "end",
                  " transform=\"rotate(-35 " + num(lx) + " " + num(ly) + ")\"");
    } else {
      svg += text(x + width / 2, kTop + kPlotH + 18, "tick-label", bar.label, "middle");
    }
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
