#include "runtime/loss_scaler.hpp"

namespace convbench {

void LossScaler::update(bool found_inf) {
  if (found_inf) {
    scale *= backoff_factor;
    growth_tracker = 0;
    ++skipped_steps;
    return;
  }
  if (++growth_tracker == growth_interval) {
    scale *= growth_factor;
    growth_tracker = 0;
  }
}

double LossScaler::inverse() const { return static_cast<double>(static_cast<float>(1.0 / scale)); }

bool uses_loss_scaling(const Graph& graph, bool training) {
  return training && graph.precision == Precision::amp_float16;
}

}  // namespace convbench
