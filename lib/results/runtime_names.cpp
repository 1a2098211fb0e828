#include "results/runtime_names.hpp"

namespace convbench {

std::string engine_display_name(const std::string& engine) {
  const std::string name = engine.substr(0, engine.find(' '));
  if (name.empty()) return "convbench";
  if (name == "pytorch") return "PyTorch";
  return name;
}

std::string runtime_label(const std::string& engine, const std::string& device) {
  return engine_display_name(engine) + (device.empty() ? "" : " (" + device + ")");
}

std::string runtime_phrase(const std::string& engine, const std::string& device) {
  return engine_display_name(engine) + "'s " + (device.empty() ? "" : device + " ") + "runtime";
}

}  // namespace convbench
