#include "report/figure_files.hpp"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "report/block_plots.hpp"
#include "util/input_error.hpp"

extern char** environ;

namespace convbench {
namespace {

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    out += keep ? c : '-';
  }
  return out;
}

// A temporary file path made by mkstemp (closed, to be written or overwritten by a tool).
std::string temp_file(const char* suffix_free_pattern) {
  std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/" + suffix_free_pattern;
  std::vector<char> buf(path.begin(), path.end());
  buf.push_back('\0');
  const int fd = mkstemp(buf.data());
  if (fd < 0) return "";
  close(fd);
  return buf.data();
}

}  // namespace

namespace {

std::string parent_of(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const size_t slash = d.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : d.substr(0, slash);
}

}  // namespace

void check_plot_dir(const std::string& dir) {
  if (dir.empty()) return;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw InputError({"command line", 0, 0}, "--plots", dir + ": not a directory");
    return;
  }
  if (errno != ENOENT) throw InputError({"command line", 0, 0}, "--plots", dir + ": " + std::strerror(errno));
  // Missing: made when the outputs are written (PlotDirectory), in a parent that must exist.
  const std::string parent = parent_of(dir);
  if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError({"command line", 0, 0}, "--plots",
                     dir + ": does not exist, and neither does its parent directory " + parent + " to create it in");
}

PlotDirectory::PlotDirectory(const std::string& dir) {
  if (dir.empty()) return;
  if (::mkdir(dir.c_str(), 0777) == 0) {
    created_ = dir;
    return;
  }
  if (errno == EEXIST) return;  // there already (check_plot_dir made sure it is a directory)
  throw InputError({dir, 0, 0}, "--plots", "cannot create the directory: " + std::string(std::strerror(errno)));
}

PlotDirectory::~PlotDirectory() {
  if (!created_.empty()) ::rmdir(created_.c_str());  // empty: the writing failed before any file
}

std::string figure_name(const std::string& block, const std::string& point, const std::string& plot) {
  return slug(block) + (point.empty() ? "" : "-" + slug(point)) + "-" + slug(plot);
}

std::string svg_to_pdf(const std::string& svg, std::string& why) {
  const std::string in = temp_file("convbench-figure-XXXXXX"), out = temp_file("convbench-figure-XXXXXX");
  if (in.empty() || out.empty()) {
    why = "cannot create a temporary file for rsvg-convert";
    return "";
  }
  std::ofstream(in, std::ios::binary) << svg;
  const char* argv[] = {"rsvg-convert", "--format", "pdf", "--output", out.c_str(), in.c_str(), nullptr};
  pid_t pid = 0;
  std::string pdf;
  const int spawned = posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, const_cast<char* const*>(argv), environ);
  int status = 0;
  if (spawned != 0) {
    why = std::string("rsvg-convert not found (") + std::strerror(spawned) +
          "): figures written as SVG only; install librsvg2-bin for PDFs";
  } else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = WIFEXITED(status) && WEXITSTATUS(status) == 127
              ? "rsvg-convert not found: figures written as SVG only; install librsvg2-bin for PDFs"
              : "rsvg-convert failed (status " + std::to_string(status) + "): figures written as SVG only";
  } else {
    std::ifstream f(out, std::ios::binary);
    pdf.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (pdf.rfind("%PDF", 0) != 0) {
      why = "rsvg-convert wrote no PDF: figures written as SVG only";
      pdf.clear();
    }
  }
  ::unlink(in.c_str());
  ::unlink(out.c_str());
  return pdf;
}

FigureSet figure_files(const ResultSet& results, const std::string& dir) {
  FigureSet set;
  std::vector<std::pair<std::string, std::string>> figures;  // name, svg
  const auto groups = group_by_block(results);
  for (size_t i = 0; i < groups.size(); ++i)
    for (const BlockPlot& p : point_plots(results, groups[i], i))
      if (!p.svg.empty())
        figures.emplace_back(figure_name(groups[i].front()->block, groups[i].front()->point_label, p.name), p.svg);
  const auto blocks = rows_of_each_block(results);
  for (size_t b = 0; b < blocks.size(); ++b)
    for (const BlockPlot& p : sweep_plots(blocks[b], b))
      figures.emplace_back(figure_name(blocks[b].front()->block, "", p.name), p.svg);
  bool pdf = true;
  for (const auto& [name, svg] : figures) {
    const std::string path = dir + "/" + name;
    set.files.push_back({{path + ".svg", "--plots"}, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg});
    if (!pdf) continue;
    std::string why;
    std::string bytes = svg_to_pdf(svg, why);
    if (bytes.empty()) {
      pdf = false;  // one notice, not one per figure
      set.notice = why;
      continue;
    }
    set.files.push_back({{path + ".pdf", "--plots"}, std::move(bytes)});
  }
  if (figures.empty()) set.notice = "--plots: no plot can be drawn from these results (nothing was timed)";
  return set;
}

}  // namespace convbench
