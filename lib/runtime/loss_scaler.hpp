// Dynamic loss scaling, as torch.amp.GradScaler does it, for a training step under
// `precision: amp_float16` (float16's range is narrow: small gradients would flush to zero). The
// step's upstream gradient is multiplied by the scale before backward; afterwards every float32
// parameter gradient is multiplied by 1/scale and checked for inf and NaN; then the scale is
// updated: halved (and the step counted as skipped) when something was not finite, doubled after
// `growth_interval` finite steps in a row. bfloat16 has float32's range and needs none of it.
//
// GradScaler keeps the scale and the growth tracker on the device (4 bytes each) and allocates an
// inverse scale and a found-inf flag (4 bytes each) for every unscale; convbench's executor and
// memory model count the same bytes (kLossScalerStateBytes, kLossScalerStepBytes).
#pragma once

#include <cstdint>

#include "graph/graph.hpp"

namespace convbench {

inline constexpr int64_t kLossScalerStateBytes = 8;  // scale (float32) and growth tracker (int32)
inline constexpr int64_t kLossScalerStepBytes = 8;   // inverse scale and found-inf flag (float32 each)

struct LossScaler {
  // GradScaler's defaults.
  double scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
  int growth_tracker = 0;     // finite steps since the scale last changed
  int64_t skipped_steps = 0;  // steps whose gradients were not finite (an optimizer would skip them)

  // torch._amp_update_scale_: after a step whose gradients were (not) all finite.
  void update(bool found_inf);
  // 1/scale as GradScaler computes it: in double, then rounded to float32.
  double inverse() const;
};

// Whether a step of this graph scales its loss: training under amp_float16.
bool uses_loss_scaling(const Graph& graph, bool training);

}  // namespace convbench
