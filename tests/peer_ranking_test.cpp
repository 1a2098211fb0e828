// The ranking verdict of a peer comparison (report/peer_ranking.hpp) on tests/data/ranking: seed
// 000's story in miniature, where convbench's cpu runtime puts the separable block at 0.21x the
// standard one and PyTorch eager at 1.08x, because PyTorch's depthwise conv takes 1610 ms where
// convbench's takes 95 ms. Each case edits a copy of the files: the runtimes agree, disagree with
// per-op times (the op is named), disagree without them (the flag to get them is named), or
// cannot be trusted (no conclusion).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "report/peer_comparison.hpp"
#include "report/peer_ranking.hpp"
#include "results/json_results.hpp"

namespace convbench {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::source_path;

json fixture(const std::string& name) { return json::parse(read_file(source_path("tests/data/ranking/" + name))); }

json& row_of(json& doc, const std::string& variant) {
  for (json& r : doc["results"])
    if (r["variant"] == variant) return r;
  throw std::runtime_error("no row " + variant);
}

// Every time of a row (its phases' samples and its ops) times `factor`.
void scale_times(json& row, double factor) {
  for (auto& [phase, t] : row["time_ms"].items())
    for (const char* k : {"median", "min", "max", "q1", "q3"}) t[k] = t[k].get<double>() * factor;
  for (auto& [phase, t] : row["time_ms"].items())
    for (json& v : t["raw_ms"]) v = v.get<double>() * factor;
  for (auto& [op, t] : row["op_times"].items())
    for (const char* k : {"forward_ms", "backward_ms"}) t[k] = t[k].get<double>() * factor;
}

double step_median(const json& row) { return row["time_ms"]["step"]["median"].get<double>(); }

struct Compared {
  ResultSet ours, peer;
  PeerComparison comparison;
  Compared(const json& o, const json& p)
      : ours(results_from_json(o, "ours")),
        peer(results_from_json(p, "peer")),
        comparison(compare_with_peer(ours, peer)) {}
  const RankingVerdict& verdict() const { return comparison.rankings.at(0); }
  std::string sentences() const {
    std::string s;
    for (const std::string& line : verdict_sentences(verdict(), comparison.names)) s += line + "\n";
    return s;
  }
};

TEST(PeerRanking, DisagreementNamesTheOpWhoseTimeDiffersMost) {
  const Compared c(fixture("convbench.json"), fixture("pytorch.json"));
  const RankingVerdict& v = c.verdict();
  EXPECT_EQ(v.status, RankingStatus::disagree);
  EXPECT_EQ(v.baseline, "standard");
  ASSERT_EQ(v.variants.size(), 3u);
  const RankedVariant& separable = v.variants[2];
  EXPECT_EQ(separable.variant, "separable");
  EXPECT_EQ(separable.ours_rank, 1);
  EXPECT_EQ(separable.peer_rank, 2);
  EXPECT_NEAR(separable.ours_x, 0.207, 0.001);
  EXPECT_NEAR(separable.peer_x, 1.077, 0.001);
  ASSERT_EQ(v.disagreements.size(), 1u);
  const Disagreement& d = v.disagreements[0];
  EXPECT_TRUE(d.side);
  EXPECT_EQ(d.variant, "separable");
  EXPECT_EQ(d.other, "standard");
  EXPECT_TRUE(d.without_op_times.empty());
  ASSERT_EQ(d.ops.size(), 1u);  // it alone explains more than kExplainedShare
  EXPECT_EQ(d.ops[0].op, "depthwise.conv");
  EXPECT_EQ(d.ops[0].variant, "separable");
  EXPECT_DOUBLE_EQ(d.ops[0].ours_ms, 95.0);
  EXPECT_DOUBLE_EQ(d.ops[0].peer_ms, 1610.0);
  const std::string s = c.sentences();
  EXPECT_NE(s.find("verdict: convbench and PyTorch disagree: separable is faster than the baseline (standard) on "
                   "convbench, slower than it on PyTorch."),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("separable: convbench 0.21x the baseline, PyTorch 1.08x; the difference is depthwise.conv of "
                   "separable: 95.0 ms in convbench, 1610 ms in PyTorch"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("op names: all 18 ops of 3 variants are timed by both runtimes under the same names."),
            std::string::npos)
      << s;
  EXPECT_NE(rankings_summary(c.comparison.rankings).find("0 of 1 block points agree, 1 disagree (vnet-block)"),
            std::string::npos);
}

// The other way round, the baseline's op is the one: PyTorch's standard conv is slow, so every other
// variant looks fast beside it in PyTorch alone.
TEST(PeerRanking, TheBaselinesOwnOpCanBeTheOne) {
  json peer = fixture("pytorch.json");
  json& standard = row_of(peer, "standard");
  scale_times(row_of(peer, "separable"), 0.2);  // separable now agrees
  for (const char* k : {"forward_ms", "backward_ms"})
    standard["op_times"]["conv"][k] = standard["op_times"]["conv"][k].get<double>() * 4;
  json conv = standard["op_times"];  // the step takes 3x as long, its conv 4x
  scale_times(standard, 3.0);
  standard["op_times"] = conv;
  const Compared c(fixture("convbench.json"), peer);
  const RankingVerdict& v = c.verdict();
  ASSERT_EQ(v.status, RankingStatus::disagree) << c.sentences();
  ASSERT_EQ(v.disagreements.size(), 1u) << c.sentences();
  EXPECT_EQ(v.disagreements[0].variant, "bottleneck");  // slower than standard in convbench, faster in PyTorch
  ASSERT_FALSE(v.disagreements[0].ops.empty());
  EXPECT_EQ(v.disagreements[0].ops[0].variant, "standard");
  EXPECT_EQ(v.disagreements[0].ops[0].op, "conv");
}

TEST(PeerRanking, AgreementWhenEachVariantIsOnTheSameSide) {
  json peer = fixture("pytorch.json");
  scale_times(row_of(peer, "separable"), 0.2);
  const Compared c(fixture("convbench.json"), peer);
  EXPECT_EQ(c.verdict().status, RankingStatus::agree);
  EXPECT_TRUE(c.verdict().disagreements.empty());
  EXPECT_NE(c.sentences().find("verdict: convbench and PyTorch agree: no two variants are ranked the other way round"),
            std::string::npos)
      << c.sentences();
  EXPECT_NE(rankings_summary(c.comparison.rankings).find("1 of 1 block points agree"), std::string::npos);
}

TEST(PeerRanking, WithoutPerOpTimesTheVerdictAsksForThem) {
  json peer = fixture("pytorch.json");
  for (json& r : peer["results"]) r.erase("op_times");
  const Compared c(fixture("convbench.json"), peer);
  const RankingVerdict& v = c.verdict();
  ASSERT_EQ(v.status, RankingStatus::disagree);
  ASSERT_EQ(v.disagreements.size(), 1u);
  EXPECT_TRUE(v.disagreements[0].ops.empty());
  EXPECT_EQ(v.disagreements[0].without_op_times, std::vector<std::string>{"PyTorch"});
  const std::string s = c.sentences();
  EXPECT_NE(s.find("which ops make the difference needs per-op times of both variants from both runtimes (PyTorch "
                   "gave none): run `convbench compare SPEC --peer torch --per-op 3`"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("per-op times: only convbench's rows have them"), std::string::npos) << s;
}

TEST(PeerRanking, UntrustedRowsAreNotConcludedUpon) {
  json ours = fixture("convbench.json");
  // The machine was busy while convbench timed the baseline: a task waited for a CPU 40% of the time.
  row_of(ours, "standard")["host_activity"] = {{"wall_s", 2.0},       {"cpu_pressure_share", 0.4},
                                               {"cpu_per_wall", 1.0}, {"involuntary_switches_per_s", 0.0},
                                               {"threads", 2},        {"cpus", 2}};
  const Compared c(ours, fixture("pytorch.json"));
  const RankingVerdict& v = c.verdict();
  EXPECT_EQ(v.status, RankingStatus::not_concluded);
  EXPECT_TRUE(v.disagreements.empty());  // the story is there, but not told on such times
  EXPECT_EQ(v.untrusted, std::vector<std::string>{"standard in convbench: disturbed"});
  const std::string s = c.sentences();
  EXPECT_NE(s.find("verdict: not concluded: the times of 1 row are not to be trusted (standard in convbench: "
                   "disturbed); rerun on an idle machine"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("depthwise.conv"), std::string::npos) << s;
}

TEST(PeerRanking, OpNamesWithoutAMatchAreSaid) {
  json peer = fixture("pytorch.json");
  json& ops = row_of(peer, "separable")["op_times"];
  ops["depthwise.relu_"] = ops["depthwise.act"];
  ops.erase("depthwise.act");
  ops["pointwise.act"].erase("backward_ms");
  ops["pointwise.act"]["note"] = "a made-up reason";
  const Compared c(fixture("convbench.json"), peer);
  const RankingVerdict& v = c.verdict();
  EXPECT_EQ(v.ops_only_in_ours, std::vector<std::string>{"separable: depthwise.act"});
  EXPECT_EQ(v.ops_only_in_peer, std::vector<std::string>{"separable: depthwise.relu_"});
  ASSERT_EQ(v.ops_not_comparable.size(), 1u);
  EXPECT_EQ(v.ops_not_comparable[0],
            "separable: pointwise.act: convbench times its backward, PyTorch does not (a made-up reason)");
  EXPECT_EQ(v.ops_matched, 16);
  // The op that matters is still compared.
  ASSERT_EQ(v.disagreements.size(), 1u);
  EXPECT_EQ(v.disagreements.at(0).ops.at(0).op, "depthwise.conv");
}

// Within kSameSide nothing is ranked: 0.97x against 1.03x is a tie, not a disagreement.
TEST(PeerRanking, DifferencesWithinATieAreNoDisagreement) {
  EXPECT_EQ(side_of(0.97), Side::same);
  EXPECT_EQ(side_of(0.94), Side::faster);
  EXPECT_EQ(side_of(1.06), Side::slower);
  json ours = fixture("convbench.json"), peer = fixture("pytorch.json");
  // separable at 0.94x in convbench and 0.96x in PyTorch: different sides, but 2% apart.
  for (auto [doc, x] : {std::pair{&ours, 0.94}, std::pair{&peer, 0.96}})
    scale_times(row_of(*doc, "separable"),
                x * step_median(row_of(*doc, "standard")) / step_median(row_of(*doc, "separable")));
  const Compared c(ours, peer);
  EXPECT_EQ(c.verdict().status, RankingStatus::agree) << c.sentences();
  EXPECT_EQ(c.verdict().variants[2].ours_rank, 1);
  EXPECT_EQ(c.verdict().variants[2].peer_rank, 1);  // tied with the baseline
  EXPECT_EQ(c.verdict().variants[0].peer_rank, 1);
}

// An analysis has no times: no verdict at all, not "nothing to rank".
TEST(PeerRanking, NoVerdictWithoutTimes) {
  json ours = fixture("convbench.json"), peer = fixture("pytorch.json");
  for (json* doc : {&ours, &peer})
    for (json& r : (*doc)["results"]) r.erase("time_ms");
  const Compared c(ours, peer);
  EXPECT_TRUE(c.comparison.rankings.empty());
}

TEST(PeerRanking, ABaselineWithoutTimeLeavesNothingToRank) {
  json peer = fixture("pytorch.json");
  row_of(peer, "standard")["status"] = "error";
  row_of(peer, "standard").erase("time_ms");
  const Compared c(fixture("convbench.json"), peer);
  EXPECT_EQ(c.verdict().status, RankingStatus::nothing_to_rank);
  const std::string s = c.sentences();
  EXPECT_NE(s.find("verdict: nothing to rank: the baseline, standard, has no time on both sides."), std::string::npos)
      << s;
  EXPECT_NE(s.find("not ranked (no time on one side): standard (PyTorch: error)."), std::string::npos) << s;
}

}  // namespace
}  // namespace convbench
