// `convbench compare SPEC --peer torch` without PyTorch: a missing peer environment is an error
// (exit 2, naming scripts/setup-peers.sh) before any measurement, the flags that cannot go with
// --peer are refused, and a peer that fails on a block leaves convbench's rows standing with a
// warning. The run with PyTorch itself is ctest `compare_peer_end_to_end` (tests/peer_compare_test.py).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"

namespace convbench {
namespace {

using testing::run_cli;
using testing::source_path;
using testing::temp_path;

const std::string kSpec = "tests/data/specs/peer-tiny.yaml";
const std::string kQuick = " --device cpu --min-time 0 --min-samples 2 --max-noise 1 --timeout 2 -q";

// An environment variable for the commands this test runs (each test is a process of its own).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST(ComparePeerCli, MissingPeerEnvironmentIsAnErrorBeforeAnyMeasurement) {
  const ScopedEnv venv("CONVBENCH_PEERS_VENV", temp_path("no-such-venv"));
  const std::string json = temp_path("peer_missing.json");
  const auto r = run_cli("compare " + source_path(kSpec) + kQuick + " --peer torch --json " + json);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("error: command line: --peer: torch: the peer environment " + temp_path("no-such-venv") +
                       " is not ready (scripts/setup-peers.sh has not made it)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("create it once with scripts/setup-peers.sh"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");                                 // no table: nothing was measured
  EXPECT_FALSE(std::filesystem::exists(json)) << json;  // and nothing written
}

TEST(ComparePeerCli, APythonWithoutTorchIsAnError) {
  const ScopedEnv python("CONVBENCH_PEER_PYTHON", temp_path("no-such-python"));
  const auto r = run_cli("compare " + source_path(kSpec) + kQuick + " --peer torch");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--peer: torch: cannot run the peer's Python"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scripts/setup-peers.sh"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(ComparePeerCli, FlagsThatCannotGoWithAPeerAreRefused) {
  const std::string spec = source_path(kSpec);
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {" --peer-json p.json", "--peer-json: is the peer's results file: give --peer torch too"},
           {" --peer torch --memory-only", "--peer: compares times; --memory-only takes none"},
           {" --peer torch --explain", "--peer: and --explain"},
           {" --peer torch --cold", "--peer: the peer does not evict caches"},
           {" --peer pytorch", "--peer: pytorch not in {torch}"}}) {
    SCOPED_TRACE(flags);
    const auto r = run_cli("compare " + spec + kQuick + flags);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// A "Python" that has torch but whose peer fails: convbench's rows stand, the log says why, and
// the comparison lists them as convbench's alone.
TEST(ComparePeerCli, APeerThatFailsOnABlockLeavesConvbenchsRows) {
  const std::string fake = temp_path("fake-python.sh");
  std::ofstream(fake) << "#!/bin/sh\n"
                         "if [ \"$1\" = -c ]; then echo 'torch 0.0-fake'; exit 0; fi\n"
                         "echo 'Traceback (most recent call last):' >&2\n"
                         "echo 'RuntimeError: the fake peer fails on purpose' >&2\n"
                         "exit 1\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const ScopedEnv python("CONVBENCH_PEER_PYTHON", fake);
  const std::string peer_json = temp_path("fake_peer.json");
  const auto r = run_cli("compare " + source_path(kSpec) + kQuick + " --peer torch --peer-json " + peer_json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("PyTorch peer on tiny: exit code 1: RuntimeError: the fake peer fails on purpose; its rows "
                       "are convbench's alone"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("tiny: input 2x8x8x8"), std::string::npos) << r.out;  // convbench's own table
  EXPECT_NE(r.out.find("only in ours: tiny / standard"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only in ours: tiny / separable"), std::string::npos) << r.out;
  const std::string peer = testing::read_file(peer_json);
  EXPECT_NE(peer.find("\"engine\": \"pytorch 0.0-fake\""), std::string::npos) << peer;
  EXPECT_NE(peer.find("the peer failed on every block"), std::string::npos) << peer;
  std::filesystem::remove(fake);
  std::filesystem::remove(peer_json);
}

}  // namespace
}  // namespace convbench
