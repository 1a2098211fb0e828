#include "pipeline/export_onnx.hpp"

#include <build_info.hpp>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "util/input_error.hpp"
#include "util/markup_escape.hpp"
#include "util/output_writer.hpp"
#include "util/text_table.hpp"
#include "variants/variant_builder.hpp"

#ifdef CONVBENCH_WITH_ONNX
#include "onnx/onnx_export.hpp"
#include "ops/param_values.hpp"
#endif

namespace convbench {
namespace {

#ifdef CONVBENCH_WITH_ONNX
namespace fs = std::filesystem;

// A spec name as one path component: letters, digits and _-.,=+ kept, anything else (a slash,
// a space, a control character) an underscore; never hidden, never "." or "..", at most 100 bytes.
std::string safe_component(const std::string& name) {
  std::string out;
  for (const char c : name)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || std::string("_-.,=+").find(c) != std::string::npos) ? c : '_';
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
  return out.substr(0, 100);
}

// DIR as given, without trailing separators ("models/" is the folder "models"); refused when empty.
fs::path export_dir(const std::string& dir) {
  if (dir.empty())
    throw InputError({"command line", 0, 0}, "--onnx", "is empty: give the folder to write the models in");
  fs::path p(dir);
  while (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "new/" -> "new"; "/" stays "/"
  return p;
}

// DIR must be a folder, or not exist yet with a parent folder that does (it is created then).
void check_dir(const fs::path& dir) {
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      throw InputError({dir.string(), 0, 0}, "--onnx", "is not a folder (a file or a link is there): nothing written");
    return;
  }
  const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  if (!fs::is_directory(parent, ec))
    throw InputError({dir.string(), 0, 0}, "--onnx",
                     "its parent folder does not exist (" + parent.string() + "): nothing written");
}

// Creates the folder `path` below DIR, and DIR itself when it is missing, recording each folder
// this command made (and only those) so that a failed write takes away exactly what it added. A
// symbolic link where a folder should be is refused, never followed: the models would be written
// wherever it points, and a cleanup would take it for a folder of ours.
void make_dirs(const fs::path& path, const fs::path& dir, std::vector<fs::path>& made) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (fs::is_symlink(st))
    throw InputError({path.string(), 0, 0}, "--onnx",
                     "is a symbolic link: convbench writes models only into real folders below " + dir.string() +
                         " (nothing written)");
  if (fs::is_directory(st)) return;
  if (fs::exists(st))
    throw InputError({path.string(), 0, 0}, "--onnx", "cannot create the folder: a file is there: nothing written");
  if (path != dir && !path.parent_path().empty()) make_dirs(path.parent_path(), dir, made);
  if (!fs::create_directory(path, ec)) {
    throw InputError({path.string(), 0, 0}, "--onnx",
                     "cannot create the folder: " + (ec ? ec.message() : std::string("something appeared there")) +
                         ": nothing written");
  }
  made.push_back(path);
}

// The file of each model: DIR/<block>/<variant>[__<point>].onnx, every name made safe. Names that
// are safe alike (`a/b` and `a_b`) take the first free `_2`, `_3`, ... so that every model has a
// file of its own and the table says which.
class ModelPaths {
 public:
  explicit ModelPaths(fs::path dir) : dir_(std::move(dir)) {}
  std::string take(const std::string& block, const std::string& stem) {
    const fs::path folder = dir_ / safe_component(block);
    std::string name = stem + ".onnx";
    for (int n = 2; !taken_.insert((folder / name).string()).second; ++n)
      name = stem + "_" + std::to_string(n) + ".onnx";
    return (folder / name).string();
  }

 private:
  fs::path dir_;
  std::set<std::string> taken_;
};
#endif

}  // namespace

std::vector<ExportedModel> export_onnx(const Spec& spec, const std::string& spec_file, const ExportOptions& options) {
#ifndef CONVBENCH_WITH_ONNX
  (void)spec;
  (void)spec_file;
  (void)options;
  throw InputError({"command line", 0, 0}, "--onnx",
                   "this convbench was built without ONNX (CMake CONVBENCH_ONNX=OFF)");
#else
  const fs::path dir = export_dir(options.dir);
  check_dir(dir);
  std::vector<ExportedModel> models;
  std::vector<OutputFile> files;
  ModelPaths paths(dir);
  for (const BlockSpec& block : spec.blocks) {
    const std::string point = point_label(block);
    for (const VariantSpec& v : block.variants) {
      const Graph g = build_variant_graph(block, v);
      OnnxExportInfo info;
      info.model_name = block.name + "/" + v.name;
      info.producer_version = build_info::version;
      info.doc = "convbench export of " + std::string(block.network ? "network" : "block") + " \"" + block.name + "\"" +
                 (point.empty() ? "" : " at " + point) + ", variant \"" + v.name + "\", from " + spec_file +
                 "; weights: convbench's starting weights for seed " + std::to_string(options.seed) +
                 "; computes the inference forward (batch norm with its running statistics, dropout as identity)" +
                 " on logical N, C, spatial tensors (the block's layout is " + std::string(to_string(block.layout)) +
                 ")";
      onnx::ModelProto model;
      try {
        model = export_onnx_model(g, initial_graph_values(g, options.seed), info);
      } catch (const OnnxExportError& e) {
        throw InputError(v.where, v.key_path,
                         (block.network ? "network \"" : "block \"") + block.name + "\", variant \"" + v.name + "\"" +
                             (e.op().empty() ? "" : ", op \"" + e.op() + "\"") +
                             ": cannot be exported to ONNX: " + e.what() + " (nothing written)");
      }
      const std::string path =
          paths.take(block.name, safe_component(v.name) + (point.empty() ? "" : "__" + safe_component(point)));
      ExportedModel m{block.name, point, v.name, path, model.graph().node_size(), model.graph().initializer_size(), 0};
      files.push_back({{path, "--onnx"}, model.SerializeAsString()});
      m.bytes = static_cast<int64_t>(files.back().content.size());
      models.push_back(std::move(m));
    }
  }
  std::vector<fs::path> made;
  try {
    for (const OutputFile& f : files) make_dirs(fs::path(f.where.path).parent_path(), dir, made);
    write_output_files(files, {spec_file});
  } catch (...) {
    std::error_code ec;
    // Only what this command made, deepest first; each is empty (nothing was written in it), and
    // fs::remove takes an empty folder only.
    for (auto it = made.rbegin(); it != made.rend(); ++it) fs::remove(*it, ec);
    throw;
  }
  return models;
#endif
}

std::string format_export(const std::vector<ExportedModel>& models, const ExportOptions& options) {
  TextTable t;
  t.header = {"block", "variant", "file", "nodes", "initializers", "bytes"};
  t.right_aligned = {false, false, false, true, true, true};
  for (const ExportedModel& m : models)
    t.rows.push_back({m.block + (m.point_label.empty() ? "" : " (" + m.point_label + ")"), m.variant, m.path,
                      std::to_string(m.nodes), std::to_string(m.initializers), std::to_string(m.bytes)});
  std::ostringstream out;
  out << t.render_terminal() << models.size()
      << " ONNX models written (opset 17, the inference forward, NCHW), with the starting weights of seed "
      << options.seed << "\n";
  return out.str();
}

}  // namespace convbench
