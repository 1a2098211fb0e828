// The `verify` pipeline: convbench's outputs and every gradient against PyTorch's, on the same
// inputs and weights (dumps from `scripts/torch_peer.py --dump-tensors`), one check per training
// variant of a spec; and an inference variant's output against a forward dump where the folder
// has one (ONNX Runtime's, written by tests/onnx_runtime_peer_test.py).
#pragma once

#include <string>
#include <vector>

#include "pipeline/peer_check.hpp"
#include "spec/spec.hpp"

namespace convbench {

struct VerifyOptions {
  std::string device = "cpu";  // cpu | reference (float64)
  double tolerance = -1;       // largest relative error; <= 0: default_tolerance's, per variant
};

// The largest relative error a check allows unless the user gives one: a plain step replayed in
// float64 on the reference backend agrees with PyTorch's float64 step to rounding (1e-9), in
// float32 on cpu to float32 accumulation order (1e-4). An AMP step (precision amp_*) stores its
// activations in bfloat16 or float16, which PyTorch and convbench round at slightly different
// points (PyTorch's CPU kernels accumulate in float32, the reference in float64): 5e-2, over a
// measured worst of 2.1e-2 (configs/README.md "Mixed precision").
double default_tolerance(const std::string& device, Precision precision);

struct Verification {
  std::string device;
  std::vector<DumpCheck> checks;  // spec order: training blocks, and inference blocks that have a dump
  int failures() const;           // neither ok nor unsupported
  int agreeing() const;           // ok
};

// Throws InputError when `dump_dir` is not a folder or a dump cannot be read; a missing dump is a
// failed check, not an error.
Verification verify(const Spec& spec, const std::string& dump_dir, const VerifyOptions& options);

// The table of checks and the summary line `convbench verify` prints.
std::string format_verification(const Verification& v);

}  // namespace convbench
