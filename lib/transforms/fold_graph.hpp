// Folding (re-parameterization): rewrites a graph so that every maximal linear region (convs with
// nothing non-linear between them, parallel branches of one input joined by add, sub or concat,
// slices, identity branches, batch norm in inference) becomes one conv, and the non-linear ops
// stay. configs/README.md "Folded convolutions" describes it for users.
//
//   once    the folded conv's weight and bias are computed when the graph is built, from the
//           source's (ParamInit::derived: the folded graph starts with exactly the weights its
//           source starts with at the same seed). Inference only: RepVGG, seed 002's answer.
//   online  one folded_conv op per region, whose parameters are the source's branch weights: it
//           computes the kernel from them inside the step and backpropagates through that
//           computation (OREPA). Batch norm is not folded online.
//
// What cannot be folded stays as it was, with the reason (FoldResult::kept); a graph where
// nothing folds is refused (FoldRefused, with every reason).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "graph/fold_program.hpp"
#include "graph/graph.hpp"

namespace convbench {

enum class FoldMode { once, online };

struct FoldOptions {
  FoldMode mode = FoldMode::once;
  bool training = false;  // the mode the graph runs in (batch norm and dropout fold in inference only)
};

// One conv the fold emitted.
struct FoldedConv {
  std::string name;              // its op in the folded graph
  std::vector<std::string> ops;  // the source ops it replaces, in graph order
  ConvAttrs attrs;               // its geometry
  int64_t kernel_macs = 0;       // computing its kernel from the weights (FoldProgram::macs)
};

struct FoldResult {
  Graph graph;
  std::vector<FoldedConv> convs;
  std::vector<std::string> kept;  // why each source op that was not folded stays ("relu 'act' is not linear")
};

// Nothing in the graph folds: what() lists every reason.
class FoldRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

FoldResult fold_graph(const Graph& source, const FoldOptions& options);

}  // namespace convbench
