#include <gtest/gtest.h>

#include "graph/tensor_desc.hpp"
#include "runtime/host_io.hpp"

namespace convbench {
namespace {

TEST(TensorDesc, ChannelsLastStridesPutChannelsInnermost) {
  TensorDesc d{{2, 3, 4, 5}, DType::float32, Layout::channels_last};
  EXPECT_EQ(d.strides(), (std::vector<int64_t>{60, 1, 15, 3}));
  d.layout = Layout::channels_first;
  EXPECT_EQ(d.strides(), (std::vector<int64_t>{60, 20, 5, 1}));
}

TEST(TensorDesc, PhysicalOffsetFollowsLayout3d) {
  TensorDesc d{{1, 2, 2, 2, 3}, DType::float32, Layout::channels_last};
  // logical (0, 1, 1, 0, 2) = 1*12 + 1*6 + 0*3 + 2 = 20; NDHWC offset = ((1*2+0)*3+2)*2 + 1 = 17
  EXPECT_EQ(physical_offset(d, 20), 17);
  d.layout = Layout::channels_first;
  EXPECT_EQ(physical_offset(d, 20), 20);
}

TEST(HostIo, HalfAndBfloat16RoundTripRoundsToNearestEven) {
  unsigned char buf[8];
  store_element(buf, 0, DType::float16, 1.0 + 1.0 / 2048);  // halfway: rounds to even (1.0)
  EXPECT_EQ(load_element(buf, 0, DType::float16), 1.0);
  store_element(buf, 0, DType::float16, 65504.0);
  EXPECT_EQ(load_element(buf, 0, DType::float16), 65504.0);
  store_element(buf, 0, DType::bfloat16, 3.0);
  EXPECT_EQ(load_element(buf, 0, DType::bfloat16), 3.0);
  store_element(buf, 0, DType::bfloat16, 1.0 + 1.0 / 256);  // halfway in bf16: rounds to 1.0
  EXPECT_EQ(load_element(buf, 0, DType::bfloat16), 1.0);
}

}  // namespace
}  // namespace convbench
