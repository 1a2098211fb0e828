#include "report/html_report.hpp"

#include <algorithm>
#include <numeric>

#include "report/block_plots.hpp"
#include "report/summary_tables.hpp"
#include "results/device_limits.hpp"
#include "util/json_text.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

const char* kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.1em}
table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em;display:block;overflow-x:auto;max-width:100%}
th,td{border-bottom:1px solid #ddd;padding:0.25em 0.6em;text-align:left;white-space:nowrap}
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.better{color:#0a7a2f;font-weight:600}td.worse{color:#b00020;font-weight:600}
table.meta td:first-child{color:#555}table.meta td{white-space:normal;overflow-wrap:anywhere}
figure{margin:1em 0}figcaption{font-size:0.9em;color:#444;max-width:680px}
svg.plot{border:1px solid #ddd;background:#fff;font-size:12px;max-width:100%;height:auto}
p.no-plot{border:1px dashed #bbb;padding:1em;color:#555;max-width:640px}
p.mismatch{color:#b00020;font-weight:700}p.agree{color:#0a7a2f}
.notes{font-size:0.9em;color:#444})";

// A plot as a figure with its caption, or the reason it cannot be drawn.
std::string figure_html(const BlockPlot& plot) {
  if (plot.svg.empty())
    return "<p class=\"no-plot " + plot.name + "\" id=\"" + plot.id + "\">" + html_escape(plot.caption) + "</p>\n";
  return "<figure>\n" + plot.svg + "<figcaption>" + html_escape(plot.caption) + "</figcaption>\n</figure>\n";
}

std::string meta_table(const ResultSet& results) {
  TextTable t;
  t.header = {"", ""};
  t.right_aligned = {false, false};
  t.rows.push_back({"engine", results.engine});
  if (!results.device.empty()) t.rows.push_back({"device", results.device});
  const std::string gpu = recorded_gpu_name(results.provenance);
  if (!gpu.empty()) t.rows.push_back({"GPU", gpu});
  for (const char* key :
       {"date", "git_commit", "spec_file", "spec", "spec_sha256", "cpu", "hardware_threads", "os", "kernel", "backend",
        "onednn_version", "cuda_version", "cudnn_version", "torch", "command_line"}) {
    if (!results.provenance.contains(key)) continue;
    const auto& v = results.provenance[key];
    t.rows.push_back({key, v.is_string() ? v.get<std::string>() : json_text(v)});
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
    if (!tables[i].structure.empty()) {
      out += "<ul class=\"structure\">\n";
      for (const std::string& line : tables[i].structure) out += "<li>" + html_escape(line) + "</li>\n";
      out += "</ul>\n";
    }
    for (const BlockPlot& plot : point_plots(results, groups[i], i)) out += figure_html(plot);
    out += "</section>\n";
  }
  // A block swept over a numeric field: time and throughput along the sweep, one line per variant.
  const auto blocks = rows_of_each_block(results);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::vector<BlockPlot> plots = sweep_plots(blocks[b], b);
    if (plots.empty()) continue;
    out += "<section class=\"sweep\" id=\"sweep-" + std::to_string(b) + "\">\n<h2>" +
           html_escape(blocks[b].front()->block) + " across its sweep</h2>\n";
    for (const BlockPlot& plot : plots) out += figure_html(plot);
    out += "</section>\n";
  }
  if (against) out += peer_comparison_html(*against);
  return out + "<footer class=\"notes\">\n<p>" +
         html_escape_lines(tables_footnote(results, block_tables_columns(results))) +
         "</p>\n</footer>\n</body>\n</html>\n";
}

}  // namespace convbench
