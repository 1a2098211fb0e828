// Tensors placed inside an op call's workspace: the scratch bytes the executor allocated (and the
// allocator measured) for the call, handed out in 256-byte aligned slices. A folded_conv call
// keeps its computed kernel, its gradient and the fold's registers there, so that they count in
// the measured peak as the workspace they are, and the backend's conv kernels, which take
// tensors, can read them. The tensors must not outlive the call.
#pragma once

#include <cstdint>

#include "runtime/tensor.hpp"

namespace convbench {

inline constexpr int64_t kArenaAlignment = 256;
inline int64_t arena_bytes(int64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

class WorkspaceArena final : public Allocator {
 public:
  WorkspaceArena(void* base, int64_t bytes, bool on_device)
      : base_(static_cast<char*>(base)), bytes_(bytes), on_device_(on_device) {}
  // The next slice, as a tensor of `desc` (category: workspace).
  Tensor tensor(const TensorDesc& desc) { return make_tensor(*this, desc, MemoryCategory::workspace); }
  // The next `bytes` raw bytes.
  void* take(int64_t bytes);
  void* rest() const { return base_ + used_; }  // what is left (another kernel's workspace)
  int64_t rest_bytes() const { return bytes_ - used_; }
  void release_cached() override {}
  bool on_device() const override { return on_device_; }

 protected:
  void* do_allocate(int64_t bytes) override { return take(bytes); }
  void do_deallocate(void*, int64_t) override {}

 private:
  char* base_;
  int64_t bytes_, used_ = 0;
  bool on_device_;
};

}  // namespace convbench
