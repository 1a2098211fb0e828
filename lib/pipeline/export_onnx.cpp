#include "pipeline/export_onnx.hpp"

#include <build_info.hpp>
#include <cctype>
#include <filesystem>
#include <map>
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

// DIR must be a folder, or not exist yet with a parent folder that does (it is created then).
void check_dir(const std::string& dir) {
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      throw InputError({dir, 0, 0}, "--onnx", "is not a folder (a file or a link is there): nothing written");
    return;
  }
  const fs::path parent = fs::path(dir).parent_path().empty() ? fs::path(".") : fs::path(dir).parent_path();
  if (!fs::is_directory(parent, ec))
    throw InputError({dir, 0, 0}, "--onnx", "its parent folder does not exist: nothing written");
}

// Creates `path` and the folders above it up to an existing one, recording each one made so that
// a failed write can take them away again.
void make_dirs(const fs::path& path, std::vector<fs::path>& made) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) return;
  if (!path.parent_path().empty()) make_dirs(path.parent_path(), made);
  if (!fs::create_directory(path, ec) && ec)
    throw InputError({path.string(), 0, 0}, "--onnx",
                     "cannot create the folder: " + ec.message() + ": nothing written");
  made.push_back(path);
}
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
  check_dir(options.dir);
  std::vector<ExportedModel> models;
  std::vector<OutputFile> files;
  std::map<std::string, int> taken;  // file paths, so that two names made safe alike stay apart
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
      std::string stem = safe_component(v.name) + (point.empty() ? "" : "__" + safe_component(point));
      std::string path = (fs::path(options.dir) / safe_component(block.name) / stem).string();
      const int n = ++taken[path];
      if (n > 1) path += "_" + std::to_string(n);
      path += ".onnx";
      ExportedModel m{block.name, point, v.name, path, model.graph().node_size(), model.graph().initializer_size(), 0};
      files.push_back({{path, "--onnx"}, model.SerializeAsString()});
      m.bytes = static_cast<int64_t>(files.back().content.size());
      models.push_back(std::move(m));
    }
  }
  std::vector<fs::path> made;
  try {
    for (const OutputFile& f : files) make_dirs(fs::path(f.where.path).parent_path(), made);
    write_output_files(files, {spec_file});
  } catch (...) {
    std::error_code ec;
    for (auto it = made.rbegin(); it != made.rend(); ++it) fs::remove(*it, ec);  // empty: nothing was written in them
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
