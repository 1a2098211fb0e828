// Which limits an explanation uses (pipeline/device_limits_choice.hpp): a GPU's own measurement
// over its datasheet, which the source then names; the datasheet when the measurement is missing
// or implausible; the user's numbers over both.
#include <gtest/gtest.h>

#include <sstream>

#include "pipeline/device_limits_choice.hpp"

namespace convbench {
namespace {

const nlohmann::json kH100 = {{"gpu", {{"name", "NVIDIA H100 80GB HBM3"}}}, {"date", "2026-11-25T21:00:00Z"}};

TEST(DeviceLimitsChoice, GpuMeasurementWinsAndNamesTheDatasheet) {
  std::ostringstream notices;
  const MeasuredLimits m{790e12, 3.0e12, "a 1 GiB device-to-device copy and a cuDNN 1x1 convolution of bfloat16"};
  const auto l = choose_device_limits({}, "cuda", "bfloat16", kH100, notices, m);
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->peak_flops, 790e12);
  EXPECT_DOUBLE_EQ(l->bandwidth_bytes_per_s, 3.0e12);
  EXPECT_NE(l->source.find("measured on NVIDIA H100 80GB HBM3 on 2026-11-25T21:00:00Z: a 1 GiB"), std::string::npos)
      << l->source;
  EXPECT_NE(l->source.find("H100 SXM datasheet (bfloat16, dense): 989 TFLOP/s, 3.35 TB/s"), std::string::npos)
      << l->source;
}

TEST(DeviceLimitsChoice, GpuWithoutAPlausibleMeasurementUsesTheDatasheet) {
  std::ostringstream notices;
  const auto none = choose_device_limits({}, "cuda", "float32", kH100, notices);
  ASSERT_TRUE(none.has_value());
  EXPECT_NE(none->source.find("datasheet"), std::string::npos);
  const MeasuredLimits broken{0.0, 3.0e12, "a copy and a product that measured nothing"};
  const auto implausible = choose_device_limits({}, "cuda", "float32", kH100, notices, broken);
  ASSERT_TRUE(implausible.has_value());
  EXPECT_DOUBLE_EQ(implausible->peak_flops, none->peak_flops);
  // An unknown GPU without a measurement has no limits.
  EXPECT_FALSE(choose_device_limits({}, "cuda", "float32", {{"gpu", {{"name", "Some GPU"}}}}, notices));
}

TEST(DeviceLimitsChoice, GivenLimitsWinOverAMeasurement) {
  std::ostringstream notices;
  LimitsRequest given;
  given.peak_flops = 1e12;
  given.bandwidth = 1e11;
  const auto l = choose_device_limits(given, "cuda", "float32", kH100, notices, MeasuredLimits{790e12, 3e12, "m"});
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->peak_flops, 1e12);
  EXPECT_EQ(l->source, "given with --peak-flops and --bandwidth");
}

}  // namespace
}  // namespace convbench
