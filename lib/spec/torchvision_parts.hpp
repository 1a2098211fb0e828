// The parts torchvision's efficient blocks are built from (torchvision/ops/misc.py and the model
// files), for the block kinds that are those blocks (kind_inverted_residual.cpp, kind_mbconv.cpp,
// kind_fused_mbconv.cpp, kind_convnext.cpp, kind_shufflenet_unit.cpp, kind_densenet_layer.cpp).
// Unlike the classic kinds' conv -> norm -> act units (BlockAssembler), these follow torchvision,
// not the block's fields: convs without bias before a batch norm with PyTorch's defaults, the
// kind's own activation, and the kind's own shortcut.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/graph_builder.hpp"
#include "spec/block_assembler.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// torchvision's _make_divisible(v, 8): v rounded to the nearest multiple of `divisor`, at least
// `divisor`, and not below 90% of v (the widths of MobileNetV3's squeezes and EfficientNet's
// expansions).
int64_t make_divisible(double v, int64_t divisor = 8);

// The activations a kind's `act` may name, and the op each is.
const std::vector<std::string>& kind_act_words();
OpKind kind_act_op(const std::string& word);

// A kind's `act`, or `fallback` when the variant does not give one.
std::string read_kind_act(const Field& variant, const std::string& fallback);

// Reads a probability in [0, 1) (a stochastic depth rate) at `key`, or 0 when absent.
double read_rate(const Field& variant, const std::string& key);
// Reads an expansion ratio in [1, 64] at `expand`, or `fallback` when absent.
double read_expand(const Field& variant, double fallback);

// For a kind's resolved spec: the widths its graph was built with (`widths`: op name -> key, the
// op's conv out_channels written at the key when the op exists) and its `shortcut` (identity when
// an op named "add" exists, else none).
void write_built_widths(const std::function<Graph()>& graph,
                        const std::vector<std::pair<std::string, std::string>>& widths, nlohmann::ordered_json& out);

// A squeeze-excitation: its width and activations.
struct SqueezeExcitation {
  int64_t squeeze = 0;
  OpKind act = OpKind::relu;
  OpKind gate = OpKind::sigmoid;
};

// Builds a kind's ops under the assembler's prefix: the block's kernel, padding and dilation for
// the spatial convs, 1x1 convs elsewhere.
class TorchvisionParts {
 public:
  explicit TorchvisionParts(BlockAssembler& a) : a_(a), b_(a.builder()), block_(a.block()) {}

  // Conv2dNormActivation: "<unit>conv" (no bias), "<unit>norm" (batch norm) and, with an act,
  // "<unit>act". `spatial`: the block's kernel (else 1x1); `stride`: the block's (else 1).
  int conv_norm_act(const std::string& unit, int x, int64_t out, bool spatial, bool strided, int64_t groups,
                    std::optional<OpKind> act);
  // A conv with a bias and no norm (ConvNeXt's, and squeeze-excitation's 1x1 fc layers).
  int conv_with_bias(const std::string& name, int x, int64_t out, bool spatial, int64_t groups);
  // SqueezeExcitation(channels, squeeze, act, gate): the mean over space ("se.pool"), 1x1 conv
  // with bias ("se.fc1"), act ("se.act"), 1x1 conv with bias ("se.fc2"), gate ("se.gate"), and
  // the input scaled by it ("se.scale", input first: torchvision's `scale * input` multiplies the
  // same values).
  int squeeze_excitation(int x, int64_t squeeze, OpKind act, OpKind gate);
  // Stochastic depth ("drop_path", only for p > 0: torchvision's returns its input at p = 0) then
  // the identity shortcut ("add").
  int drop_path_and_add(int x, int main, double p);
  // MobileNetV2's inverted bottleneck, MBConv's too: the 1x1 expansion to `hidden` ("expand.*",
  // none when hidden is in_channels), the depthwise conv with the block's kernel and stride
  // ("depthwise.*"), the squeeze-excitation when given, the 1x1 projection ("project.*", no act).
  // The shortcut is the caller's.
  int inverted_bottleneck(int x, int64_t hidden, OpKind act, const std::optional<SqueezeExcitation>& se);

  // Whether the block keeps its shape: stride 1 and in_channels = out_channels.
  bool keeps_shape() const;
  GraphBuilder& builder() { return b_; }
  const BlockSpec& block() const { return block_; }
  std::string name(const std::string& op) const { return a_.name(op); }

 private:
  BlockAssembler& a_;
  GraphBuilder& b_;
  const BlockSpec& block_;
};

}  // namespace convbench
