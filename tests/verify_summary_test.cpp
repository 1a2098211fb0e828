// The verify command's tolerances and summary line (pipeline/verify.hpp): each check keeps the
// tolerance it allowed, plain and AMP steps have their own, and the summary names each once.
#include <gtest/gtest.h>

#include "pipeline/verify.hpp"

namespace convbench {
namespace {

DumpCheck check(const std::string& variant, double tolerance, double error) {
  DumpCheck c;
  c.block = "b";
  c.variant = variant;
  c.tolerance = tolerance;
  c.tensors.push_back({.name = "output", .rel_error = error, .ok = error <= tolerance});
  c.status = error <= tolerance ? DumpCheckStatus::ok : DumpCheckStatus::mismatch;
  return c;
}

// A tensor that agrees only by being as close to the float64 step as the peer's is says so, with
// both distances; one that agrees with the peer says nothing more.
TEST(VerifySummary, SaysWhereThePeerIsTheOneOffExactArithmetic) {
  Verification v;
  v.device = "reference";
  v.checks = {check("amp", 5e-2, 2e-2)};
  DumpCheck closer = check("closer", 5e-2, 2e-2);
  closer.tensors.push_back({.name = "shortcut.conv.bias grad",
                            .rel_error = 0.229,
                            .ok = true,
                            .ours_from_truth = 4e-3,
                            .peer_from_truth = 0.231});
  v.checks.push_back(closer);
  const std::string text = format_verification(v);
  EXPECT_NE(text.find("b / closer: shortcut.conv.bias grad differs from PyTorch's by 2.29e-01, beyond the tolerance, "
                      "but is 4.00e-03 from the float64 step, where PyTorch's is 2.31e-01: convbench's is the closer "
                      "to exact arithmetic (agrees)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("b / amp:"), std::string::npos) << text;
}

TEST(VerifySummary, AmpStepsHaveTheirOwnTolerance) {
  EXPECT_EQ(default_tolerance("reference", Precision::plain), 1e-9);
  EXPECT_EQ(default_tolerance("cpu", Precision::plain), 1e-4);
  EXPECT_EQ(default_tolerance("reference", Precision::amp_bfloat16), 5e-2);
  EXPECT_EQ(default_tolerance("reference", Precision::amp_float16), 5e-2);
}

TEST(VerifySummary, NamesEachToleranceOnce) {
  Verification v;
  v.device = "reference";
  v.checks = {check("plain", 1e-9, 1e-14), check("amp", 5e-2, 2e-2), check("amp2", 5e-2, 6e-2)};
  const std::string text = format_verification(v);
  EXPECT_NE(text.find("2 variants agree with PyTorch within 1e-09 (plain) and 0.05 (AMP) on reference; 1 failed"),
            std::string::npos)
      << text;
  v.checks.resize(1);
  EXPECT_NE(format_verification(v).find("1 variants agree with PyTorch within 1e-09 on reference; 0 failed"),
            std::string::npos)
      << format_verification(v);
}

}  // namespace
}  // namespace convbench
