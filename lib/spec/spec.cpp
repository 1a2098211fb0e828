#include "spec/spec.hpp"

#include <stdexcept>

namespace convbench {

std::string_view to_string(NormKind kind) {
  switch (kind) {
    case NormKind::batch: return "batch";
    case NormKind::group: return "group";
    case NormKind::none: return "none";
  }
  return "?";
}

std::string_view to_string(ActKind kind) {
  switch (kind) {
    case ActKind::relu: return "relu";
    case ActKind::leaky_relu: return "leaky_relu";
    case ActKind::relu6: return "relu6";
    case ActKind::silu: return "silu";
    case ActKind::hardswish: return "hardswish";
    case ActKind::gelu: return "gelu";
    case ActKind::none: return "none";
  }
  return "?";
}

namespace {
constexpr ActKind kActKinds[] = {ActKind::relu,      ActKind::leaky_relu, ActKind::relu6, ActKind::silu,
                                 ActKind::hardswish, ActKind::gelu,       ActKind::none};
}  // namespace

const std::vector<std::string>& act_kind_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w;
    for (const ActKind k : kActKinds) w.emplace_back(to_string(k));
    return w;
  }();
  return words;
}

ActKind act_kind_of(const std::string& word) {
  for (const ActKind k : kActKinds)
    if (to_string(k) == word) return k;
  throw std::logic_error("act_kind_of: \"" + word + "\" is no activation (act_kind_words() lists them)");
}

std::string_view to_string(RunMode mode) { return mode == RunMode::train ? "train" : "infer"; }

std::string_view to_string(LayoutConversion conversion) {
  return conversion == LayoutConversion::boundary ? "boundary" : "none";
}

const PrecisionChoice& precision_of(const BlockSpec& block, const VariantSpec& variant) {
  return variant.precision ? *variant.precision : block.precision;
}

const MemoryPolicyChoice& memory_policy_of(const BlockSpec& block, const VariantSpec& variant) {
  return variant.memory_policy ? *variant.memory_policy : block.memory_policy;
}

bool converts_at_boundary(const BlockSpec& block) {
  return block.layout_conversion == LayoutConversion::boundary && block.layout == Layout::channels_last;
}

TensorDesc block_input(const BlockSpec& block) {
  TensorDesc input;
  input.shape = {block.batch, block.in_channels};
  input.shape.insert(input.shape.end(), block.size.begin(), block.size.end());
  input.dtype = block.dtype;
  input.layout = converts_at_boundary(block) ? Layout::channels_first : block.layout;
  return input;
}

std::string point_label(const BlockSpec& block) {
  std::string out;
  for (const auto& [key, value] : block.point) {
    if (!out.empty()) out += ',';
    std::string v = value;
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    out += key + "=" + v;
  }
  return out;
}

}  // namespace convbench
