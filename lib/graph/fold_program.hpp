// A fold program: how one convolution's kernel (and bias) is computed from the weights of a
// linear subgraph it replaces (lib/transforms/ builds it; configs/README.md "Folded convolutions").
//
// The program works on registers, each a linear map from the region's source value x to one of
// its values v, held as a dense kernel K[out][in][taps] (taps per spatial dim, padded to three
// dims with leading 1s, as the reference backend pads 2-D to 3-D) and a bias b[out]:
//   v[n, c, i] = b[c] + sum over c', t of K[c, c', t] * x[n, c', S*i + t - P]
// per spatial dim, where the stride S and the padding P of each register are what the transform
// tracked (the program itself needs only the offsets between registers, in its steps).
//
// The steps only ever read earlier registers and the operands (the source's parameters and, for
// a fold at build time, its buffers), so running them in order gives the last register; `emit`
// then cuts the folded conv's weight out of it. Forward and adjoint are in ops/fold_eval.hpp
// (host, float and double) and kernels/fold.cu (CUDA).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace convbench {

using FoldExtent = std::array<int64_t, 3>;

struct FoldRegister {
  int64_t out_channels = 0, in_channels = 0;
  FoldExtent taps{1, 1, 1};
  bool bias = false;  // whether the map has a constant term (some conv bias or batch norm shift)
  int64_t tap_count() const { return taps[0] * taps[1] * taps[2]; }
  int64_t kernel_numel() const { return out_channels * in_channels * tap_count(); }
};

enum class FoldStepKind {
  // dst = conv(weight, bias) applied to src, whose `channels` channels the conv reads (src -1:
  // channels [src_channel, src_channel + channels) of the source value itself). The conv's tap q
  // lands at offset tap_step * q of src's taps: tap_step = src's stride x the conv's dilation.
  //   K_dst[c2][c0][tap_step*q + t] = sum over c1 in c2's group, q of W[c2][c1 - g0][q] K_src[c1][c0][t]
  //   b_dst[c2] = bias[c2] + sum over c1, q of W[c2][c1 - g0][q] b_src[c1]
  compose_conv,
  // dst[dst_channel + c][.][t + shift] += scale * src[src_channel + c][.][t] for c < channels, and
  // the bias alike (src -1: the identity map, whose input channel src_channel + c is 1 at offset
  // 0). add, sub, concat, slice and the identity branch are made of these; dst starts at zero.
  accumulate,
  // dst = batch norm in inference applied to src: per channel s = gamma / sqrt(var + eps),
  // K_dst = s K_src, b_dst = s (b_src - mean) + beta. Only in a fold at build time.
  batch_norm,
};

struct FoldStep {
  FoldStepKind kind = FoldStepKind::accumulate;
  int dst = -1;
  int src = -1;  // -1: the identity map of the source value
  // compose_conv: weight and bias operands (bias -1: none); batch_norm: weight, bias, mean, var.
  int weight = -1, bias = -1, mean = -1, var = -1;
  FoldExtent kernel{1, 1, 1}, tap_step{1, 1, 1};
  int64_t groups = 1;
  // accumulate
  double scale = 1.0;
  int64_t src_channel = 0, dst_channel = 0, channels = 0;
  FoldExtent shift{0, 0, 0};
  double eps = 1e-5;  // batch_norm
};

// Where an operand's values come from in the source graph.
struct FoldOperand {
  std::string name;  // the source's parameter or buffer name ("p.weight")
  std::vector<int64_t> shape;
  bool buffer = false;  // a buffer of the source graph (BN running statistics), else a parameter
  int index = -1;       // into the source graph's params or buffers
  int64_t numel() const;
};

struct FoldProgram {
  std::vector<FoldRegister> registers;
  std::vector<FoldStep> steps;
  std::vector<FoldOperand> operands;
  int result = -1;  // the register the folded conv is cut out of
  // The cut: weight[co][j][q] = K_result[co][group(co) * in/groups + j][first_tap + dilation * q].
  int64_t groups = 1;
  FoldExtent first_tap{0, 0, 0}, dilation{1, 1, 1}, kernel{1, 1, 1};
  int spatial_dims = 2;  // 2 or 3: the weight's kernel dims are the last spatial_dims of `kernel`

  const FoldRegister& out() const { return registers.at(static_cast<size_t>(result)); }
  // The folded conv's weight shape (Cout, Cin/groups, k...) and whether it has a bias.
  std::vector<int64_t> weight_shape() const;
  bool has_bias() const { return out().bias; }
  // Multiply-adds of running the steps once (what computing the kernel costs).
  int64_t macs() const;
  // Elements of all registers (a run holds them all at once; the adjoint holds their gradients too).
  int64_t register_elements() const;
};

// How a derived graph's parameters and buffers start: from its source graph's (a folded graph).
// init_state draws the source's values exactly as it would for the source, then copies or folds
// them, so a folded variant starts with the very weights its source starts with at the same seed.
struct DerivedValue {
  enum class From { source_param, source_buffer, fold_weight, fold_bias };
  From from = From::source_param;
  int index = -1;  // source param or buffer index, or program index
};

struct ParamDerivation {
  std::vector<Param> source_params, source_buffers;  // in the source graph's order
  std::vector<std::shared_ptr<const FoldProgram>> programs;
  std::vector<DerivedValue> params, buffers;  // one per derived graph param / buffer
};

}  // namespace convbench
