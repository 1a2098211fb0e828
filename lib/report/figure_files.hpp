// `--plots DIR`: every plot of a report as a standalone figure file, for a paper or a slide:
// DIR/<block>[-<point>]-<plot>.svg and, when `rsvg-convert` (Debian's librsvg2-bin) is on the
// PATH, the same figure as DIR/....pdf for \includegraphics. The SVGs are the HTML report's own
// (report/block_plots.hpp), which carry their namespace and styles. The files are written with
// the command's other outputs, all or nothing (util/output_writer.hpp).
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"
#include "util/output_writer.hpp"

namespace convbench {

// Refuses (InputError naming --plots), before any work, a DIR that is not a directory, or that
// does not exist and has no parent directory to be created in.
void check_plot_dir(const std::string& dir);

// --plots DIR created when it does not exist yet (as `mkdir DIR`: its parent must exist), right
// before the outputs are written, and removed again unless keep() is called after they were:
// a command that fails to write leaves no empty folder behind.
class PlotDirectory {
 public:
  explicit PlotDirectory(const std::string& dir);
  ~PlotDirectory();
  PlotDirectory(const PlotDirectory&) = delete;
  PlotDirectory& operator=(const PlotDirectory&) = delete;
  void keep() { created_.clear(); }

 private:
  std::string created_;  // the folder this made, or empty
};

struct FigureSet {
  std::vector<OutputFile> files;
  std::string notice;  // e.g. why there are no PDFs; empty when there is nothing to say
};

// The figures of `results` for DIR. Plots that cannot be drawn (no timing) are left out.
FigureSet figure_files(const ResultSet& results, const std::string& dir);

// A file name from a block, point and plot name: letters, digits, '.', '-' and '_' only.
std::string figure_name(const std::string& block, const std::string& point, const std::string& plot);

// The PDF of an SVG from `rsvg-convert`, or an empty string with `why` set when the tool is
// missing or fails.
std::string svg_to_pdf(const std::string& svg, std::string& why);

}  // namespace convbench
