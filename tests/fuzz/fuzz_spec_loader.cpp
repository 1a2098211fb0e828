// libFuzzer harness: any bytes as a spec (YAML, or JSON when the first byte is odd), then, when
// the spec is valid, every variant built and counted as `analyze` does. Bad input may only end in
// a InputError; anything else (a crash, a sanitizer finding, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/analyze.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string name = (data[0] & 1) ? "fuzz.json" : "fuzz.yaml";
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    // Few runs, so that one input cannot make the analysis itself slow.
    const convbench::Spec spec = convbench::parse_spec_text(text, name, convbench::SpecLimits{64, {}});
    convbench::analyze_spec(spec);
  } catch (const convbench::InputError&) {
  }
  return 0;
}
