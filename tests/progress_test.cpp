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

}  // namespace
}  // namespace convbench
