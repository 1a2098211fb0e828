// A named NVTX range for the lifetime of a scope, so that Nsight Systems timelines show which op
// (or block, variant, phase) each kernel belongs to. NVTX3 is header-only and costs a few
// nanoseconds per range when no profiler is attached.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace convbench::cuda {

// Whether an NVTX tool (Nsight Systems, Nsight Compute) is attached: NVTX finds its tool through
// the NVTX_INJECTION64_PATH environment variable, which such tools set for the process they
// launch. Without one, the backend does not build the per-op range names: a string per op call
// is host time on the hot path that nobody reads.
inline bool nvtx_tool_attached(const char* injection_path) { return injection_path && *injection_path; }

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  explicit NvtxRange(const std::string& name) : NvtxRange(name.c_str()) {}
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace convbench::cuda
