// The provenance records what convbench cannot refuse or choose (the machine's name, the spec's
// path) as UTF-8 text, so that a run on a host named in Latin-1 is written as JSON and kept in
// the history instead of failing after the measurement (issue 37, item 2).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <random>

#include <fstream>
#include <sstream>

#include "backends/reference/reference_backend.hpp"
#include "build_info.hpp"
#include "history/history_store.hpp"
#include "measure/provenance.hpp"
#include "results/json_results.hpp"
#include "results/sample_stats.hpp"
#include "spec/spec_loader.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

TEST(Provenance, ALatin1HostAndSpecPathAreRecordedEscapedAndTheRunIsKept) {
  const Spec spec = parse_spec_text(
      "blocks:\n  - name: b\n    batch: 1\n    in_channels: 4\n    out_channels: 4\n    size: 4\n"
      "    variants: [standard]\n",
      "sp\xe9"
      "c.yaml");
  ResultSet set;
  set.engine = engine_name();
  set.device = "reference";
  set.provenance = collect_provenance(spec, nullptr, "h\xe9te");
  EXPECT_EQ(set.provenance["host_name"], "h\\xe9te");
  EXPECT_EQ(set.provenance["spec_file"], "sp\\xe9c.yaml");
  EXPECT_FALSE(this_host_name().empty());

  ResultRow r;
  r.block = "b";
  r.variant = "standard";
  r.kind = "standard";
  r.dtype = "float32";
  r.layout = "channels_first";
  r.mode = "infer";
  r.device = "reference";
  r.forward = summarize({1.0, 1.1, 0.9}, "noise");
  set.rows.push_back(r);
  // The writer's own dump, without the safety net: nothing in it is left that is not UTF-8.
  EXPECT_NO_THROW((void)results_to_json(set).dump(2));

  const fs::path dir = fs::temp_directory_path() / ("convbench-provenance-test-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const std::string db = (dir / "h.sqlite").string();
  add_runs(db, {history_run_from_results(set, "r.json")});
  HistoryReader history(db);
  const std::vector<StoredSeries> series = history.series();
  ASSERT_EQ(series.size(), 1u);
  const std::vector<StoredMeasurement> m = history.measurements(series[0].id);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].host, "h\\xe9te");
  fs::remove_all(dir);
}

// A run's metadata names only what the run used: a CPU or reference run records no CUDA or cuDNN
// version, even from a build that has the CUDA backend (cuda_built says that).
TEST(Provenance, AHostRunNamesNoCudaLibraries) {
  const Spec spec = parse_spec_text(
      "blocks:\n  - {name: b, batch: 1, in_channels: 4, out_channels: 4, size: 4, "
      "variants: [standard]}\n",
      "p.yaml");
  ReferenceBackend reference;
  for (Backend* backend : {static_cast<Backend*>(nullptr), static_cast<Backend*>(&reference)}) {
    const nlohmann::json p = collect_provenance(spec, backend, "host");
    EXPECT_FALSE(p.contains("cuda_version")) << p.dump();
    EXPECT_FALSE(p.contains("cudnn_version")) << p.dump();
    EXPECT_TRUE(p.contains("onednn_version"));
    EXPECT_TRUE(p.contains("cuda_built"));
  }
}

TEST(Provenance, ACitedRunCarriesItsSpecTextOsAndKernel) {
  // What a paper's reader needs to rerun a result: the spec itself, not only its path and hash,
  // and the OS and kernel beside the CPU and libraries.
  const std::string text =
      "blocks:\n  - {name: b, batch: 1, in_channels: 4, out_channels: 4, size: 4, variants: [standard]}\n";
  const std::string path = (fs::temp_directory_path() / ("cite-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream(path) << text;
  const nlohmann::json p = collect_provenance(load_spec_file(path), nullptr);
  EXPECT_EQ(p.at("spec_text"), text);
  EXPECT_FALSE(p.at("os").get<std::string>().empty());
  EXPECT_EQ(p.at("kernel").get<std::string>().rfind("Linux ", 0), 0u) << p.at("kernel");
  fs::remove(path);
}

TEST(Provenance, TheCitationFileNamesThisVersion) {
  std::ifstream in(std::string(CONVBENCH_SOURCE_DIR) + "/CITATION.cff");
  ASSERT_TRUE(in) << "CITATION.cff is missing at the repository's root";
  std::stringstream all;
  all << in.rdbuf();
  const std::string cff = all.str();
  EXPECT_EQ(cff.rfind("cff-version: 1.2.0\n", 0), 0u);
  EXPECT_NE(cff.find("\nversion: " + std::string(build_info::version) + "\n"), std::string::npos) << cff;
  for (const char* key : {"\nmessage:", "\ntitle:", "\nauthors:"}) EXPECT_NE(cff.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace convbench
