// The reference backend's backward of every op against central finite differences of its own
// forward, in float64: L = sum(out * R) for a fixed random R, so grad_output = R and dL/dθ is the
// gradient the backward must produce for every input and parameter element θ.
#include <gtest/gtest.h>

#include <ostream>

#include "backends/reference/reference_backend.hpp"
#include "reference_op_harness.hpp"

namespace convbench {
namespace {

using reftest::OpCase;
using reftest::OpHarness;

constexpr double kStep = 1e-6;
// Central differences in float64 with h = 1e-6 are good to about 1e-9 here (rounding of L / h),
// so a relative 1e-6 leaves a wide margin yet catches any wrong term.
constexpr double kTolerance = 1e-6;

// dL/dv[j] by central differences, perturbing the host values the harness uploads.
std::vector<double> numeric_gradient(OpHarness& h, std::vector<double>& values, const std::vector<double>& r) {
  std::vector<double> grad(values.size());
  for (size_t j = 0; j < values.size(); ++j) {
    const double original = values[j];
    values[j] = original + kStep;
    const double plus = reftest::dot(h.forward(true), r);
    values[j] = original - kStep;
    const double minus = reftest::dot(h.forward(true), r);
    values[j] = original;
    grad[j] = (plus - minus) / (2 * kStep);
  }
  return grad;
}

void expect_gradient_matches(const std::vector<double>& analytic, const std::vector<double>& numeric,
                             const std::string& what) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  const double scale = reftest::max_abs(analytic);
  // A vanishing gradient would make the comparison prove nothing.
  ASSERT_GT(scale, 1e-3) << what << ": the analytic gradient is (nearly) zero";
  size_t worst = 0;
  double worst_error = -1.0;
  for (size_t j = 0; j < analytic.size(); ++j) {
    const double e = std::abs(analytic[j] - numeric[j]);
    if (!(e <= worst_error)) {  // NaN counts as worst
      worst = j;
      worst_error = e;
    }
  }
  EXPECT_LE(worst_error, kTolerance * scale) << what << ": element " << worst << " analytic " << analytic[worst]
                                             << " numeric " << numeric[worst] << " (largest gradient " << scale << ")";
}

struct GradcheckCase {
  OpCase op_case;
  Layout layout;
};

void PrintTo(const GradcheckCase& c, std::ostream* os) { *os << c.op_case.name << " " << to_string(c.layout); }

std::vector<GradcheckCase> gradcheck_cases() {
  std::vector<GradcheckCase> cases;
  for (const OpCase& c : reftest::op_cases())
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) cases.push_back({c, layout});
  return cases;
}

class ReferenceGradcheck : public ::testing::TestWithParam<GradcheckCase> {};

TEST_P(ReferenceGradcheck, BackwardMatchesFiniteDifferences) {
  const auto& [op_case, layout] = GetParam();
  ReferenceBackend backend;
  OpHarness h(backend, reftest::build_case(op_case, DType::float64, layout), 7);
  const std::vector<double> r = reftest::random_values(h.output_desc().numel(), 99);
  h.forward(true);
  const reftest::OpGradients analytic = h.backward(r);

  const Op& op = h.op();
  for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
    const std::vector<double> numeric = numeric_gradient(h, h.inputs[pos], r);
    // An aliased gradient is grad_output itself: the numeric one must equal R.
    const std::vector<double>& expected = analytic.inputs[pos] ? *analytic.inputs[pos] : r;
    expect_gradient_matches(expected, numeric, "input " + std::to_string(pos));
  }
  ASSERT_EQ(analytic.params.size(), op.params.size());
  for (size_t p = 0; p < op.params.size(); ++p) {
    const std::vector<double> numeric = numeric_gradient(h, h.params[p], r);
    expect_gradient_matches(analytic.params[p], numeric, h.graph().params[static_cast<size_t>(op.params[p])].name);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ReferenceGradcheck, ::testing::ValuesIn(gradcheck_cases()),
                         [](const ::testing::TestParamInfo<GradcheckCase>& info) {
                           return info.param.op_case.name + "_" + std::string(to_string(info.param.layout));
                         });

}  // namespace
}  // namespace convbench
