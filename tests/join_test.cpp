// util/join.hpp: the one join the reports share.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/join.hpp"

namespace convbench {
namespace {

TEST(Join, PutsTheSeparatorBetweenPartsOnly) {
  EXPECT_EQ(join({}, ", "), "");
  EXPECT_EQ(join({"a"}, ", "), "a");
  EXPECT_EQ(join({"a", "", "c"}, "; "), "a; ; c");
  EXPECT_EQ(join({"x", "y"}, ""), "xy");
}

}  // namespace
}  // namespace convbench
