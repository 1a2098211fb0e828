#include "output_options.hpp"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>

#include "option_checks.hpp"
#include "report/figure_files.hpp"
#include "report/report_formats.hpp"
#include "report/result_columns.hpp"
#include "report/run_warnings.hpp"
#include "results/device_limits.hpp"
#include "results/gpu_datasheets.hpp"
#include "util/input_error.hpp"
#include "util/join.hpp"
#include "util/markup_escape.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {

std::string OutputOptions::file(const std::string& format) const {
  const auto found = files.find(format);
  return found == files.end() ? std::string() : found->second;
}

void add_output_options(CLI::App& sub, OutputOptions& o) {
  // std::map keeps each element where it is, so CLI11 can hold on to it.
  for (const OutputFormat* f : file_output_formats()) sub.add_option(f->flag, o.files[f->name], f->flag_help);
  sub.add_option("--format", o.format, "What standard output shows: " + join(report_format_names(), " | "))
      ->check(CLI::IsMember(report_format_names()))
      ->capture_default_str();
  add_table_options(sub, o);
}

void add_table_options(CLI::App& sub, OutputOptions& o) {
  sub.add_flag("--wide", o.wide, "Tables with every column (the default terminal table is compact, under 100 columns)");
  std::string names;
  for (const std::string& n : result_column_keys()) names += (names.empty() ? "" : ", ") + n;
  sub.add_option("--columns", o.columns, "Tables with these columns, comma-separated, in order: " + names);
  sub.add_option("--plots", o.plots,
                 "Also write every plot as a standalone figure into this directory (made when missing, in a parent "
                 "that exists): SVG, and PDF when rsvg-convert is installed");
  sub.add_option("--peak-flops", o.peak_flops,
                 "The device's peak FLOP/s (e.g. 1.5e12 or 1.5T for a CPU), for the roofline; with --bandwidth")
      ->transform(decimal_units())
      ->check(finite_in(kMinPeakFlops, kMaxPeakFlops));
  sub.add_option("--bandwidth", o.bandwidth,
                 "The device's memory bandwidth in bytes/s (e.g. 4e10 or 40G), for the roofline")
      ->transform(decimal_units())
      ->check(finite_in(kMinBandwidth, kMaxBandwidth));
  sub.add_option("--limits", o.limits_device, limits_device_help() + "; for the roofline");
  sub.add_option("--latex-columns", o.latex_columns,
                 "LaTeX tables with these columns (the names --columns takes), comma-separated, in order "
                 "(default: one that fits a single column)");
  sub.add_flag("--latex-sweep-table", o.latex_whole_sweeps,
               "LaTeX: one table per block with every sweep point of it (rows: point x variant, ratios against "
               "the baseline at each point; default columns: params, forward GFLOP, ms and MiB beside the ratios)");
}

namespace {

// "a,b,c" checked against the names `check` knows; InputError naming `flag` otherwise.
std::vector<std::string> column_list(const std::string& text, const char* flag) {
  const std::vector<std::string> names = comma_list(text, flag, "column name");
  try {
    check_result_columns(names);
  } catch (const std::invalid_argument& e) {
    std::string all;
    for (const std::string& n : result_column_keys()) all += (all.empty() ? "" : ", ") + n;
    throw InputError({"command line", 0, 0}, flag, std::string(e.what()) + " (columns: " + all + ")");
  }
  return names;
}

}  // namespace

TableOptions table_options(const OutputOptions& o) {
  TableOptions t;
  t.wide = o.wide;
  t.columns = column_list(o.columns, "--columns");
  t.latex_columns = column_list(o.latex_columns, "--latex-columns");
  t.latex_whole_sweeps = o.latex_whole_sweeps;
  return t;
}

namespace {

struct Requested {
  std::string path;  // "" when not asked for
  const OutputFormat* format;
};

// Every file format, in the order of its flag.
std::vector<Requested> requested(const OutputOptions& o) {
  std::vector<Requested> out;
  for (const OutputFormat* f : file_output_formats()) out.push_back({o.file(f->name), f});
  return out;
}

}  // namespace

void check_result_paths(const OutputOptions& o, const std::vector<std::string>& inputs) {
  std::vector<OutputPath> renderings;
  for (const Requested& r : requested(o)) renderings.push_back({r.path, r.format->flag});
  std::vector<OutputPath> paths = renderings;
  paths.push_back({o.peer_json, "--peer-json"});
  check_output_paths(paths, inputs);
  // --peer-json is not a rendering of the results: it may go to standard output beside any --format.
  check_one_format_on_stdout(renderings, o.format, "table");
  table_options(o);  // a bad --columns fails before the work, not after it
  check_figure_options(o);
}

void check_one_format_on_stdout(const std::vector<OutputPath>& paths, const std::string& format,
                                const std::string& plain) {
  // An output named `-` would silently drop what --format asked for.
  if (format == plain) return;
  for (const OutputPath& p : paths)
    if (p.path == "-")
      throw InputError(
          {"command line", 0, 0}, "--format",
          "--format " + format + " and " + p.flag + " - both ask for standard output; name a file for one of them");
}

void write_files_else_stdout(const std::vector<OutputFile>& files, const std::vector<std::string>& inputs,
                             const std::function<std::string()>& stdout_text) {
  write_output_files(files, inputs);
  for (const OutputFile& f : files)
    if (f.where.path == "-") return;
  std::cout << stdout_text();
}

void check_figure_options(const OutputOptions& o) {
  check_plot_dir(o.plots);
  if ((o.peak_flops > 0) != (o.bandwidth > 0))
    throw InputError({"command line", 0, 0}, o.peak_flops > 0 ? "--bandwidth" : "--peak-flops",
                     "the roofline needs both --peak-flops and --bandwidth");
  check_limits_device(o.limits_device, o.peak_flops, o.bandwidth);
}

ResultSet with_device_limits(const OutputOptions& o, const ResultSet& results) {
  ResultSet out = results;
  if (o.peak_flops > 0 && o.bandwidth > 0)
    out.provenance["device_limits"] =
        device_limits_json({o.peak_flops, o.bandwidth, "given on the command line (--peak-flops, --bandwidth)"});
  if (const GpuDatasheet* sheet = find_gpu_datasheet(o.limits_device)) {
    // Recorded for the first row's dtype; a roofline of another dtype finds that dtype's numbers in
    // the same datasheet (device_limits). A dtype the GPU has no arithmetic for records float32's.
    const std::string dtype = results.rows.empty() ? "float32" : compute_dtype(results.rows.front());
    auto l = named_device_limits(*sheet, dtype, results.provenance);
    if (!l) l = named_device_limits(*sheet, "float32", results.provenance);
    if (l) out.provenance["device_limits"] = device_limits_json(*l);
  }
  return out;
}

void add_figure_files(const OutputOptions& o, const ResultSet& results, std::vector<OutputFile>& files) {
  if (o.plots.empty()) return;
  FigureSet figures = figure_files(results, o.plots);
  if (!figures.notice.empty()) std::cerr << "convbench: " << figures.notice << "\n";
  for (OutputFile& f : figures.files) files.push_back(std::move(f));
}

void write_results(const OutputOptions& o, const ResultSet& measured, const std::vector<std::string>& inputs,
                   const PeerOutputs& peer) {
  const ResultSet results = with_device_limits(o, measured);
  std::vector<OutputFile> files;
  bool to_stdout = false;
  std::string stdout_format = o.format;
  for (const Requested& r : requested(o)) {
    if (r.path.empty()) continue;
    files.push_back({{r.path, r.format->flag}, r.format->render(results, {false, table_options(o), peer.comparison})});
    if (r.path == "-") stdout_format = r.format->name;
    to_stdout = to_stdout || r.path == "-";
  }
  if (!o.peer_json.empty()) {
    files.push_back({{o.peer_json, "--peer-json"}, peer.peer_json});
    to_stdout = to_stdout || o.peer_json == "-";
  }
  // The warnings about rows that ran (disturbed, a clock drop, no graph replay) are said once:
  // under the tables of the text formats, on stderr when standard output shows another format.
  if (!output_format(stdout_format).states_warnings)
    for (const std::string& w : run_warnings(results)) std::cerr << "convbench: warning: " << printable(w) << "\n";
  PlotDirectory plot_dir(o.plots);
  add_figure_files(o, results, files);
  write_output_files(files, inputs);
  plot_dir.keep();
  if (!to_stdout) std::cout << output_format(o.format).render(results, {o.colour, table_options(o), peer.comparison});
}

bool stdout_is_terminal() { return ::isatty(::fileno(stdout)) == 1; }

bool colour_wanted(const std::string& mode, bool is_terminal, const char* no_color_env) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return is_terminal && (no_color_env == nullptr || no_color_env[0] == '\0');
}

bool colour_for(const CLI::App& sub, FILE* stream) {
  const CLI::App* root = &sub;
  while (root->get_parent()) root = root->get_parent();
  const std::string mode = root->get_option(kColorOption)->as<std::string>();
  return colour_wanted(mode, ::isatty(::fileno(stream)) == 1, std::getenv("NO_COLOR"));
}

}  // namespace convbench::cli
