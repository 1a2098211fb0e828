// The "layouts" table of a block swept over layout (seed 004: is channels-last faster for my
// blocks?): channels-last over channels-first per variant, on constructed results and end to end.
#include <gtest/gtest.h>

#include <sstream>

#include "cli_harness.hpp"
#include "report/layout_table.hpp"
#include "report/summary_tables.hpp"

namespace convbench {
namespace {

TimeStats stats(double median) {
  TimeStats t;
  t.median = t.mean = t.min = t.max = t.q1 = t.q3 = median;
  t.noise = 0.01;
  t.raw_ms = {median, median, median};
  return t;
}

ResultRow row(const std::string& variant, const std::string& layout, double step_ms, int64_t peak,
              const std::string& batch = "") {
  ResultRow r;
  r.block = "blk";
  r.variant = variant;
  r.kind = "standard";
  r.is_baseline = variant == "standard";
  r.mode = "train";
  r.dtype = "float32";
  r.layout = layout;
  if (!batch.empty()) r.point.push_back({"batch", batch});
  r.point.push_back({"layout", "\"" + layout + "\""});
  for (const auto& [field, value] : r.point)
    r.point_label += (r.point_label.empty() ? "" : ", ") + field + "=" +
                     (value.front() == '"' ? value.substr(1, value.size() - 2) : value);
  r.input_shape = {2, 8, 8, 8};
  r.device = "cpu";
  r.predicted.peak_bytes = peak;
  r.measured = r.predicted;
  r.forward = stats(step_ms / 3);
  r.backward = stats(step_ms * 2 / 3);
  r.step = stats(step_ms);
  return r;
}

ResultSet set_of(std::vector<ResultRow> rows) {
  ResultSet s;
  s.engine = "convbench test";
  s.device = "cpu";
  s.rows = std::move(rows);
  return s;
}

std::vector<const ResultRow*> pointers(const ResultSet& s) {
  std::vector<const ResultRow*> p;
  for (const ResultRow& r : s.rows) p.push_back(&r);
  return p;
}

TEST(LayoutsTable, RatiosAreChannelsLastOverChannelsFirstPerVariant) {
  // Rows in sweep order (layout slowest), as a run writes them.
  const ResultSet s =
      set_of({row("standard", "channels_first", 2.0, 4 << 20), row("separable", "channels_first", 1.0, 8 << 20),
              row("standard", "channels_last", 1.5, 4 << 20), row("separable", "channels_last", 1.25, 6 << 20)});
  const std::optional<BlockTable> t = layouts_table(pointers(s));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->title, "blk: layouts, channels_last / channels_first, train, device cpu");
  EXPECT_EQ(t->table.render_terminal(),
            "variant      cf step ms    cl step ms  step cl/cf  peak cl/cf\n"
            "---------  ------------  ------------  ----------  ----------\n"
            "standard   2.000 ±1.0%  1.500 ±1.0%       0.75x       1.00x\n"
            "separable  1.000 ±1.0%  1.250 ±1.0%       1.25x       0.75x\n");
  // Faster channels-last is the better tone, slower the worse.
  EXPECT_EQ(t->table.tone(0, 3), Tone::better);
  EXPECT_EQ(t->table.tone(1, 3), Tone::worse);
}

TEST(LayoutsTable, OtherSweptFieldsStayColumnsAndInferenceUsesTheForwardTime) {
  std::vector<ResultRow> rows;
  for (const char* layout : {"channels_first", "channels_last"})
    for (const char* batch : {"1", "2"}) {
      ResultRow r = row("standard", layout, layout == std::string("channels_last") ? 3.0 : 6.0, 1 << 20, batch);
      r.mode = "infer";
      r.forward = stats(std::string(layout) == "channels_last" ? 1.0 : 4.0);
      rows.push_back(r);
    }
  const ResultSet s = set_of(rows);
  const std::optional<BlockTable> t = layouts_table(pointers(s));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->table.header,
            (std::vector<std::string>{"variant", "batch", "cf fwd ms", "cl fwd ms", "fwd cl/cf", "peak cl/cf"}));
  ASSERT_EQ(t->table.rows.size(), 2u);
  EXPECT_EQ(t->table.rows[1][1], "2");
  EXPECT_EQ(t->table.rows[1][4], "0.25x");
}

TEST(LayoutsTable, PeakRatioIsPredictedUnlessBothRowsMeasuredOne) {
  ResultRow cf = row("standard", "channels_first", 2.0, 100), cl = row("standard", "channels_last", 2.0, 100);
  cl.predicted.peak_bytes = 150;
  cl.measured->peak_bytes = 200;
  cf.status = RunStatus::oom;  // no measured peak to show, and no time
  const ResultSet s = set_of({cf, cl});
  const std::optional<BlockTable> t = layouts_table(pointers(s));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->table.rows[0], (std::vector<std::string>{"standard", "-", "2.000 ±1.0%", "-", "1.50x"}));
}

TEST(LayoutsTable, OnlyABlockRunInBothLayoutsGetsOne) {
  const ResultSet one = set_of({row("standard", "channels_first", 2.0, 100), row("b", "channels_first", 1.0, 100)});
  EXPECT_FALSE(layouts_table(pointers(one)).has_value());
  const std::string out = format_tables(one, TableStyle::terminal);
  EXPECT_EQ(out.find("layouts"), std::string::npos) << out;
  // Both layouts: the layouts table follows the block's table, with its note, in both styles.
  const ResultSet both =
      set_of({row("standard", "channels_first", 2.0, 100), row("standard", "channels_last", 1.0, 100)});
  const std::string terminal = format_tables(both, TableStyle::terminal);
  const size_t block = terminal.find("blk: input 2x8x8x8, sweeping layout");
  const size_t layouts = terminal.find("blk: layouts, channels_last / channels_first, train, device cpu\n");
  ASSERT_NE(block, std::string::npos) << terminal;
  ASSERT_NE(layouts, std::string::npos) << terminal;
  EXPECT_LT(block, layouts);
  EXPECT_NE(terminal.find(layouts_note(pointers(both))), std::string::npos);
  const std::string md = format_tables(both, TableStyle::markdown);
  EXPECT_NE(md.find("### blk: layouts, channels_last / channels_first, train, device cpu\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| standard | 2.000 ±1.0% | 1.000 ±1.0% | 0.50x | 1.00x |"), std::string::npos) << md;
  EXPECT_NE(md.find("channels-last is faster (time)"), std::string::npos) << "the note is one Markdown line";
}

// A channels-last row that converts at the block's boundary: its conversions' time and share of
// its step in a column of their own (from --per-op times), "none" for a row that does not convert,
// and a note saying what the cl times include; without per-op times, the note says how to get them.
TEST(LayoutsTable, BoundaryConversionsAreShownApart) {
  ResultRow converted = row("standard", "channels_last", 4.0, 120);
  converted.layout_conversion = "boundary";
  converted.op_times = {{"to_channels_last", {{"forward_ms", 0.25}}},
                        {"to_channels_first", {{"forward_ms", 0.25}, {"backward_ms", 0.5}}},
                        {"conv", {{"forward_ms", 1.0}, {"backward_ms", 2.0}}}};
  const ResultSet s = set_of({row("standard", "channels_first", 2.0, 100), converted});
  const std::optional<BlockTable> t = layouts_table(pointers(s));
  ASSERT_TRUE(t.has_value());
  const std::string md = t->table.render_markdown();
  EXPECT_NE(md.find("| variant | cf step ms | cl step ms | step cl/cf | cl convert ms | peak cl/cf |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| standard | 2.000 ±1.0% | 4.000 ±1.0% | 2.00x | 1.000 (25%) | 1.20x |"), std::string::npos) << md;
  const std::string note = layouts_note(pointers(s));
  EXPECT_NE(note.find("time includes to_channels_last and to_channels_first"), std::string::npos) << note;
  EXPECT_NE(note.find("cl convert ms: the two conversions' time"), std::string::npos) << note;

  converted.op_times = nlohmann::json::object();
  const ResultSet untimed = set_of({row("standard", "channels_first", 2.0, 100), converted});
  EXPECT_NE(layouts_table(pointers(untimed))->table.render_markdown().find("| 2.00x | - | 1.20x |"), std::string::npos);
  EXPECT_NE(layouts_note(pointers(untimed)).find("Run with --per-op N to time the two conversions apart"),
            std::string::npos);
  // No row converts: no column, and the note says nothing about conversions.
  const ResultSet plain =
      set_of({row("standard", "channels_first", 2.0, 100), row("standard", "channels_last", 1.0, 100)});
  EXPECT_EQ(layouts_table(pointers(plain))->table.render_markdown().find("convert"), std::string::npos);
  EXPECT_EQ(layouts_note(pointers(plain)).find("convert"), std::string::npos);
}

// End to end: the seed's block swept over layout from the command line; every line of the
// tables and of the layouts note keeps to 100 columns.
TEST(LayoutsTable, ASweepOverLayoutFromTheCommandLine) {
  const auto r = testing::run_cli("compare " + testing::source_path("configs/seed-blocks.yaml") +
                                  " --device cpu --memory-only -q --sweep layout=channels_first,channels_last");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("vnet-block: layouts, channels_last / channels_first, train, device cpu\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream in(r.out.substr(at));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line) && !line.empty()) lines.push_back(line);
  // Title, header, rule, three variants, the two lines of the note.
  ASSERT_EQ(lines.size(), 8u) << r.out;
  EXPECT_EQ(lines[1], "variant     peak cl/cf") << "--memory-only has no times";
  for (const std::string& l : lines) EXPECT_LE(l.size(), 100u) << l;
}

}  // namespace
}  // namespace convbench
