// How reports and explanations name the runtime a time was measured on. A speed is a fact about
// a runtime, not a block: the same separable block can be 0.20x the baseline on convbench's cpu
// runtime and 1.08x on PyTorch eager on the same CPU, so every sentence that concludes about speed
// says which.
#pragma once

#include <string>

namespace convbench {

// The engine's name without its version, as people write it: "convbench 0.1.0" -> "convbench",
// "pytorch 2.15.0+cu132" -> "PyTorch"; "" -> "convbench" (a file without an engine is ours).
std::string engine_display_name(const std::string& engine);
// "convbench (cpu)", "PyTorch (cuda)"; the engine alone without a device.
std::string runtime_label(const std::string& engine, const std::string& device);
// "convbench's cpu runtime", "PyTorch's cuda runtime": the end of "... is slower on ___".
std::string runtime_phrase(const std::string& engine, const std::string& device);

}  // namespace convbench
