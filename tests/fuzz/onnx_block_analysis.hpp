// What the ONNX fuzz harnesses do with a file the reader accepted: a spec of that block's shapes
// (symbolic dims: 2), built and counted as `analyze` does. Bad input may only end in an
// InputError, which this lets through to the harness.
#pragma once

#include <fstream>
#include <string>

#include "onnx/onnx_model.hpp"
#include "pipeline/analyze.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::fuzzing {

// `bytes`, which read as `block`, written to `file` (in `dir`) and analysed as a block's one
// variant, unless its sizes are too large to count quickly.
inline void analyze_onnx_block(const OnnxBlock& block, const std::string& bytes, const std::string& file,
                               const std::string& dir) {
  const auto dim = [&](size_t i) { return block.input_shape[i].value_or(2); };
  for (size_t i = 0; i < block.input_shape.size(); ++i)
    if (dim(i) > (i < 2 ? 64 : 32)) return;
  std::ofstream(file, std::ios::binary) << bytes;
  std::string spatial = "[";
  for (size_t i = 2; i < block.input_shape.size(); ++i) spatial += (i > 2 ? ", " : "") + std::to_string(dim(i));
  const std::string spec = "blocks:\n  - name: fuzz\n    dims: " + std::to_string(block.input_shape.size() - 2) +
                           "\n    batch: " + std::to_string(dim(0)) + "\n    in_channels: " + std::to_string(dim(1)) +
                           "\n    out_channels: " + std::to_string(block.output_channels.value_or(1)) +
                           "\n    size: " + spatial + "]\n    variants:\n      - {kind: onnx, file: " + file + "}\n";
  analyze_spec(parse_spec_text(spec, dir + "/fuzz.yaml", SpecLimits{64, {}}));
}

}  // namespace convbench::fuzzing
