// `convbench report OURS --against PEER`: convbench's committed results for
// tests/data/results/small-spec.yaml next to scripts/torch_peer.py's for the same spec. Equal
// counts exit 0; a tampered MAC count is a MISMATCH and exit code 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "report/peer_comparison.hpp"
#include "results/json_results.hpp"

namespace convbench {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::run_cli;
using testing::source_path;
using testing::temp_path;

const std::string kOurs = "tests/data/results/measured.json";
const std::string kAnalyzed = "tests/data/results/analyzed.json";
const std::string kPeer = "tests/data/results/peer.json";

TEST(ReportAgainst, EqualCountsExitZeroAndMatchTheGoldenFiles) {
  const auto r = run_cli("report " + source_path(kOurs) + " --against " + source_path(kPeer));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(source_path("tests/golden/against_small.txt")));
  EXPECT_NE(r.out.find("Counts agree on all 10 compared rows."), std::string::npos);
  EXPECT_EQ(r.out.find("MISMATCH:"), std::string::npos);
  const auto md = run_cli("report " + source_path(kOurs) + " --against " + source_path(kPeer) + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out, read_file(source_path("tests/golden/against_small.md")));
}

TEST(ReportAgainst, RatiosAreOursOverPeerMedians) {
  const ResultSet ours = load_results_file(source_path(kOurs));
  const ResultSet peer = load_results_file(source_path(kPeer));
  const json peer_doc = json::parse(read_file(source_path(kPeer)));
  const json ours_doc = json::parse(read_file(source_path(kOurs)));
  const PeerComparison c = compare_with_peer(ours, peer);
  ASSERT_EQ(c.rows.size(), 10u);
  EXPECT_TRUE(c.only_in_ours.empty());
  EXPECT_TRUE(c.only_in_peer.empty());
  for (size_t i = 0; i < c.rows.size(); ++i) {
    SCOPED_TRACE(i);
    const PeerRow& row = c.rows[i];
    const json& o = ours_doc["results"][i];
    const json& p = peer_doc["results"][i];
    ASSERT_EQ(o["variant"], p["variant"]);
    EXPECT_FALSE(row.mismatch());
    ASSERT_TRUE(row.forward);
    EXPECT_DOUBLE_EQ(*row.forward,
                     o["time_ms"]["forward"]["median"].get<double>() / p["time_ms"]["forward"]["median"].get<double>());
    if (o["mode"] == "train") {
      ASSERT_TRUE(row.step);
      EXPECT_DOUBLE_EQ(*row.step,
                       o["time_ms"]["step"]["median"].get<double>() / p["time_ms"]["step"]["median"].get<double>());
      // CPU peer: no peak, so saved bytes are compared, ours measured by the allocator.
      EXPECT_EQ(row.memory_measure, MemoryMeasure::saved_measured);
      EXPECT_EQ(row.ours_memory, o["memory"]["measured"]["saved_bytes"].get<int64_t>());
      EXPECT_EQ(row.peer_memory, p["memory"]["saved_bytes"].get<int64_t>());
      // Both engines save the same tensors for this block.
      EXPECT_EQ(row.ours_memory, row.peer_memory);
    } else {
      EXPECT_FALSE(row.step);
      EXPECT_FALSE(row.memory);  // nothing is saved in inference: no ratio
    }
  }
}

TEST(ReportAgainst, TamperedMacCountIsAMismatch) {
  json peer = json::parse(read_file(source_path(kPeer)));
  peer["results"][1]["macs"]["backward_weight"] = peer["results"][1]["macs"]["backward_weight"].get<int64_t>() * 2;
  const std::string tampered = temp_path("tampered_peer.json");
  std::ofstream(tampered) << peer.dump(1);
  const auto r = run_cli("report " + source_path(kOurs) + " --against " + tampered);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MISMATCH: MACs bwd-weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MISMATCH: 1 of 10 rows have counts that differ (exit code 1)."), std::string::npos) << r.out;
  const auto html = run_cli("report " + source_path(kOurs) + " --against " + tampered + " --format html");
  EXPECT_EQ(html.exit_code, 1);
  EXPECT_NE(html.out.find("<section class=\"against\" id=\"against\">"), std::string::npos);
  EXPECT_NE(html.out.find("<p class=\"mismatch\">MISMATCH"), std::string::npos);
  EXPECT_NE(html.out.find("class=\"num worse\""), std::string::npos);
  EXPECT_EQ(testing::without_svg_namespace(html.out).find("http"), std::string::npos);
  std::filesystem::remove(tampered);
}

// A peer file written with --counters: each counter's number, its ratio to our forward MACs and
// what its rule predicts; a counter that no longer gives its explained number says BROKEN. The
// counters are information: only convbench's own counts against the peer's decide the exit code.
TEST(ReportAgainst, FlopCountersTableShowsEachCounterAndWhetherItsRuleHolds) {
  json peer = json::parse(read_file(source_path(kPeer)));
  const int64_t macs = peer["results"][0]["macs"]["forward"].get<int64_t>();
  peer["results"][0]["counters"] = {
      {"values", {{"flop_counter_forward", 2 * macs}, {"thop", macs + 7}}},
      {"predicted", {{"flop_counter_forward", 2 * macs}, {"thop", macs + 5}}},
      {"rules",
       {{"flop_counter_forward", "2 x conv MACs (FLOPs), no bias/norm/act"}, {"thop", "conv MACs, BN 4/elem"}}},
      {"errors", {{"fvcore", "RuntimeError: cannot trace"}}}};
  const std::string with_counters = temp_path("peer_with_counters.json");
  std::ofstream(with_counters) << peer.dump(1);
  const auto r = run_cli("report " + source_path(kOurs) + " --against " + with_counters);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("FLOP counters (the peer's --counters) against convbench's forward MACs"), std::string::npos)
      << r.out;
  const auto line_of = [&](const std::string& counter) {
    const size_t at = r.out.find("  " + counter + "  ");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_NE(line_of("flop_counter_forward").find("2.0000x"), std::string::npos) << r.out;
  EXPECT_NE(line_of("flop_counter_forward").find("holds"), std::string::npos) << r.out;
  EXPECT_NE(line_of("thop").find("BROKEN"), std::string::npos) << r.out;
  EXPECT_NE(line_of("fvcore").find("RuntimeError: cannot trace"), std::string::npos) << r.out;
  // Back through JSON: the section survives a load and a write.
  const ResultSet loaded = load_results_file(with_counters);
  EXPECT_EQ(loaded.rows[0].counters["values"]["thop"].get<int64_t>(), macs + 7);
  EXPECT_TRUE(loaded.rows[1].counters.empty());
  std::filesystem::remove(with_counters);
  // Without counters, no such table.
  const auto plain = run_cli("report " + source_path(kOurs) + " --against " + source_path(kPeer));
  EXPECT_EQ(plain.out.find("FLOP counters"), std::string::npos);
}

TEST(ReportAgainst, HtmlReportCarriesTheSameSideBySideTable) {
  const auto r = run_cli("report " + source_path(kOurs) + " --against " + source_path(kPeer) + " --format html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("<h2>Against pytorch"), std::string::npos);
  EXPECT_NE(r.out.find("<p class=\"agree\">Counts agree on all 10 compared rows.</p>"), std::string::npos);
  EXPECT_NE(r.out.find("<th class=\"num\">MACs fwd peer</th>"), std::string::npos);
  EXPECT_NE(r.out.find("memory (saved)"), std::string::npos);
  EXPECT_EQ(testing::without_svg_namespace(r.out).find("http"), std::string::npos);
}

TEST(ReportAgainst, AnalysisAgainstPeerComparesPredictedSavedBytes) {
  const ResultSet analyzed = load_results_file(source_path(kAnalyzed)), peer = load_results_file(source_path(kPeer));
  const PeerComparison c = compare_with_peer(analyzed, peer);  // points into both sets
  EXPECT_EQ(c.mismatches(), 0);
  EXPECT_EQ(c.rows[0].memory_measure, MemoryMeasure::saved_predicted);
  EXPECT_FALSE(c.rows[0].step);  // nothing was timed by analyze
  const std::string text = format_peer_comparison(c, TableStyle::terminal);
  EXPECT_NE(text.find("memory (saved, ours predicted)"), std::string::npos);
}

TEST(ReportAgainst, PeakBytesWhenBothMeasuredOne) {
  ResultSet ours = load_results_file(source_path(kOurs));
  ResultSet peer = load_results_file(source_path(kPeer));
  for (ResultRow& r : peer.rows) r.measured->peak_bytes = 1 << 20;  // as torch_peer.py writes on CUDA
  const PeerComparison c = compare_with_peer(ours, peer);
  EXPECT_EQ(c.rows[0].memory_measure, MemoryMeasure::peak);
  ASSERT_TRUE(c.rows[0].memory);
  EXPECT_DOUBLE_EQ(*c.rows[0].memory, static_cast<double>(ours.rows[0].measured->peak_bytes) / (1 << 20));
  EXPECT_NE(format_peer_comparison(c, TableStyle::terminal).find("memory (peak)"), std::string::npos);
}

TEST(ReportAgainst, UnpairedRowsAndFailedPeerRows) {
  ResultSet ours = load_results_file(source_path(kOurs));
  ResultSet peer = load_results_file(source_path(kPeer));
  peer.rows.erase(peer.rows.begin());
  peer.rows[0].status = RunStatus::error;  // failed before counting: counts unknown, not a mismatch
  peer.rows[0].params = 0;
  peer.rows[0].macs = {};
  ours.rows.pop_back();
  const PeerComparison c = compare_with_peer(ours, peer);
  ASSERT_EQ(c.only_in_ours.size(), 1u);
  EXPECT_EQ(c.only_in_ours[0].text(), "conv_2d [batch=1] / standard");
  ASSERT_EQ(c.only_in_peer.size(), 1u);
  EXPECT_EQ(c.only_in_peer[0].text(), "conv3d-infer [batch=2] / grouped");
  EXPECT_FALSE(c.rows[0].counts_known);
  EXPECT_EQ(c.exit_code(), 0);
  const std::string text = format_peer_comparison(c, TableStyle::terminal);
  EXPECT_NE(text.find("not compared (no counts)"), std::string::npos);
  EXPECT_NE(text.find("only in ours: conv_2d [batch=1] / standard"), std::string::npos);
}

// The ranking verdict (report/peer_ranking.hpp; its cases: tests/peer_ranking_test.cpp) in every
// format --against renders: seed 000's story, separable faster than standard on convbench's cpu
// runtime and slower on PyTorch eager, with the op that makes the difference.
TEST(ReportAgainst, RankingVerdictInEveryFormat) {
  const std::string args = "report " + source_path("tests/data/ranking/convbench.json") + " --against " +
                           source_path("tests/data/ranking/pytorch.json");
  const std::string verdict =
      "verdict: convbench and PyTorch disagree: separable is faster than the baseline (standard) on convbench, "
      "slower than it on PyTorch.";
  const std::string op = "the difference is depthwise.conv of separable: 95.0 ms in convbench, 1610 ms in PyTorch";
  const auto text = run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;  // a ranking is information: counts alone decide the exit code
  EXPECT_NE(text.out.find("ranking by step time (rank 1 = fastest, tied within 5%; x: over the baseline, standard, "
                          "in the same runtime)\nvariant          rank ours  x ours  rank peer  x peer\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("separable                1   0.21x          2   1.08x\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n" + verdict + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(op), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nRankings by time: 0 of 1 block points agree, 1 disagree (vnet-block), 0 not concluded.\n"),
            std::string::npos)
      << text.out;
  const auto md = run_cli(args + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| separable | 1 | 0.21x | 2 | 1.08x |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("\n- " + verdict + "\n"), std::string::npos) << md.out;
  const auto html = run_cli(args + " --format html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("<h4>Ranking</h4>"), std::string::npos);
  EXPECT_NE(html.out.find("<ul class=\"verdict\">\n<li>" + verdict + "</li>"), std::string::npos) << html.out;
  EXPECT_NE(html.out.find(op), std::string::npos);
  EXPECT_NE(html.out.find("<p class=\"rankings\">Rankings by time: 0 of 1 block points agree"), std::string::npos);
  // The HTML's own conclusion under the time-vs-FLOPs plot says which runtime it is about.
  EXPECT_NE(html.out.find("No variant with fewer FLOPs than the baseline (standard) is slower on convbench&#39;s cpu "
                          "runtime."),
            std::string::npos);
}

TEST(ReportAgainst, OnlyTableMarkdownOrHtml) {
  const auto r = run_cli("report " + source_path(kOurs) + " --against " + source_path(kPeer) + " --format csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--against renders as table, md or html"), std::string::npos) << r.err;
  const auto missing = run_cli("report " + source_path(kOurs) + " --against /nonexistent/peer.json");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/peer.json: cannot open the results file"), std::string::npos);
}

}  // namespace
}  // namespace convbench
