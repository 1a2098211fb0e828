#include "runtime/memory_stats.hpp"

namespace convbench {

std::string_view to_string(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::parameters: return "parameters";
    case MemoryCategory::buffers: return "buffers";
    case MemoryCategory::gradients: return "gradients";
    case MemoryCategory::inputs: return "inputs";
    case MemoryCategory::saved: return "saved";
    case MemoryCategory::temporaries: return "temporaries";
    case MemoryCategory::workspace: return "workspace";
  }
  return "?";
}

void MemoryStats::on_allocate(int64_t bytes, MemoryCategory c) {
  const auto i = static_cast<size_t>(c);
  current += bytes;
  current_by_category[i] += bytes;
  if (current_by_category[i] > peak_by_category[i]) peak_by_category[i] = current_by_category[i];
  if (current > peak) {
    peak = current;
    at_peak = current_by_category;
  }
  ++allocations;
}

void MemoryStats::on_free(int64_t bytes, MemoryCategory c) {
  current -= bytes;
  current_by_category[static_cast<size_t>(c)] -= bytes;
}

void MemoryStats::on_reserve(int64_t delta) {
  reserved += delta;
  if (delta > 0) ++system_allocations;
  if (reserved > reserved_peak) reserved_peak = reserved;
}

void MemoryStats::reset_peak() {
  peak = current;
  peak_by_category = current_by_category;
  at_peak = current_by_category;
  reserved_peak = reserved;
  allocations = 0;
  system_allocations = 0;
}

}  // namespace convbench
