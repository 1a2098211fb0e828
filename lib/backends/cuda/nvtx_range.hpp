// A named NVTX range for the lifetime of a scope, so that Nsight Systems timelines show which op
// (or block, variant, phase) each kernel belongs to. NVTX3 is header-only and costs a few
// nanoseconds per range when no profiler is attached.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace convbench::cuda {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  explicit NvtxRange(const std::string& name) : NvtxRange(name.c_str()) {}
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace convbench::cuda
