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
#include "onnx_block_analysis.hpp"
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
  try {
    convbench::fuzzing::analyze_onnx_block(block, bytes, scratch() + "/block.onnx", scratch());
  } catch (const convbench::InputError&) {
  }
  return 0;
}
