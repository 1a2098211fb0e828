#include "runtime/backend.hpp"

#include <chrono>
#include <stdexcept>

namespace convbench {

double Backend::time_ms(const std::function<void()>& work) {
  synchronize();
  const auto start = std::chrono::steady_clock::now();
  work();
  synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::optional<std::string> Backend::replay_unsupported() const {
  return "the " + name() +
         " backend runs every op from the host, so there is no device work to record; "
         "graph replay (CUDA graphs) needs --device cuda";
}

std::unique_ptr<ReplayableWork> Backend::capture(const std::function<void()>& /*work*/) {
  throw std::logic_error(name() + " backend: capture() called although replay_unsupported() says why it cannot");
}

}  // namespace convbench
