// The linear-map machinery of folding: every value of a linear region of a graph as an affine
// conv map of one source value x (the region's root),
//   v[n, c, i] = b[c] + sum over c', t of K[c, c', t] * x[n, c', S*i + t - P]    (per spatial dim)
// tracked symbolically (stride S, padding P, the span of taps, which taps and which channel pairs
// can be non-zero, which channels have a constant term) while the fold program
// (graph/fold_program.hpp) that computes K and b from the weights is written step by step.
//
// Each rule either extends the program or refuses with the reason (LinearMapRefusal), so the
// transform (fold_graph.hpp) can keep the op and say why. Rules:
//   conv B after u: stride S_u*s, taps at S_u*dilation*q + t_u, padding S_u*p + P_u; exact only if
//     u is zero wherever B reads its zero padding (border_violation), checked with integers;
//   add / sub / concat of maps of one root and one stride: aligned on the larger padding;
//   slice: a channel range; batch norm in inference: a per-channel scale and shift.
// At the end, a map becomes one conv (cut_conv): the taps' common step becomes the dilation, the
// channel pairs' block-diagonal structure the groups.
#pragma once

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/fold_program.hpp"
#include "graph/graph.hpp"

namespace convbench {

// Why an op cannot join the linear map of its input(s).
class LinearMapRefusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What is known of one map without any weight's value.
struct LinearMap {
  int root = -1;  // the graph value x the map reads
  int reg = -1;   // its register in the program; -1: the identity map of the root
  int64_t out_channels = 0, in_channels = 0;
  FoldExtent stride{1, 1, 1}, padding{0, 0, 0}, taps{1, 1, 1};
  std::array<std::vector<char>, 3> tap_used;  // per dim: which tap offsets some entry uses
  std::vector<char> pairs;                    // out x in: which channel pairs can be non-zero
  std::vector<char> constant;                 // per out channel: has a constant term
  std::vector<int> ops;                       // the graph ops folded into it, in graph order
  // >= 0 when the map is rows [identity_rows, identity_rows + out_channels) of the identity (the
  // root itself, or a slice of it): a conv or a join then reads the root's channels directly.
  int64_t identity_rows = -1;
  bool any_constant() const;
};

// The geometry of one conv equal to a map (cut_conv), or why there is none.
struct ConvCut {
  ConvAttrs attrs;  // out_channels, kernel, stride, padding, dilation, groups, bias (per real dim)
  FoldExtent first_tap{0, 0, 0}, dilation{1, 1, 1}, kernel{1, 1, 1};
};

class LinearMapBuilder {
 public:
  // `graph` is the source graph; the maps and the program refer to its values, params and buffers.
  explicit LinearMapBuilder(const Graph& graph);

  // The identity map of value `v` (a region's root).
  int identity(int v);
  const LinearMap& map(int m) const { return maps_.at(static_cast<size_t>(m)); }

  // The map of op `op`'s output, from the maps of its inputs (one per op input); throws
  // LinearMapRefusal with the reason when the op is not linear or the maps cannot be combined.
  // `inference`: batch norm folds with its running statistics, dropout is the identity.
  // `batch_norm_allowed`: false for a fold computed inside the training step (fold: online).
  int apply(int op, const std::vector<int>& input_maps, bool inference, bool batch_norm_allowed);

  // The single conv equal to map `m` applied to its root, giving graph value `value`, or a refusal
  // with the reason (a border the conv's zero padding cannot express, an output size a conv would
  // not give).
  ConvCut cut_conv(int m, int value) const;

  // The program computing map `m`'s register and cutting `cut` out of it: only the steps and
  // operands it needs, renumbered.
  FoldProgram program_for(int m, const ConvCut& cut) const;

 private:
  int new_register(LinearMap map, bool bias);
  int compose_conv(const Op& op, const LinearMap& u);
  int combine(const Op& op, const std::vector<int>& inputs, const std::vector<double>& signs, bool stack);
  int slice(const Op& op, const LinearMap& u);
  int batch_norm(const Op& op, const LinearMap& u);
  int operand(bool buffer, int index);
  void check_border(const Op& op, const LinearMap& u) const;
  FoldExtent extent(int value) const;  // spatial size padded to three dims

  const Graph& graph_;
  int dims_;
  std::vector<LinearMap> maps_;
  FoldProgram program_;  // every register and step so far (all maps of the graph)
};

}  // namespace convbench
