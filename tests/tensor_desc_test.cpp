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

#include "runtime/caching_host_allocator.hpp"
#include "runtime/tensor.hpp"

namespace convbench {
namespace {

TEST(CachingHostAllocator, ReusesFreedBlocksAndKeepsExactStatistics) {
  CachingHostAllocator a;
  {
    Tensor t = make_tensor(a, TensorDesc{{1000}, DType::float32, Layout::channels_first}, MemoryCategory::saved);
    EXPECT_EQ(a.stats().current, 4000);
    EXPECT_EQ(a.stats().reserved, 4096);  // rounded to 512 bytes
  }
  EXPECT_EQ(a.stats().current, 0);
  EXPECT_EQ(a.stats().reserved, 4096);  // cached, not returned
  a.reset_peak();
  {
    Tensor t = make_tensor(a, TensorDesc{{1001}, DType::float32, Layout::channels_first}, MemoryCategory::temporaries);
    EXPECT_EQ(a.stats().system_allocations, 0);  // same size class: reused
    EXPECT_EQ(a.stats().peak_by_category[static_cast<size_t>(MemoryCategory::temporaries)], 4004);
  }
  a.release_cached();
  EXPECT_EQ(a.stats().reserved, 0);
}

TEST(CachingHostAllocator, LimitTurnsIntoOutOfMemory) {
  CachingHostAllocator a;
  a.set_limit(10000);
  Tensor t = make_tensor(a, TensorDesc{{2000}, DType::float32, Layout::channels_first}, MemoryCategory::saved);
  EXPECT_THROW(make_tensor(a, TensorDesc{{1000}, DType::float64, Layout::channels_first}, MemoryCategory::saved),
               OutOfMemory);
  EXPECT_EQ(a.stats().current, 8000);  // the failed request left nothing behind
}

}  // namespace
}  // namespace convbench
