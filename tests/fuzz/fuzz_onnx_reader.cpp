// libFuzzer harness: any bytes as an ONNX file ({kind: onnx, file}), then, when it reads as a
// block, a spec of that block's shapes built and counted as `analyze` does. Bad input may only
// end in an InputError; anything else (a crash, a sanitizer finding, another exception) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "onnx/onnx_model.hpp"
#include "pipeline/analyze.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"

namespace {

// The folder the harness writes each input to, made once per process.
const std::string& scratch() {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() / "convbench-fuzz-onnx-XXXXXX").string();
    return std::string(::mkdtemp(d.data()) ? d : "/tmp");
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  convbench::OnnxBlock block;
  try {
    // In the scratch folder: external data an input names is looked for there, never elsewhere.
    block = convbench::parse_onnx_block(bytes, scratch() + "/block.onnx");
  } catch (const convbench::InputError&) {
    return 0;
  }
  // A block of the file's own input shape (symbolic dims: 2), small enough to count quickly.
  const auto dim = [&](size_t i) { return block.input_shape[i].value_or(2); };
  for (size_t i = 0; i < block.input_shape.size(); ++i)
    if (dim(i) > (i < 2 ? 64 : 32)) return 0;
  const std::string file = scratch() + "/block.onnx";
  std::ofstream(file, std::ios::binary) << bytes;
  std::string spatial = "[";
  for (size_t i = 2; i < block.input_shape.size(); ++i) spatial += (i > 2 ? ", " : "") + std::to_string(dim(i));
  const std::string spec = "blocks:\n  - name: fuzz\n    dims: " + std::to_string(block.input_shape.size() - 2) +
                           "\n    batch: " + std::to_string(dim(0)) + "\n    in_channels: " + std::to_string(dim(1)) +
                           "\n    out_channels: " + std::to_string(block.output_channels.value_or(1)) +
                           "\n    size: " + spatial + "]\n    variants:\n      - {kind: onnx, file: " + file + "}\n";
  try {
    convbench::analyze_spec(convbench::parse_spec_text(spec, scratch() + "/fuzz.yaml", convbench::SpecLimits{64, {}}));
  } catch (const convbench::InputError&) {
  }
  return 0;
}
