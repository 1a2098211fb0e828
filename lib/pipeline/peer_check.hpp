// Numerical agreement with PyTorch: loads a tensor dump written by
// `scripts/torch_peer.py --dump-tensors` (inputs, weights, upstream gradient, and PyTorch's
// outputs, parameter gradients and updated BN statistics for one training step), runs the same
// step on a convbench backend with those exact values, and compares every tensor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/backend.hpp"
#include "spec/spec.hpp"

namespace convbench {

struct TensorAgreement {
  std::string name;      // "output", "<param> grad", "<buffer> after"
  double rel_error = 0;  // ||ours - peer|| / ||peer||
  bool ok = false;
  // An AMP step beyond the tolerance, where the dump holds the peer's float64 step of the same
  // inputs and weights ("truth"): each side's relative error from it. Such a tensor agrees when
  // ours is no farther from exact arithmetic than the peer's is (a peer whose half-precision
  // kernels accumulate in half precision on this CPU is the one that is off).
  std::optional<double> ours_from_truth = std::nullopt, peer_from_truth = std::nullopt;
  // How many times the peer's own distance ours may be: 1 against an AMP step; kFloat32Slack for a
  // float32 step on cpu or cuda against the peer's float64 one, where the dump also holds PyTorch's
  // float32 step (its distance from float64 is what float32 arithmetic allows this tensor).
  double truth_slack = 1;
};

// A float32 step sums in another order than PyTorch's (blocked products, other algorithms): its
// rounding may exceed PyTorch's own by a small factor, never by orders of magnitude.
inline constexpr double kFloat32Slack = 4;

// How one variant's check against a PyTorch dump ended.
enum class DumpCheckStatus {
  ok,           // every tensor agrees within the tolerance
  mismatch,     // at least one does not
  missing,      // no dump for this variant
  unsupported,  // the backend cannot run an op of it
  error,        // the run failed or the dump is malformed
};
std::string to_string(DumpCheckStatus status);

struct DumpCheck {
  std::string block, variant, point_label;
  std::string peer = "PyTorch";  // the dump's "peer" ("onnxruntime 1.32.0"); PyTorch's dumps name none
  DumpCheckStatus status = DumpCheckStatus::ok;
  double tolerance = 0;  // the largest relative error it allowed
  std::string message;
  std::vector<TensorAgreement> tensors;
};

// The dump file name the peer uses for a block point and variant.
std::string peer_dump_file_name(const BlockSpec& block, const VariantSpec& variant);

// An inference block's dump (mode infer) holds a forward only: input, output, and the weights or
// the seed of convbench's starting weights; its output alone is compared.
// Runs the dumped step on `backend` (float64 on the reference backend, the block's dtype
// otherwise) and compares; `tolerance` bounds every relative error, except that in an AMP step
// whose dump carries the peer's float64 step, a tensor further from the peer than that still
// agrees when it is no further from the float64 step than the peer's (TensorAgreement).
DumpCheck check_against_dump(const BlockSpec& block, const VariantSpec& variant, const nlohmann::json& dump,
                             Backend& backend, double tolerance);

}  // namespace convbench
