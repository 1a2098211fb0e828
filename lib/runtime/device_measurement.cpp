#include "runtime/device_measurement.hpp"

#include <chrono>
#include <stdexcept>

namespace convbench {

std::unique_ptr<ReplayableWork> DeviceMeasurement::capture(const std::function<void()>& /*work*/) {
  throw std::logic_error("capture() called although replay_unsupported() says why it cannot: " +
                         replay_unsupported().value_or("(no reason given)"));
}

double HostMeasurement::time_ms(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::optional<std::string> HostMeasurement::replay_unsupported() const {
  return "the " + backend_name_ +
         " backend runs every op from the host, so there is no device work to record; "
         "graph replay (CUDA graphs) needs --device cuda";
}

}  // namespace convbench
