#include "history/history_site.hpp"

#include <algorithm>
#include <map>

#include "history/history_tables.hpp"
#include "history/trend_report.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

const char* kSiteStyle =
    "body{font:14px sans-serif;margin:24px;color:#222;max-width:1100px}h2{border-bottom:1px solid #ccc;"
    "padding-bottom:4px}table{border-collapse:collapse;margin:8px 0;display:block;overflow-x:auto}"
    "th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:middle}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:1px 3px}"
    ".bad{color:#c0392b}nav{margin:8px 0}svg{max-width:100%;height:auto}";

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(title) +
         "</title>\n<style>" + kSiteStyle + "</style>\n</head>\n<body>\n" + body + "</body>\n</html>\n";
}

std::string series_file(const StoredSeries& s) { return "series-" + std::to_string(s.id) + ".html"; }

std::string ms(const std::optional<double>& v) { return v ? format_significant(*v, 4) : "-"; }

std::string short_commit(const std::string& commit) { return commit.empty() ? "(none)" : commit.substr(0, 12); }

// A sparkline of the series' medians: usable runs as a line, disturbed or failed runs as hollow
// points, so a glance shows a step without reading numbers.
std::string sparkline(const std::vector<StoredMeasurement>& runs) {
  constexpr double kW = 140, kH = 28, kPad = 3;
  double lo = 0, hi = 0;
  bool any = false;
  for (const StoredMeasurement& m : runs)
    if (m.median) {
      lo = any ? std::min(lo, *m.median) : *m.median;
      hi = any ? std::max(hi, *m.median) : *m.median;
      any = true;
    }
  std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"spark\" width=\"140\" height=\"28\" "
      "viewBox=\"0 0 140 28\" role=\"img\"><title>medians of " +
      std::to_string(runs.size()) + " runs</title>";
  if (!any) return svg + "</svg>";
  if (hi - lo <= 1e-12 * std::max(1.0, hi)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const size_t n = runs.size();
  const auto x = [&](size_t i) {
    return kPad +
           (n == 1 ? (kW - 2 * kPad) / 2 : (kW - 2 * kPad) * static_cast<double>(i) / static_cast<double>(n - 1));
  };
  const auto y = [&](double v) { return kPad + (kH - 2 * kPad) * (1.0 - (v - lo) / (hi - lo)); };
  std::string line, hollow;
  for (size_t i = 0; i < n; ++i) {
    const StoredMeasurement& m = runs[i];
    if (!m.median) continue;
    const std::string point = format_fixed(x(i), 1) + "," + format_fixed(y(*m.median), 1);
    if (m.usable())
      line += (line.empty() ? "" : " ") + point;
    else
      hollow += "<circle cx=\"" + format_fixed(x(i), 1) + "\" cy=\"" + format_fixed(y(*m.median), 1) +
                "\" r=\"2\" fill=\"#fff\" stroke=\"#c0392b\"/>";
  }
  if (!line.empty()) svg += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"#1f4e79\" stroke-width=\"1.4\"/>";
  return svg + hollow + "</svg>";
}

// Commits in the order the history first saw them (runs are in the order they were added).
struct CommitIndex {
  std::vector<std::string> commits;
  std::map<std::string, size_t> number;  // commit -> 1-based page number
  size_t add(const std::string& commit) {
    auto [it, inserted] = number.emplace(commit, commits.size() + 1);
    if (inserted) commits.push_back(commit);
    return it->second;
  }
  std::string file(const std::string& commit) const { return "commit-" + std::to_string(number.at(commit)) + ".html"; }
};

std::string commit_link(const CommitIndex& commits, const std::string& commit) {
  return "<a href=\"" + commits.file(commit) + "\"><code>" + html_escape(short_commit(commit)) + "</code></a>";
}

struct SeriesData {
  StoredSeries series;
  std::vector<StoredMeasurement> runs;
  std::vector<ChangePoint> changes;  // the step fit's, once: the index and the series page show them
};

// The latest level change of a series, as a cell: "+25.0% at #14 (commit)", or "steady".
std::string latest_change(const SeriesData& d, const CommitIndex& commits) {
  if (d.changes.empty()) return "steady";
  const ChangePoint& c = d.changes.back();
  const StoredMeasurement& at = d.runs[c.index];
  return std::string(c.after > c.before ? "<span class=\"bad\">" : "<span>") + (c.after >= c.before ? "+" : "") +
         format_fixed((c.after / c.before - 1.0) * 100.0, 1) + "%</span> at #" + std::to_string(at.run_id) + " (" +
         commit_link(commits, at.git_commit) + ")";
}

std::string key_table(const StoredSeries& s) {
  std::string rows;
  const auto row = [&](const std::string& k, const std::string& v) {
    rows += "<tr><th>" + html_escape(k) + "</th><td><code>" + html_escape(v) + "</code></td></tr>\n";
  };
  row("block", s.key.block);
  row("variant", s.key.variant);
  if (!s.key.point.empty()) row("sweep point", s.key.point);
  row("dtype, layout, mode", s.key.dtype + ", " + s.key.layout + ", " + s.key.mode);
  row("graph hash", s.key.graph_hash + (s.key.graph_hash_source.empty() ? "" : " (" + s.key.graph_hash_source + ")"));
  row("device", s.key.device_label());
  for (const auto& [k, v] : s.key.device_key.items()) row(k, v.is_string() ? v.get<std::string>() : v.dump());
  return "<table>\n" + rows + "</table>\n";
}

std::string series_page(const SeriesData& d, const CommitIndex& commits, const StepFitOptions& step) {
  const StoredSeries& s = d.series;
  const std::string title = "#" + std::to_string(s.id) + " " + s.key.label();
  std::string body = "<nav><a href=\"index.html\">all series</a></nav>\n<h1>" + html_escape(title) + "</h1>\n";
  body += key_table(s);
  body += "<figure>" + render_trend_svg({title + " (" + std::to_string(d.runs.size()) + " runs)", d.runs}, step) +
          "</figure>\n";
  body += "<h2>Level changes</h2>\n";
  if (d.changes.empty()) body += "<p>None: the penalised step fit finds one level over every usable run.</p>\n";
  for (const ChangePoint& c : d.changes) {
    const StoredMeasurement& at = d.runs[c.index];
    body += "<p>" + format_significant(c.before, 4) + " ms &rarr; " + format_significant(c.after, 4) + " ms (" +
            (c.after >= c.before ? "+" : "") + format_fixed((c.after / c.before - 1.0) * 100.0, 1) + "%) from run #" +
            std::to_string(at.run_id) + ", commit " + commit_link(commits, at.git_commit) + ", " +
            html_escape(at.date) + "</p>\n";
  }
  body +=
      "<h2>Runs</h2>\n<table>\n<tr><th>run</th><th>date</th><th>commit</th><th>host</th><th>status</th>"
      "<th>median ms</th><th>q1</th><th>q3</th><th>trust</th><th>peak</th><th>source</th></tr>\n";
  for (auto it = d.runs.rbegin(); it != d.runs.rend(); ++it) {
    const StoredMeasurement& m = *it;
    body += "<tr><td class=\"num\">#" + std::to_string(m.run_id) + "</td><td>" + html_escape(m.date) + "</td><td>" +
            commit_link(commits, m.git_commit) + "</td><td>" + html_escape(m.host) + "</td><td>" +
            html_escape(m.status) + "</td><td class=\"num\">" + ms(m.median) + "</td><td class=\"num\">" + ms(m.q1) +
            "</td><td class=\"num\">" + ms(m.q3) + "</td><td" + (m.trust == "disturbed" ? " class=\"bad\"" : "") +
            " title=\"" + html_escape(m.trust_evidence) + "\">" + html_escape(m.trust) + "</td><td class=\"num\">" +
            (m.peak_bytes > 0 ? format_bytes(m.peak_bytes) : "-") + "</td><td>" + html_escape(m.source) +
            "</td></tr>\n";
  }
  body += "</table>\n";
  return page("convbench history: " + title, body);
}

std::string commit_page(size_t k, const CommitIndex& commits, const std::vector<SeriesData>& all) {
  const std::string& commit = commits.commits[k];
  std::string body = "<nav><a href=\"index.html\">all series</a>";
  if (k > 0) body += " · <a href=\"" + commits.file(commits.commits[k - 1]) + "\">previous commit</a>";
  if (k + 1 < commits.commits.size())
    body += " · <a href=\"" + commits.file(commits.commits[k + 1]) + "\">next commit</a>";
  body += "</nav>\n<h1>commit <code>" + html_escape(commit.empty() ? "(none)" : commit) + "</code></h1>\n";
  body +=
      "<table>\n<tr><th>series</th><th>device</th><th>run</th><th>date</th><th>host</th><th>median ms</th>"
      "<th>trust</th></tr>\n";
  int rows = 0;
  for (const SeriesData& d : all)
    for (const StoredMeasurement& m : d.runs) {
      if (m.git_commit != commit) continue;
      ++rows;
      body += "<tr><td><a href=\"" + series_file(d.series) + "\">" + html_escape(d.series.key.label()) +
              "</a></td><td>" + html_escape(d.series.key.device_label()) + "</td><td class=\"num\">#" +
              std::to_string(m.run_id) + "</td><td>" + html_escape(m.date) + "</td><td>" + html_escape(m.host) +
              "</td><td class=\"num\">" + ms(m.median) + "</td><td" + (m.trust == "disturbed" ? " class=\"bad\"" : "") +
              ">" + html_escape(m.trust) + "</td></tr>\n";
    }
  body += "</table>\n<p>" + std::to_string(rows) + " measurement(s) at this commit.</p>\n";
  return page("convbench history: commit " + short_commit(commit), body);
}

}  // namespace

std::vector<SiteFile> history_site(HistoryReader& history, const std::string& filter, const StepFitOptions& step) {
  std::vector<SeriesData> all;
  CommitIndex commits;
  // Commits numbered in run order over every selected series.
  std::map<int64_t, std::string> commit_of_run;
  for (const StoredSeries& s : select_series(history, filter)) {
    std::vector<StoredMeasurement> runs = history.measurements(s.id);
    std::vector<ChangePoint> changes = change_points(runs, step);
    all.push_back({s, std::move(runs), std::move(changes)});
    for (const StoredMeasurement& m : all.back().runs) commit_of_run.emplace(m.run_id, m.git_commit);
  }
  for (const auto& [run, commit] : commit_of_run) commits.add(commit);

  std::vector<SiteFile> files;
  // The index: a section per device, a row per series.
  std::vector<std::pair<std::string, std::string>> sections;  // device label, rows
  std::map<std::string, size_t> section_of;
  for (const SeriesData& d : all) {
    const std::string device = d.series.key.device_label();
    if (!section_of.count(device)) {
      section_of[device] = sections.size();
      sections.push_back({device, ""});
    }
    const StoredMeasurement* latest = d.runs.empty() ? nullptr : &d.runs.back();
    std::string row =
        "<tr><td><a href=\"" + series_file(d.series) + "\">" + html_escape(d.series.key.label()) + "</a></td><td>" +
        html_escape(d.series.key.dtype + ", " + d.series.key.layout + ", " + d.series.key.mode) +
        "</td><td class=\"num\">" + std::to_string(d.runs.size()) + "</td><td>" + sparkline(d.runs) + "</td>";
    if (latest)
      row += "<td class=\"num\">" + ms(latest->median) + "</td><td" +
             (latest->trust == "disturbed" || latest->status != "ok" ? " class=\"bad\"" : "") + ">" +
             html_escape(latest->status == "ok" ? latest->trust : latest->status) + "</td><td>" +
             commit_link(commits, latest->git_commit) + "</td>";
    else
      row += "<td>-</td><td>-</td><td>-</td>";
    row += "<td>" + latest_change(d, commits) + "</td></tr>\n";
    sections[section_of[device]].second += row;
    files.push_back({series_file(d.series), series_page(d, commits, step)});
  }
  for (size_t k = 0; k < commits.commits.size(); ++k)
    files.push_back({commits.file(commits.commits[k]), commit_page(k, commits, all)});

  std::string body = "<h1>convbench history</h1>\n<p>" + std::to_string(all.size()) + " series, " +
                     std::to_string(commit_of_run.size()) + " runs, " + std::to_string(commits.commits.size()) +
                     " commits, from <code>" + html_escape(history.path()) +
                     "</code>. Each row: the series' medians run by run (hollow red: disturbed or failed runs, never "
                     "fitted), its latest run, and the latest level change the penalised step fit finds (red: "
                     "slower).</p>\n";
  if (!commits.commits.empty())
    body += "<p>Latest commit: " + commit_link(commits, commits.commits.back()) +
            "; first: " + commit_link(commits, commits.commits.front()) + ".</p>\n";
  for (const auto& [device, rows] : sections)
    body += "<section>\n<h2>" + html_escape(device) +
            "</h2>\n<table>\n<tr><th>series</th><th>dtype, layout, mode</th><th>runs</th><th>medians</th>"
            "<th>latest ms</th><th>trust</th><th>commit</th><th>latest level change</th></tr>\n" +
            rows + "</table>\n</section>\n";
  files.insert(files.begin(), {"index.html", page("convbench history", body)});
  return files;
}

}  // namespace convbench
