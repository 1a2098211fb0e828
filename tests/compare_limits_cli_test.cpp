// compare records the device limits it knows without measuring anything (a trusted cached
// measurement of this cpu, --limits NAME) in provenance.device_limits, and its HTML roofline draws
// the roof from them; with none, it measures nothing and says why when a roofline is drawn.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"
#include "pipeline/cpu_limits_cache.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::temp_path;

const char* kSpec =
    "blocks:\n"
    "  - name: tiny\n"
    "    batch: 2\n"
    "    in_channels: 8\n"
    "    out_channels: 8\n"
    "    size: [6, 6]\n"
    "    variants: [standard, separable]\n";

const char* kQuick = " --device cpu --min-time 0 --min-samples 2 --max-noise 1000 --timeout 0.2 -q";

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A scratch folder as $CONVBENCH_CACHE_DIR, with the spec, for one test.
struct Scratch {
  std::string dir = temp_path("compare_limits");
  std::string spec = dir + "/tiny.yaml", json = dir + "/r.json", html = dir + "/r.html";
  std::string cache = dir + "/device-limits.json";
  Scratch() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(spec) << kSpec;
    ::setenv("CONVBENCH_CACHE_DIR", dir.c_str(), 1);
  }
  ~Scratch() {
    ::unsetenv("CONVBENCH_CACHE_DIR");
    std::filesystem::remove_all(dir);
  }
  // What explain caches after a measurement on a quiet machine, for this machine and build.
  void cache_quiet_measurement(double peak_flops, double bandwidth) const {
    const std::string analyzed = dir + "/a.json";
    ASSERT_EQ(run_cli("analyze " + spec + " --json " + analyzed).exit_code, 0);
    const nlohmann::json provenance = nlohmann::json::parse(read_file(analyzed))["provenance"];
    CpuLimitsMeasurement m{peak_flops, bandwidth, "a stand-in", {}};
    m.activity.wall_s = 1;
    m.activity.threads = m.activity.cpus = 2;
    m.activity.cpu_pressure_share = 0.0;
    const DeviceLimits limits{peak_flops, bandwidth, "measured on this CPU on 2026-11-27T10:00:00Z: a stand-in"};
    const nlohmann::json doc = {
        {"schema", kLimitsCacheSchema},
        {"entries", {{cpu_limits_cache_key(provenance), cpu_limits_entry(limits, m, provenance)}}}};
    std::ofstream(cache) << doc.dump();
  }
};

TEST(CompareLimitsCli, RecordsATrustedCachedMeasurementAndDrawsTheRoof) {
  Scratch s;
  s.cache_quiet_measurement(211.7e9, 28.8e9);
  const auto r = run_cli("compare " + s.spec + kQuick + " --json " + s.json + " --html " + s.html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("measuring"), std::string::npos) << r.err;
  const nlohmann::json limits = nlohmann::json::parse(read_file(s.json))["provenance"]["device_limits"];
  EXPECT_DOUBLE_EQ(limits["peak_flops"].get<double>(), 211.7e9);
  EXPECT_DOUBLE_EQ(limits["bandwidth_bytes_per_s"].get<double>(), 28.8e9);
  EXPECT_EQ(limits["dtype"], "float32");
  EXPECT_EQ(limits["source"], "measured on this CPU on 2026-11-27T10:00:00Z: a stand-in");
  const std::string html = read_file(s.html);
  EXPECT_EQ(count_of(html, "class=\"roof-line\""), 1u);
  EXPECT_NE(html.find("Roof: measured on this CPU on 2026-11-27T10:00:00Z: a stand-in."), std::string::npos);
  EXPECT_EQ(html.find("Device limits unknown"), std::string::npos);
}

TEST(CompareLimitsCli, WithoutACachedMeasurementNothingIsMeasured) {
  Scratch s;
  auto r = run_cli("compare " + s.spec + kQuick + " --json " + s.json + " --html " + s.html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("measuring"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no measurement of this CPU's limits is cached in " + s.cache +
                       ", and this command does not measure them: `convbench explain` does"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(nlohmann::json::parse(read_file(s.json))["provenance"].contains("device_limits"));
  EXPECT_NE(read_file(s.html).find("Device limits unknown"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(s.cache));
  // No roofline asked for: nothing to say.
  r = run_cli("compare " + s.spec + kQuick + " --json " + s.json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(CompareLimitsCli, NamedGpuRoofIsALowerBoundThere) {
  Scratch s;
  const auto r = run_cli("compare " + s.spec + kQuick + " --limits h100-sxm --json " + s.json + " --html " + s.html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json limits = nlohmann::json::parse(read_file(s.json))["provenance"]["device_limits"];
  EXPECT_EQ(limits["datasheet"], "h100-sxm");
  EXPECT_EQ(limits["other_device"], true);
  EXPECT_DOUBLE_EQ(limits["peak_flops"].get<double>(), 67e12);
  const std::string html = read_file(s.html);
  EXPECT_EQ(count_of(html, "class=\"roof-line\""), 1u);
  EXPECT_NE(html.find("Roof: h100-sxm, from its H100 SXM datasheet (float32, dense), a GPU these rows did not run on. "
                      "Floor on h100-sxm from its datasheet = max(FLOPs / peak, bytes / bandwidth), a lower bound, "
                      "not a prediction: standard: floor "),
            std::string::npos);
  EXPECT_EQ(html.find("% of the roof"), std::string::npos);
}

}  // namespace
}  // namespace convbench
