// The reference backend: plain loops with double accumulation for every op of the IR, forward
// (training and inference) and backward, 2-D and 3-D, both layouts, every dtype. It is the test
// oracle the cpu and cuda backends are checked against, so it favours obviously correct code over
// speed: each op loads its tensors as doubles in logical order, computes, and stores the results
// rounded to the tensors' dtypes.
#pragma once

#include "backends/host_backend.hpp"

namespace convbench {

class ReferenceBackend : public HostBackend {
 public:
  ReferenceBackend();

  // Every op kind (each family's *_reference.cpp registers its kernels), dtype and layout.
  std::optional<std::string> limitation(const Graph& graph, const Op& op) const override;
  const KernelTable& kernels() const override { return kernels_; }
  // The kernels keep their scratch in ordinary vectors, never in executor workspace.
  int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) override;

  void accumulate(Tensor& dst, const Tensor& src) override;
  void add(Tensor& out, const Tensor& a, const Tensor& b) override;

 private:
  KernelTable kernels_;
};

}  // namespace convbench
