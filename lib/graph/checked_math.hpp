// 64-bit arithmetic that refuses to overflow: counts of huge blocks must fail loudly, never wrap.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace convbench {

class CountOverflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw CountOverflow("a count overflows 64 bits");
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw CountOverflow("a count overflows 64 bits");
  return r;
}

}  // namespace convbench
