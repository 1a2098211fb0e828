// Exact memory statistics by category, kept by every allocator the same way on every backend.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace convbench {

enum class MemoryCategory {
  parameters,   // trainable weights and biases
  buffers,      // BN running statistics
  gradients,    // parameter gradients
  inputs,       // the block input and the upstream gradient fed to backward
  saved,        // activations and statistics kept for backward
  temporaries,  // other op outputs and gradients flowing backward
  workspace,    // library scratch space (oneDNN scratchpads, cuDNN workspaces)
};
inline constexpr int kMemoryCategoryCount = 7;
std::string_view to_string(MemoryCategory c);

using CategoryBytes = std::array<int64_t, kMemoryCategoryCount>;

struct MemoryStats {
  int64_t current = 0;  // requested bytes live now
  int64_t peak = 0;     // highest `current` since the last reset
  CategoryBytes current_by_category{};
  CategoryBytes peak_by_category{};  // each category's own highest value
  CategoryBytes at_peak{};           // the breakdown of `current` at the moment of `peak`
  int64_t reserved = 0;              // bytes obtained from the system (cached blocks included)
  int64_t reserved_peak = 0;
  int64_t allocations = 0;         // allocate() calls since the last reset
  int64_t system_allocations = 0;  // of those, how many went to the system (cache misses)

  void on_allocate(int64_t bytes, MemoryCategory c);
  void on_free(int64_t bytes, MemoryCategory c);
  void on_reserve(int64_t delta);  // positive on system allocation, negative on release
  // Starts a new measurement: peaks become the current values, counters restart.
  void reset_peak();
};

}  // namespace convbench
