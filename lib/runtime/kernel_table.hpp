// The kernels a backend has for each op kind: forward and backward side by side, registered by
// the backend's file for that op or op family. The executor's calls go through Backend::forward
// and Backend::backward, which look the op's kind up here; a kind a backend has not registered is
// `unsupported` for that backend at run time (its rows say so), not a compile error, so a new op
// can land on one backend first.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/op.hpp"

namespace convbench {

struct ForwardCall;
struct BackwardCall;

struct OpKernels {
  std::function<void(const ForwardCall&)> forward;
  std::function<void(const BackwardCall&)> backward;
};

class KernelTable {
 public:
  // Registers `kind`'s kernels. Registering a kind twice, or with a missing direction, is a
  // programming error (std::logic_error).
  void add(OpKind kind, OpKernels kernels);
  // nullptr when no kernels are registered for `kind`.
  const OpKernels* find(OpKind kind) const;
  // The registered kinds, and a way to swap a registered kind's kernels for ones that wrap them
  // (the cpu backend widens its float32 kernels' half-precision calls); replacing a kind that is
  // not registered is a programming error.
  std::vector<OpKind> kinds() const;
  void replace(OpKind kind, OpKernels kernels);

 private:
  std::map<OpKind, OpKernels> kernels_;
};

}  // namespace convbench
