// The CPU's float32 limits, measured: the peak FLOP/s that oneDNN's sgemm reaches on a large
// square product, and the copy bandwidth of a buffer far larger than the caches. Both use the
// threads the backends use (OpenMP's), so that an op's floor is drawn against what this process
// can reach, not a datasheet number it never sees. A machine busy with other work gives lower
// numbers (a cache written under load held 100.7 GFLOP/s and 16 GB/s where --calibrate then
// measured 211.7 and 28.8), so the measurement keeps what else the machine did meanwhile, read
// as a row's is (measure/host_activity.hpp), for its trust to be judged by the rows' rules.
#pragma once

#include <string>

#include "results/results.hpp"

namespace convbench {

struct CpuLimitsMeasurement {
  double peak_flops = 0;             // best of the repetitions
  double bandwidth_bytes_per_s = 0;  // best of the repetitions; read + write counted, as STREAM's copy
  std::string method;                // what was timed, for the limits' source
  HostActivity activity;             // the machine's activity from the first repetition to the last
};

// About one second on a 2-core machine; allocates 2 x 256 MiB and 3 x 16 MiB.
CpuLimitsMeasurement measure_cpu_limits();

}  // namespace convbench
