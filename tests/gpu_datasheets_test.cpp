// The GPU datasheet table (results/gpu_datasheets.hpp) behind --limits NAME and a recorded GPU's
// roof: every row complete, sourced and plausible; each name CUDA gives a part found as that part
// and no other; and device_limits drawing from it, per dtype.
#include <gtest/gtest.h>

#include <set>

#include "results/device_limits.hpp"
#include "results/gpu_datasheets.hpp"

namespace convbench {
namespace {

TEST(DeviceDatasheets, EveryRowIsCompleteSourcedAndPlausible) {
  std::set<std::string> names;
  for (const GpuDatasheet& d : gpu_datasheets()) {
    SCOPED_TRACE(d.name);
    EXPECT_TRUE(names.insert(d.name).second) << "a name twice";
    EXPECT_FALSE(d.title.empty());
    // A vendor document, and where to find it.
    EXPECT_NE(d.source.find("NVIDIA"), std::string::npos) << d.source;
    EXPECT_NE(d.source.find("https://"), std::string::npos) << d.source;
    EXPECT_FALSE(d.note.empty());
    EXPECT_FALSE(d.has.empty());
    // Datacenter and desktop GPUs of 2017-2024: 10-100 TFLOP/s of float32, 0.2-10 TB/s.
    EXPECT_GE(d.float32, 10e12);
    EXPECT_LE(d.float32, 100e12);
    EXPECT_GE(d.bandwidth_bytes_per_s, 0.2e12);
    EXPECT_LE(d.bandwidth_bytes_per_s, 10e12);
    // Every dtype has a peak, or the note says why not; tensor-core math is never slower than
    // float32's, and float16 at least tf32's (half the bits per operand).
    for (const char* dtype : {"float32", "tf32", "float16", "bfloat16"}) {
      const auto peak = datasheet_peak_flops(d, dtype);
      if (!peak) {
        EXPECT_NE(d.note.find(dtype), std::string::npos) << dtype << " has no peak and the note does not say why";
        continue;
      }
      EXPECT_TRUE(plausible_device_limits(*peak, d.bandwidth_bytes_per_s)) << dtype;
      EXPECT_GE(*peak, d.float32) << dtype;
      EXPECT_LE(*peak, 20 * d.float32) << dtype;  // dense tensor rates are at most ~15x float32's
    }
    EXPECT_GE(d.float16, d.tf32);
    EXPECT_GT(d.float16, 0);
    EXPECT_EQ(find_gpu_datasheet(d.name), &d);
  }
  for (const char* wanted :
       {"h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "l4", "l40s", "a10", "v100-sxm2", "rtx-4090"})
    EXPECT_TRUE(names.count(wanted)) << wanted;
  EXPECT_EQ(find_gpu_datasheet("h100"), nullptr);
  EXPECT_EQ(gpu_datasheet_names().rfind("h100-sxm, h100-pcie, h200, ", 0), 0u) << gpu_datasheet_names();
}

// cudaDeviceProp::name of each part as results record it: found as that part, and parts with
// other limits (NVL, PCIe A100, A10G, GH200, the L40) as none rather than a neighbour.
TEST(DeviceDatasheets, RecordedNamesFindTheirPartOnly) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H100 NVL", nullptr},
      {"NVIDIA H200", "h200"},
      {"NVIDIA H200 NVL", nullptr},
      {"NVIDIA GH200 480GB", nullptr},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"NVIDIA A100-PCIE-40GB", nullptr},
      {"NVIDIA A100 80GB PCIe", nullptr},
      {"NVIDIA L4", "l4"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L40", nullptr},
      {"NVIDIA A10", "a10"},
      {"NVIDIA A10G", nullptr},
      {"Tesla V100-SXM2-16GB", "v100-sxm2"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2"},
      {"Tesla V100-PCIE-16GB", nullptr},
      {"NVIDIA GeForce RTX 4090", "rtx-4090"},
      {"NVIDIA GeForce RTX 4090 D", nullptr},
      {"AMD EPYC 7B13", nullptr},
      {"", nullptr},
  };
  for (const auto& [gpu, expected] : cases) {
    const GpuDatasheet* d = gpu_datasheet_for(gpu);
    EXPECT_EQ(d ? d->name : std::string("none"), expected ? expected : "none") << gpu;
  }
}

TEST(DeviceDatasheets, DatasheetLimitsPerDtype) {
  const GpuDatasheet& v100 = *find_gpu_datasheet("v100-sxm2");
  EXPECT_FALSE(datasheet_limits(v100, "bfloat16"));  // no bfloat16 arithmetic on Volta
  const auto tf32 = datasheet_limits(v100, "tf32");
  ASSERT_TRUE(tf32);
  EXPECT_DOUBLE_EQ(tf32->peak_flops, 15.7e12);  // no TF32 tensor cores: float32's rate
  EXPECT_EQ(tf32->source, "V100 SXM2 datasheet (tf32, dense)");
  EXPECT_EQ(tf32->datasheet, "v100-sxm2");
  EXPECT_EQ(tf32->dtype, "tf32");

  // --limits on the GPU that ran the rows is that GPU's datasheet; on another, a lower bound there.
  const GpuDatasheet& h100 = *find_gpu_datasheet("h100-sxm");
  EXPECT_FALSE(named_device_limits(h100, "float32", {{"gpu_name", "NVIDIA H100 80GB HBM3"}})->other_device);
  const auto elsewhere = named_device_limits(h100, "float32", {{"cpu", "Test CPU"}});
  ASSERT_TRUE(elsewhere);
  EXPECT_TRUE(elsewhere->other_device);

  // Recorded for float32, they still give a float16 block its own peak from the same datasheet.
  const nlohmann::json provenance = {{"device_limits", device_limits_json(*elsewhere)}};
  const auto half = device_limits(provenance, "float16");
  ASSERT_TRUE(half);
  EXPECT_DOUBLE_EQ(half->peak_flops, 989e12);
  EXPECT_TRUE(half->other_device);
  // A measurement recorded for float32 says nothing about a float16 block on a device without a
  // datasheet; limits given for every dtype (no dtype recorded) hold for all.
  DeviceLimits measured{200e9, 28e9, "measured on this CPU"};
  measured.dtype = "float32";
  EXPECT_FALSE(device_limits({{"device_limits", device_limits_json(measured)}}, "float16"));
  EXPECT_TRUE(device_limits({{"device_limits", device_limits_json(measured)}}, "float32"));
  measured.dtype.clear();
  EXPECT_TRUE(device_limits({{"device_limits", device_limits_json(measured)}}, "float16"));
}

}  // namespace
}  // namespace convbench
