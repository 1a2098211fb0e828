// Which limits an explanation uses (pipeline/device_limits_choice.hpp): a GPU's own measurement
// over its datasheet, which the source then names; the datasheet when the measurement is missing
// or implausible; the user's numbers over both. On the cpu, the cache of measurements: reused only
// when this build measured them on a quiet machine, measured again (saying why) otherwise.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_harness.hpp"
#include "pipeline/cpu_limits_cache.hpp"
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

// A mixed-precision row carries float32 (its master weights) but convolves in its low dtype:
// its limits are that dtype's. The H100 datasheet then gives bfloat16's peak, not float32's, and
// the cpu, measured in float32 only, gives none and says how to give them.
TEST(DeviceLimitsChoice, AnAmpRowsLimitsAreItsLowDtypes) {
  ResultRow amp;
  amp.dtype = "float32";
  amp.precision = "amp_bfloat16";
  EXPECT_EQ(compute_dtype(amp), "bfloat16");
  amp.precision = "amp_float16";
  EXPECT_EQ(compute_dtype(amp), "float16");
  ResultRow plain;
  plain.dtype = "tf32";
  EXPECT_EQ(compute_dtype(plain), "tf32");
  std::ostringstream notices;
  const auto gpu = choose_device_limits({}, "cuda", compute_dtype(amp), kH100, notices);
  const auto gpu_float32 = choose_device_limits({}, "cuda", "float32", kH100, notices);
  ASSERT_TRUE(gpu.has_value() && gpu_float32.has_value());
  EXPECT_GT(gpu->peak_flops, 10 * gpu_float32->peak_flops);
  LimitsRequest cached_only;
  cached_only.measure = false;
  EXPECT_FALSE(choose_device_limits(cached_only, "cpu", "bfloat16", {}, notices).has_value());
  EXPECT_NE(notices.str().find("this CPU's limits are measured in float32 (oneDNN sgemm); bfloat16 rows get none: "
                               "give --peak-flops and --bandwidth"),
            std::string::npos)
      << notices.str();
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

// The cpu's limits with a stand-in measurement (the real one takes a second and 800 MiB) that
// counts its calls and reports the machine's activity the test chose.
struct CpuLimitsFixture {
  std::string dir = testing::temp_path("limits_cache");
  std::string cache = dir + "/device-limits.json";
  int measurements = 0;
  double pressure = 0;  // the share of the measurement's time a task waited for a CPU

  CpuLimitsFixture() { std::filesystem::remove_all(dir); }
  ~CpuLimitsFixture() { std::filesystem::remove_all(dir); }

  static nlohmann::json provenance(const std::string& commit) {
    return {{"cpu", "Test CPU 3000"},     {"threads", 2},         {"onednn_version", "2.7.3"},
            {"convbench_version", "0.1"}, {"git_commit", commit}, {"date", "2026-11-27T10:00:00Z"}};
  }
  LimitsRequest request() {
    LimitsRequest r;
    r.cache_path = cache;
    r.measure_cpu = [this] {
      ++measurements;
      CpuLimitsMeasurement m{211.7e9, 28.8e9, "a stand-in", {}};
      m.activity.wall_s = 1.0;
      m.activity.threads = m.activity.cpus = 2;
      m.activity.cpu_pressure_share = pressure;
      m.activity.steal_share = 0.0;
      return m;
    };
    return r;
  }
  std::optional<DeviceLimits> choose(const std::string& commit, std::string& said, const LimitsRequest& r) {
    std::ostringstream notices;
    auto l = choose_device_limits(r, "cpu", "float32", provenance(commit), notices);
    said = notices.str();
    return l;
  }
  std::optional<DeviceLimits> choose(const std::string& commit, std::string& said) {
    return choose(commit, said, request());
  }
  nlohmann::json file() const { return nlohmann::json::parse(testing::read_file(cache)); }
};

TEST(DeviceLimitsChoice, QuietMeasurementIsCachedWithItsTrustAndReused) {
  CpuLimitsFixture f;
  std::string said;
  const auto first = f.choose("aaaa", said);
  ASSERT_TRUE(first);
  EXPECT_EQ(f.measurements, 1);
  EXPECT_TRUE(first->doubt.empty());
  EXPECT_NE(said.find("measuring this CPU's peak FLOP/s"), std::string::npos) << said;
  const nlohmann::json doc = f.file();
  EXPECT_EQ(doc["schema"], kLimitsCacheSchema);
  const nlohmann::json& entry = doc["entries"][cpu_limits_cache_key(CpuLimitsFixture::provenance("aaaa"))];
  EXPECT_EQ(entry["build"], "convbench 0.1 at aaaa");
  EXPECT_EQ(entry["date"], "2026-11-27T10:00:00Z");
  EXPECT_EQ(entry["trust"], "ok");
  EXPECT_DOUBLE_EQ(entry["host_activity"]["cpu_pressure_share"].get<double>(), 0.0);

  const auto again = f.choose("aaaa", said);
  ASSERT_TRUE(again);
  EXPECT_EQ(f.measurements, 1);  // reused
  EXPECT_EQ(said, "");
  EXPECT_DOUBLE_EQ(again->peak_flops, 211.7e9);
}

TEST(DeviceLimitsChoice, MeasurementOnABusyMachineIsFlaggedAndNotReused) {
  CpuLimitsFixture f;
  f.pressure = 0.43;  // a disturbed row's evidence, by the rows' own threshold
  std::string said;
  const auto busy = f.choose("aaaa", said);
  ASSERT_TRUE(busy);  // used for this run...
  EXPECT_NE(busy->doubt.find("measured while the machine was busy (a runnable task waited for a CPU 43% of the time"),
            std::string::npos)
      << busy->doubt;
  EXPECT_NE(said.find("convbench: warning: this CPU's limits were measured while the machine was busy"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("not cached"), std::string::npos) << said;
  EXPECT_FALSE(std::filesystem::exists(f.cache));  // ...never reused

  f.pressure = 0.0;
  const auto quiet = f.choose("aaaa", said);
  ASSERT_TRUE(quiet);
  EXPECT_EQ(f.measurements, 2);
  EXPECT_TRUE(quiet->doubt.empty());

  // An entry written on a busy machine (by hand, or by another tool) is judged when read.
  nlohmann::json doc = f.file();
  doc["entries"].begin().value()["host_activity"]["cpu_pressure_share"] = 0.3;
  std::ofstream(f.cache) << doc.dump();
  ASSERT_TRUE(f.choose("aaaa", said));
  EXPECT_EQ(f.measurements, 3);
  EXPECT_NE(said.find("were measured while the machine was busy (a runnable task waited for a CPU 30% of the time"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("measuring them again"), std::string::npos) << said;
}

TEST(DeviceLimitsChoice, CacheOfAnotherBuildIsMeasuredAgain) {
  CpuLimitsFixture f;
  std::string said;
  ASSERT_TRUE(f.choose("aaaa", said));
  ASSERT_TRUE(f.choose("bbbb", said));
  EXPECT_EQ(f.measurements, 2);
  EXPECT_NE(said.find("were measured by another build (convbench 0.1 at aaaa, on 2026-11-27T10:00:00Z; this is "
                      "convbench 0.1 at bbbb): measuring them again"),
            std::string::npos)
      << said;
  EXPECT_EQ(f.file()["entries"].begin().value()["build"], "convbench 0.1 at bbbb");
}

TEST(DeviceLimitsChoice, OldFormatCacheIsMeasuredAgain) {
  CpuLimitsFixture f;
  std::filesystem::create_directories(f.dir);
  const std::string key = cpu_limits_cache_key(CpuLimitsFixture::provenance("aaaa"));
  // What convbench wrote before its entries carried their trust: the numbers a loaded run measured.
  const nlohmann::json old = {
      {"schema", "convbench.device_limits/1"},
      {"entries", {{key, {{"peak_flops", 100.7e9}, {"bandwidth_bytes_per_s", 16e9}, {"source", "measured"}}}}}};
  std::ofstream(f.cache) << old.dump();
  std::string said;
  const auto l = f.choose("aaaa", said);
  ASSERT_TRUE(l);
  EXPECT_EQ(f.measurements, 1);
  EXPECT_DOUBLE_EQ(l->peak_flops, 211.7e9);
  EXPECT_NE(said.find("have no record of what else the machine did while they were measured (an older convbench "
                      "wrote them): measuring them again"),
            std::string::npos)
      << said;
  EXPECT_EQ(f.file()["schema"], kLimitsCacheSchema);
}

TEST(DeviceLimitsChoice, WithoutMeasuringOnlyATrustedEntryIsUsed) {
  CpuLimitsFixture f;
  LimitsRequest cached_only = f.request();
  cached_only.measure = false;
  std::string said;
  EXPECT_FALSE(f.choose("aaaa", said, cached_only));
  EXPECT_EQ(f.measurements, 0);
  EXPECT_NE(said.find("this command does not measure them"), std::string::npos) << said;
  ASSERT_TRUE(f.choose("aaaa", said));  // measured and cached (explain)
  const auto l = f.choose("aaaa", said, cached_only);
  ASSERT_TRUE(l);
  EXPECT_EQ(f.measurements, 1);
  EXPECT_FALSE(f.choose("bbbb", said, cached_only));
  EXPECT_NE(said.find("another build"), std::string::npos) << said;
  EXPECT_NE(said.find(": not used"), std::string::npos) << said;
  EXPECT_EQ(f.measurements, 1);
}

}  // namespace
}  // namespace convbench
