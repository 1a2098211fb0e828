#include "spec/spec.hpp"

#include <stdexcept>

namespace convbench {

const EnumWords<NormKind>& norm_kind_words() {
  static const EnumWords<NormKind> words = {
      {.value = NormKind::batch, .word = "batch"},
      {.value = NormKind::group, .word = "group"},
      {.value = NormKind::none, .word = "none"},
  };
  return words;
}

const EnumWords<ActKind>& act_kind_table() {
  static const EnumWords<ActKind> words = {
      {.value = ActKind::relu, .word = "relu"},           {.value = ActKind::leaky_relu, .word = "leaky_relu"},
      {.value = ActKind::relu6, .word = "relu6"},         {.value = ActKind::silu, .word = "silu"},
      {.value = ActKind::hardswish, .word = "hardswish"}, {.value = ActKind::gelu, .word = "gelu"},
      {.value = ActKind::none, .word = "none"},
  };
  return words;
}

const EnumWords<RunMode>& run_mode_words() {
  static const EnumWords<RunMode> words = {{.value = RunMode::train, .word = "train"},
                                           {.value = RunMode::infer, .word = "infer"}};
  return words;
}

const EnumWords<LayoutConversion>& layout_conversion_words() {
  static const EnumWords<LayoutConversion> words = {{.value = LayoutConversion::none, .word = "none"},
                                                    {.value = LayoutConversion::boundary, .word = "boundary"}};
  return words;
}

std::string_view to_string(NormKind kind) { return word_of(norm_kind_words(), kind); }
std::string_view to_string(ActKind kind) { return word_of(act_kind_table(), kind); }

const std::vector<std::string>& act_kind_words() {
  static const std::vector<std::string> words = words_of(act_kind_table());
  return words;
}

ActKind act_kind_of(const std::string& word) {
  if (const auto kind = value_of(act_kind_table(), word)) return *kind;
  throw std::logic_error("act_kind_of: \"" + word + "\" is no activation (act_kind_words() lists them)");
}

std::string_view to_string(RunMode mode) { return word_of(run_mode_words(), mode); }
std::string_view to_string(LayoutConversion conversion) { return word_of(layout_conversion_words(), conversion); }

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
