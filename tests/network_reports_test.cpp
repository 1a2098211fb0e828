// A network's reports: its ops added up by stage (explain), each variant's effect on one block and
// on the whole network side by side, and several networks at one input side by side (compare's
// tables), on constructed facts and rows.
#include <gtest/gtest.h>

#include "explain/stage_breakdown.hpp"
#include "report/network_vs_block.hpp"
#include "report/networks_side_by_side.hpp"
#include "report/summary_tables.hpp"

namespace convbench {
namespace {

OpFacts op(const std::string& name, int64_t params, int64_t macs, int64_t saved, std::optional<double> ms) {
  OpFacts o;
  o.name = name;
  o.params = params;
  o.macs = macs;
  o.flops = 2 * macs;
  o.saved_bytes = saved;
  o.time_ms = ms;
  return o;
}

TEST(StageBreakdown, GroupsOpsByTheFirstNameComponentInRunOrder) {
  const std::vector<OpFacts> ops = {
      op("down0.block.down.conv", 10, 100, 40, 1.0), op("down0.block.down.norm", 2, 0, 40, 0.5),
      op("down1.block.convs.0.conv", 30, 300, 80, 2.0), op("head", 5, 50, 0, 0.5), op("down0.late", 1, 1, 0, 0.0)};
  const std::vector<StageFacts> s = stage_breakdown(ops, 5.0);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "down0");
  EXPECT_EQ(s[0].ops, 3);
  EXPECT_EQ(s[0].params, 13);
  EXPECT_EQ(s[0].macs, 101);
  EXPECT_EQ(s[0].flops, 202);
  EXPECT_EQ(s[0].saved_bytes, 80);
  ASSERT_TRUE(s[0].time_ms && s[0].time_share);
  EXPECT_DOUBLE_EQ(*s[0].time_ms, 1.5);
  EXPECT_DOUBLE_EQ(*s[0].time_share, 0.3);
  EXPECT_EQ(s[1].name, "down1");
  EXPECT_EQ(s[2].name, "head");  // a name without a dot is its own stage
  int64_t params = 0;
  for (const StageFacts& x : s) params += x.params;
  EXPECT_EQ(params, 48);  // every op in exactly one stage
}

TEST(StageBreakdown, AStageWithAnUntimedOpHasNoTime) {
  const std::vector<StageFacts> s = stage_breakdown({op("a.x", 0, 0, 0, 1.0), op("a.y", 0, 0, 0, std::nullopt)}, 2.0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_FALSE(s[0].time_ms);
  EXPECT_FALSE(s[0].time_share);
}

TimeStats stats(double median) {
  TimeStats t;
  t.median = t.mean = t.min = t.max = t.q1 = t.q3 = median;
  t.raw_ms = {median};
  return t;
}

ResultRow row(const std::string& group, bool network, const std::string& variant, double ms, int64_t peak,
              int64_t params) {
  ResultRow r;
  r.block = group;
  if (network) r.subject = "network";
  r.variant = variant;
  r.kind = variant == "standard" ? "standard" : "bottleneck";
  r.is_baseline = variant == "standard";
  r.mode = "train";
  r.dtype = "float32";
  r.layout = "channels_first";
  r.input_shape = {2, 4, 8, 8, 8};
  r.params = params;
  r.device = "cpu";
  r.predicted.peak_bytes = peak;
  r.measured = r.predicted;
  r.step = stats(ms);
  return r;
}

ResultSet results(std::vector<ResultRow> rows) {
  ResultSet s;
  s.engine = "convbench test";
  s.device = "cpu";
  s.rows = std::move(rows);
  return s;
}

TEST(NetworkVsBlock, PutsAVariantsRatiosOnTheBlockAndOnTheNetworkSideBySide) {
  const ResultSet r = results(
      {row("vnet-block", false, "standard", 10, 100, 1000), row("vnet-block", false, "bottleneck", 14, 136, 500),
       row("vbnet", true, "standard", 100, 1000, 10000), row("vbnet", true, "bottleneck", 90, 1170, 1000)});
  const std::optional<BlockTable> t = network_vs_block_table(r);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->table.rows.size(), 1u);
  EXPECT_EQ(t->table.rows[0], (std::vector<std::string>{"bottleneck", "vnet-block", "1.40x", "1.36x", "0.50x", "vbnet",
                                                        "0.90x", "1.17x", "0.10x"}));
  const std::string note = network_vs_block_note(r);
  EXPECT_EQ(note.substr(0, note.find('\n') + 1),
            "bottleneck: 1.36x peak, 1.40x time per block (vnet-block); 1.17x peak, 0.90x time per network (vbnet).\n");
  EXPECT_NE(format_tables(r, TableStyle::terminal).find("block vs network"), std::string::npos);
}

TEST(NetworkVsBlock, NeedsANetworkAndABlockWithTheSameBaselineAndMode) {
  EXPECT_FALSE(
      network_vs_block_table(results({row("a", false, "standard", 1, 1, 1), row("a", false, "bottleneck", 1, 1, 1),
                                      row("b", false, "standard", 1, 1, 1), row("b", false, "bottleneck", 1, 1, 1)})));
  ResultRow infer = row("vbnet", true, "bottleneck", 1, 1, 1);
  infer.mode = "infer";
  ResultRow infer_base = row("vbnet", true, "standard", 1, 1, 1);
  infer_base.mode = "infer";
  EXPECT_FALSE(network_vs_block_table(
      results({row("blk", false, "standard", 1, 1, 1), row("blk", false, "bottleneck", 1, 1, 1), infer_base, infer})));
  // Without a measured peak on both sides the ratio is the predicted one, and says so.
  ResultRow unmeasured = row("vbnet", true, "bottleneck", 9, 117, 1);
  unmeasured.measured.reset();
  const std::optional<BlockTable> t = network_vs_block_table(
      results({row("blk", false, "standard", 1, 10, 1), row("blk", false, "bottleneck", 1, 10, 1),
               row("vbnet", true, "standard", 10, 100, 1), unmeasured}));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->table.rows[0][7], "1.17x pred.");
}

// Seed 001's table: each network's baseline against the first network at the same input, FLOPs
// beside time, and a sentence for a network whose FLOPs promise more speed than it has.
ResultRow network_row(const std::string& name, double ms, int64_t flops, int64_t params, int64_t peak) {
  ResultRow r = row(name, true, "torchvision", ms, peak, params);
  r.kind = "standard";
  r.is_baseline = true;
  r.input_shape = {2, 3, 64, 64};
  r.flops.forward = flops;
  return r;
}

TEST(NetworksSideBySide, EachNetworkAgainstTheFirstAtTheSameInput) {
  const ResultSet r =
      results({network_row("resnet50", 100, 1000, 25000, 400), network_row("efficientnet-b0", 150, 100, 5000, 600),
               network_row("regnety-400mf", 50, 100, 4000, 200)});
  const std::vector<BlockTable> tables = networks_side_by_side_tables(r);
  ASSERT_EQ(tables.size(), 1u);
  const TextTable& t = tables[0].table;
  EXPECT_EQ(t.header,
            (std::vector<std::string>{"network", "variant", "params", "GFLOP step", "GMAC fwd", "step ms", "samples/s",
                                      "peak", "params x", "FLOP x", "time x", "time/FLOP x", "peak x"}));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0][0], "resnet50");
  EXPECT_EQ(t.rows[0][10], "1.00x");
  EXPECT_EQ(t.rows[1][8], "0.20x");   // params
  EXPECT_EQ(t.rows[1][9], "0.10x");   // FLOPs
  EXPECT_EQ(t.rows[1][10], "1.50x");  // time
  EXPECT_EQ(t.rows[1][11], "15.00x");
  EXPECT_EQ(t.rows[1][12], "1.50x");  // peak
  EXPECT_EQ(t.rows[2][10], "0.50x");
  const std::string note = networks_side_by_side_note(r);
  EXPECT_NE(note.find("efficientnet-b0: 0.10x the FLOPs and 1.50x the step time of resnet50: 15.00x the time per FLOP "
                      "(fewer FLOPs, yet no faster).\n"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("regnety-400mf: 0.10x the FLOPs and 0.50x the step time of resnet50: 5.00x the time per FLOP "
                      "(its FLOPs overstate its speed).\n"),
            std::string::npos)
      << note;
  EXPECT_NE(format_tables(r, TableStyle::terminal).find("networks side by side: input 2x3x64x64"), std::string::npos);
}

TEST(NetworksSideBySide, OnlyNetworksThatShareAnInput) {
  ResultRow other = network_row("mobilenet-v2", 10, 10, 10, 10);
  other.input_shape = {2, 3, 32, 32};
  EXPECT_TRUE(networks_side_by_side_tables(results({network_row("resnet50", 1, 1, 1, 1), other})).empty());
  // Blocks are not networks; one network alone has nothing beside it.
  EXPECT_TRUE(networks_side_by_side_tables(
                  results({network_row("resnet50", 1, 1, 1, 1), row("blk", false, "standard", 1, 1, 1)}))
                  .empty());
  // An analysis (no times): counts and ratios without the time columns, and no sentences.
  ResultRow a = network_row("resnet50", 1, 1000, 1, 1), b = network_row("mobilenet-v2", 1, 300, 1, 1);
  a.step.reset();
  b.step.reset();
  a.measured.reset();
  b.measured.reset();
  const std::vector<BlockTable> t = networks_side_by_side_tables(results({a, b}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(std::find(t[0].table.header.begin(), t[0].table.header.end(), "time x"), t[0].table.header.end());
  EXPECT_EQ(t[0].table.rows[1][7], "0.30x");
  EXPECT_EQ(networks_side_by_side_note(results({a, b})), "");
}

}  // namespace
}  // namespace convbench
