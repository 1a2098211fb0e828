// The `explain` pipeline: `compare` with per-op timing, and for every row the facts an
// explanation is built from (explain/variant_facts.hpp), then the explanation against the
// device's limits (pipeline/device_limits_choice.hpp).
#pragma once

#include <ostream>

#include "explain/explanation.hpp"
#include "pipeline/compare.hpp"
#include "pipeline/device_limits_choice.hpp"
#include "results/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

struct ExplainOptions {
  CompareOptions compare;  // per_op_steps 0 is raised to kExplainPerOpSteps unless memory only
  LimitsRequest limits;
};

// Per-op medians over this many extra steps when the user did not choose.
inline constexpr int kExplainPerOpSteps = 10;

struct ExplainRun {
  ResultSet results;  // with provenance.device_limits when limits were found
  Explanation explanation;
};

ExplainRun explain(const Spec& spec, ExplainOptions options, std::ostream& notices);

}  // namespace convbench
