#include "backends/cpu/onednn_limits.hpp"

#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"
#include "ops/fold_eval.hpp"

namespace convbench::cpu {
namespace {

constexpr int64_t kFloatBytes = 4;  // the cpu backend computes in float32

// a * b, or INT64_MAX where that overflows: only ever compared with the limit.
int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

int64_t round_up(int64_t v, int64_t block) { return (v + block - 1) / block * block; }

std::string dims_text(const std::vector<int64_t>& dims) {
  return TensorDesc{dims, DType::float32, Layout::channels_first}.shape_string();
}

int64_t at_or(const std::vector<int64_t>& v, size_t i, int64_t fallback) { return i < v.size() ? v[i] : fallback; }

// One tensor as oneDNN may hold it: its dims (channels already padded where a blocked layout
// pads them) and what it is, for the message.
struct OneDnnTensor {
  std::string what;
  std::vector<int64_t> shape;  // as the graph has it
  int64_t bytes = 0;           // with the padding
};

// An activation (N, C, spatial...) of a convolution, its channels padded to whole blocks.
OneDnnTensor conv_activation(const std::string& what, const TensorDesc& d) {
  int64_t bytes = saturating_mul(d.batch(), round_up(d.channels(), kOneDnnChannelBlock));
  bytes = saturating_mul(bytes, d.spatial_size());
  return {what, d.shape, saturating_mul(bytes, kFloatBytes)};
}

// A convolution's weight, groups x (out/groups) x (in/groups) x kernel, both channel counts
// padded to whole blocks (OIhw16i16o and its grouped and 3-D kin).
OneDnnTensor conv_weight(const Op& conv, const TensorDesc& in, const TensorDesc& out) {
  const int64_t groups = std::max<int64_t>(1, conv.conv.groups);
  std::vector<int64_t> shape = {out.channels(), in.channels() / groups};
  int64_t bytes = saturating_mul(groups, round_up(out.channels() / groups, kOneDnnChannelBlock));
  bytes = saturating_mul(bytes, round_up(in.channels() / groups, kOneDnnChannelBlock));
  for (int64_t k : conv.conv.kernel) {
    shape.push_back(k);
    bytes = saturating_mul(bytes, k);
  }
  return {"weight", shape, saturating_mul(bytes, kFloatBytes)};
}

std::string too_large(const OneDnnTensor& t, const std::string& layout) {
  return "its " + t.what + " " + dims_text(t.shape) + " is " +
         (t.bytes == std::numeric_limits<int64_t>::max() ? std::string("more than 2^63") : std::to_string(t.bytes)) +
         " bytes " + layout + ", more than oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + "." +
         std::to_string(DNNL_VERSION_MINOR) + " takes: at most " + std::to_string(kOneDnnMaxTensorBytes) +
         " bytes (2^31 - 1) per tensor, as its x64 kernels count in 32-bit ints";
}

// The window of a convolution in `int`s: each padded extent (of the larger side: a transposed
// convolution's output) and dilated kernel span.
std::optional<std::string> window_limitation(const Op& conv, const TensorDesc& in, const TensorDesc& out) {
  const ConvAttrs& a = conv.conv;
  for (size_t d = 0; d < a.kernel.size() && 2 + d < in.shape.size() && 2 + d < out.shape.size(); ++d) {
    // Sizes and attributes are each at most 2^31 (spec/spec_field.hpp): these sums fit.
    const int64_t padded = std::max(in.shape[2 + d], out.shape[2 + d]) + 2 * at_or(a.padding, d, 0);
    const int64_t span = at_or(a.dilation, d, 1) * (a.kernel[d] - 1) + 1;
    const int64_t stride = at_or(a.stride, d, 1);
    if (std::max({padded, span, stride}) > kOneDnnMaxTensorBytes)
      return "its window in dim " + std::to_string(d) + " (padded extent " + std::to_string(padded) +
             ", dilated kernel " + std::to_string(span) + ", stride " + std::to_string(stride) +
             ") is more than oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) +
             " takes: its x64 kernels keep sizes in 32-bit ints (at most 2^31 - 1)";
  }
  return std::nullopt;
}

std::optional<std::string> conv_limitation(const Graph& graph, const Op& conv) {
  if (is_own_depthwise_conv(graph, conv)) return std::nullopt;  // our own loops, 64-bit
  const TensorDesc& in = graph.desc(conv.inputs.at(0));
  const TensorDesc& out = graph.desc(conv.output);
  const std::string blocked =
      "in oneDNN's blocked layout (channels padded to " + std::to_string(kOneDnnChannelBlock) + ")";
  for (const OneDnnTensor& t :
       {conv_activation("input", in), conv_activation("output", out), conv_weight(conv, in, out)})
    if (t.bytes > kOneDnnMaxTensorBytes) return too_large(t, blocked);
  return window_limitation(conv, in, out);
}

}  // namespace

std::optional<std::string> onednn_size_limitation(const Graph& graph, const Op& op) {
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose: return conv_limitation(graph, op);
    case OpKind::folded_conv: return conv_limitation(graph, folded_conv_as_conv(op));
    case OpKind::batch_norm: {
      // Only the channels-last forward runs on oneDNN, on the tensor as it is stored
      // (batch_norm_act runs in the backend's own loops).
      const TensorDesc& in = graph.desc(op.inputs.at(0));
      if (!batch_norm_on_onednn(in, Phase::forward)) return std::nullopt;
      const OneDnnTensor t{"input", in.shape, saturating_mul(in.numel(), kFloatBytes)};
      if (t.bytes > kOneDnnMaxTensorBytes) return too_large(t, "(channels last)");
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace convbench::cpu
