// Philox-4x32-10 counter-based random numbers (Salmon et al., SC'11), usable on host and device.
// The dropout mask of element i under seed s is a pure function of (s, i), so every backend draws
// the same mask and their results can be compared element by element.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CONVBENCH_HD __host__ __device__
#else
#define CONVBENCH_HD
#endif

namespace convbench {

struct Philox4 {
  uint32_t v[4];
};

CONVBENCH_HD inline Philox4 philox4x32_10(uint64_t counter, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// Uniform in [0, 1) from 24 random bits.
CONVBENCH_HD inline float philox_uniform(uint64_t index, uint64_t seed) {
  return static_cast<float>(philox4x32_10(index, seed).v[0] >> 8) * (1.0f / 16777216.0f);
}

// True when element `index` survives dropout with drop probability p.
CONVBENCH_HD inline bool dropout_keep(uint64_t index, uint64_t seed, float p) {
  return philox_uniform(index, seed) >= p;
}

}  // namespace convbench
