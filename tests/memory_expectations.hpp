// The check every backend's memory test makes: one measured step's allocator statistics equal the
// memory model's prediction (with that backend's workspace sizes), byte for byte, per category.
#pragma once

#include <gtest/gtest.h>

#include "analysis/memory_model.hpp"
#include "measure/variant_runner.hpp"

namespace convbench::testing {

inline void expect_measured_equals_predicted(Backend& backend, const Graph& g, bool training) {
  const MemoryPrediction p = predict_memory(
      g, training, [&](const Op& op, Phase ph) { return backend.workspace_bytes(g, op, ph, training); },
      [&](int index) { return backend.fills_statistics_of(g, index); });
  ResultRow row;
  RunOptions options;
  options.time = false;
  run_variant(g, training, backend, options, row);
  ASSERT_EQ(row.status, RunStatus::ok) << row.message;
  ASSERT_TRUE(row.measured.has_value());
  EXPECT_EQ(row.measured->peak_bytes, p.peak_bytes);
  EXPECT_EQ(row.measured->saved_bytes, p.saved_bytes);
  for (int c = 0; c < kMemoryCategoryCount; ++c) {
    SCOPED_TRACE(std::string(to_string(static_cast<MemoryCategory>(c))));
    EXPECT_EQ(row.measured->at_peak[static_cast<size_t>(c)], p.at_peak[static_cast<size_t>(c)]);
    EXPECT_EQ(row.measured->peak_by_category[static_cast<size_t>(c)], p.peak_by_category[static_cast<size_t>(c)]);
  }
  // Reserved bytes are rounded, requested bytes are not; the cache never holds less.
  EXPECT_GE(row.measured->reserved_peak_bytes, row.measured->peak_bytes);
}

}  // namespace convbench::testing
