#include "history/trend_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "history/history_tables.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

constexpr double kWidth = 720, kHeight = 260, kLeft = 64, kRight = 16, kTop = 28, kBottom = 56;

std::string num(double v) { return format_fixed(v, 1); }

// A "nice" tick step near range / 5: 1, 2 or 5 times a power of ten.
double tick_step(double range) {
  const double raw = range / 5.0;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10.0 * power;
}

std::string tick_label(double v, double step) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step))));
  return format_fixed(v, decimals);
}

}  // namespace

std::string render_trend_svg(const TrendSeries& series, const StepFitOptions& step) {
  const auto& runs = series.runs;
  double lo = INFINITY, hi = -INFINITY;
  for (const StoredMeasurement& m : runs)
    if (m.median) {
      lo = std::min({lo, *m.median, m.q1.value_or(*m.median)});
      hi = std::max({hi, *m.median, m.q3.value_or(*m.median)});
    }
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"trend\" width=\"" + num(kWidth) +
                    "\" height=\"" + num(kHeight) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(kHeight) +
                    "\" role=\"img\">\n<style>text{font:11px sans-serif;fill:#222}.axis{stroke:#444;stroke-width:1}"
                    ".grid{stroke:#ddd;stroke-width:1}.band{fill:#4c78a8;fill-opacity:.22;stroke:none}"
                    ".median{fill:none;stroke:#1f4e79;stroke-width:1.6}.pt{fill:#1f4e79}.bad{fill:#fff;stroke:#c0392b}"
                    ".step{stroke:#c0392b;stroke-width:1.4;stroke-dasharray:5 3}.steplabel{fill:#c0392b}"
                    ".level{stroke:#c0392b;stroke-width:1;stroke-opacity:.6}</style>\n";
  svg += "<title>" + html_escape(series.title) + "</title>\n";
  svg += "<text x=\"" + num(kLeft) + "\" y=\"16\" font-weight=\"bold\">" + html_escape(series.title) + "</text>\n";
  if (!(hi >= lo) || runs.empty()) return svg + "<text x=\"" + num(kLeft) + "\" y=\"60\">no timed runs</text></svg>\n";
  if (hi - lo < 1e-12 * std::max(1.0, hi)) {  // a flat series still gets a visible axis
    lo -= std::max(1e-6, 0.05 * lo);
    hi += std::max(1e-6, 0.05 * hi);
  }
  const double pad = (hi - lo) * 0.08;
  lo = std::max(0.0, lo - pad);
  hi += pad;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const size_t n = runs.size();
  auto x = [&](size_t i) { return kLeft + (n == 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / (n - 1)); };
  auto y = [&](double v) { return kTop + plot_h * (1.0 - (v - lo) / (hi - lo)); };
  // Axes, horizontal grid and y ticks.
  const double ystep = tick_step(hi - lo);
  for (double v = std::ceil(lo / ystep) * ystep; v <= hi + 1e-12; v += ystep) {
    svg += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kWidth - kRight) + "\" y1=\"" + num(y(v)) +
           "\" y2=\"" + num(y(v)) + "\"/><text x=\"" + num(kLeft - 6) + "\" y=\"" + num(y(v) + 4) +
           "\" text-anchor=\"end\">" + tick_label(v, ystep) + "</text>\n";
  }
  svg += "<line class=\"axis\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft) + "\" y1=\"" + num(kTop) + "\" y2=\"" +
         num(kTop + plot_h) + "\"/><line class=\"axis\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kWidth - kRight) +
         "\" y1=\"" + num(kTop + plot_h) + "\" y2=\"" + num(kTop + plot_h) + "\"/>\n";
  svg += "<text transform=\"translate(14," + num(kTop + plot_h / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">median ms (band: q1..q3)</text>\n";
  // x ticks: at most 6 runs labelled with commit and date.
  const size_t every = std::max<size_t>(1, (n + 5) / 6);
  for (size_t i = 0; i < n; i += every) {
    svg += "<text x=\"" + num(x(i)) + "\" y=\"" + num(kTop + plot_h + 16) + "\" text-anchor=\"middle\">#" +
           std::to_string(runs[i].run_id) + " " + html_escape(runs[i].git_commit.substr(0, 7)) + "</text><text x=\"" +
           num(x(i)) + "\" y=\"" + num(kTop + plot_h + 30) + "\" text-anchor=\"middle\">" +
           html_escape(runs[i].date.substr(0, 10)) + "</text>\n";
  }
  svg += "<text x=\"" + num(kLeft + plot_w / 2) + "\" y=\"" + num(kHeight - 6) +
         "\" text-anchor=\"middle\">run (in the order added): id, commit, date</text>\n";
  // The IQR band over the usable runs, then the median line, then the points.
  std::string upper, lower, line;
  for (size_t i = 0; i < n; ++i) {
    const StoredMeasurement& m = runs[i];
    if (!m.usable()) continue;
    upper += (upper.empty() ? "" : " ") + num(x(i)) + "," + num(y(m.q3.value_or(*m.median)));
    lower = num(x(i)) + "," + num(y(m.q1.value_or(*m.median))) + (lower.empty() ? "" : " ") + lower;
    line += (line.empty() ? "" : " ") + num(x(i)) + "," + num(y(*m.median));
  }
  if (!upper.empty()) svg += "<polygon class=\"band\" points=\"" + upper + " " + lower + "\"/>\n";
  if (!line.empty()) svg += "<polyline class=\"median\" points=\"" + line + "\"/>\n";
  for (size_t i = 0; i < n; ++i) {
    const StoredMeasurement& m = runs[i];
    if (!m.median) continue;
    svg += "<circle class=\"" + std::string(m.usable() ? "pt" : "bad") + "\" cx=\"" + num(x(i)) + "\" cy=\"" +
           num(y(*m.median)) + "\" r=\"" + (m.usable() ? "2.2" : "3.2") + "\"><title>run #" + std::to_string(m.run_id) +
           " " + html_escape(m.git_commit) + " " + html_escape(m.date) + ": " + format_fixed(*m.median, 4) +
           " ms, trust " + m.trust + "</title></circle>\n";
  }
  // The level changes: a dashed line where the new level starts, its size, and both levels. Close
  // changes would print their labels over each other: each label takes the next of three rows.
  const std::vector<ChangePoint> changes = change_points(runs, step);
  for (size_t k = 0; k < changes.size(); ++k) {
    const ChangePoint& c = changes[k];
    const double cx = x(c.index);
    const bool near_right = cx > kWidth - kRight - 150;  // the label goes left of the line there
    svg += "<line class=\"step\" x1=\"" + num(cx) + "\" x2=\"" + num(cx) + "\" y1=\"" + num(kTop) + "\" y2=\"" +
           num(kTop + plot_h) + "\"/><text class=\"steplabel\" x=\"" + num(near_right ? cx - 4 : cx + 4) + "\" y=\"" +
           num(kTop + 10 + 12.0 * static_cast<double>(k % 3)) + "\"" + (near_right ? " text-anchor=\"end\"" : "") +
           ">step " + (c.after >= c.before ? "+" : "") + format_fixed((c.after / c.before - 1.0) * 100.0, 1) +
           "% at #" + std::to_string(runs[c.index].run_id) + "</text>\n";
  }
  return svg + "</svg>\n";
}

std::string format_trend_report(HistoryReader& history, const std::string& filter, const StepFitOptions& step) {
  // Sections in the order select_series gives (by device), one per device label and device key.
  std::vector<std::pair<std::string, std::string>> sections;  // heading, body
  std::map<std::string, size_t> index;
  size_t plots = 0;
  for (const StoredSeries& s : select_series(history, filter)) {
    std::string settings;  // "onednn_version 2.6.3, threads 2"
    for (const auto& [k, v] : s.key.device_key.items())
      settings += (settings.empty() ? "" : ", ") + k + " " + (v.is_string() ? v.get<std::string>() : v.dump());
    const std::string heading = s.key.device_label() + (settings.empty() ? "" : " (" + settings + ")");
    if (!index.count(heading)) {
      index[heading] = sections.size();
      sections.push_back({heading, ""});
    }
    TrendSeries t{"#" + std::to_string(s.id) + " " + s.key.label() + " (" + s.key.dtype + ", " + s.key.layout + ", " +
                      s.key.mode + ", " + std::to_string(s.runs) + " runs)",
                  history.measurements(s.id)};
    sections[index[heading]].second += "<figure>" + render_trend_svg(t, step) + "</figure>\n";
    ++plots;
  }
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>convbench history: " +
      html_escape(history.path()) +
      "</title>\n<style>body{font:14px sans-serif;margin:24px;color:#222;max-width:780px}"
      "h2{border-bottom:1px solid #ccc;padding-bottom:4px}figure{margin:12px 0}"
      "code{background:#f4f4f4;padding:1px 3px}</style>\n</head>\n<body>\n<h1>convbench history</h1>\n<p>" +
      std::to_string(plots) + " series from <code>" + html_escape(history.path()) +
      "</code>. Each plot: the headline median per run (the training step, or forward in inference), the band "
      "between the quartiles of its samples, hollow red points for runs flagged disturbed (not fitted), dashed "
      "red lines where the penalised step fit finds a new level.</p>\n";
  for (const auto& [heading, body] : sections)
    html += "<section>\n<h2>" + html_escape(heading) + "</h2>\n" + body + "</section>\n";
  return html + "</body>\n</html>\n";
}

}  // namespace convbench
