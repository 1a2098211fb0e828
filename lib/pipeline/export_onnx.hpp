// The `export` pipeline: every variant of every block (and network) of a spec written as one ONNX
// model (onnx/onnx_export.hpp) under DIR/<block>/<variant>.onnx, with the weights a run of that
// spec starts from (the same seed). All or nothing: every model is built and checked in memory
// first, and the files are written by the safe output writer (util/output_writer.hpp), so a
// refused op, a checker error or a write that fails leaves DIR as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace convbench {

struct ExportOptions {
  std::string dir;
  uint64_t seed = 42;  // compare's --seed default: the weights a run starts from
};

struct ExportedModel {
  std::string block, point_label, variant;
  std::string path;  // DIR/<block>/<variant>[__<point>].onnx, each part made safe for a file name
  int64_t nodes = 0, initializers = 0, bytes = 0;
};

// `spec_file`: the spec's path, which no output may replace. InputError (exit 2) naming the
// block, the variant and the op when a model cannot be written, or naming DIR when it is not a
// folder convbench can write in; nothing is written then.
std::vector<ExportedModel> export_onnx(const Spec& spec, const std::string& spec_file, const ExportOptions& options);

// The table and summary line `convbench export` prints.
std::string format_export(const std::vector<ExportedModel>& models, const ExportOptions& options);

}  // namespace convbench
