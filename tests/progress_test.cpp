// The progress line's text (measure/progress.hpp): it never reaches a terminal's last column,
// however long the label, because a wrapped line cannot be erased.
#include <gtest/gtest.h>

#include "measure/progress.hpp"

namespace convbench {
namespace {

TEST(Progress, FitsTheTerminalWidthAndCutsTheLabelFirst) {
  const std::string label(200, 'x');
  for (int width : {20, 40, 80, 100, 300}) {
    const std::string line = Progress::render(3, 10, label, 12.5, width);
    EXPECT_LE(static_cast<int>(line.size()), width - 1) << width;
  }
  const std::string line = Progress::render(3, 10, "vnet-block / bottleneck", 12.5, 100);
  EXPECT_EQ(line, "[######..............] 4/10 vnet-block / bottleneck  12s, left ~29s");
  const std::string cut = Progress::render(0, 2, label, 0, 60);
  EXPECT_NE(cut.find("xxx...  0s, left ~?"), std::string::npos) << cut;
  EXPECT_EQ(cut.size(), 59u);
}

// Without a terminal: a line per finished item, with what is done and left and an estimate.
TEST(Progress, AFinishedItemsLineSaysWhatIsDoneAndLeft) {
  EXPECT_EQ(Progress::finished_line(2, 32, "vnet-block / bottleneck on cpu", "ok (disturbed)", 4.12, 30.0),
            "convbench: 3/32 done, 29 left (about 4m50s): vnet-block / bottleneck on cpu: ok (disturbed), 4.1 s");
  EXPECT_EQ(Progress::finished_line(1, 2, "a / b on cpu", "oom", 0.25, 3.5),
            "convbench: 2/2 done, 0 left: a / b on cpu: oom, 0.2 s");
  EXPECT_EQ(Progress::finished_line(0, 200, "a / b on cuda", "ok", 36, 36),
            "convbench: 1/200 done, 199 left (about 1h59m): a / b on cuda: ok, 36.0 s");
}

}  // namespace
}  // namespace convbench
