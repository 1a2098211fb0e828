#include "runtime/backend.hpp"

#include <chrono>

namespace convbench {

double Backend::time_ms(const std::function<void()>& work) {
  synchronize();
  const auto start = std::chrono::steady_clock::now();
  work();
  synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace convbench
