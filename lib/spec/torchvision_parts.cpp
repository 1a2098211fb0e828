#include "spec/torchvision_parts.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace convbench {

int64_t make_divisible(double v, int64_t divisor) {
  const auto d = static_cast<double>(divisor);
  int64_t rounded = std::max(divisor, static_cast<int64_t>(v + d / 2) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

namespace {

struct KindAct {
  const char* word;
  OpKind op;
};
constexpr KindAct kKindActs[] = {
    {"relu", OpKind::relu}, {"relu6", OpKind::relu6},     {"hardswish", OpKind::hardswish},    {"silu", OpKind::silu},
    {"gelu", OpKind::gelu}, {"sigmoid", OpKind::sigmoid}, {"hardsigmoid", OpKind::hardsigmoid}};

}  // namespace

const std::vector<std::string>& kind_act_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w;
    for (const KindAct& a : kKindActs) w.emplace_back(a.word);
    return w;
  }();
  return words;
}

OpKind kind_act_op(const std::string& word) {
  for (const KindAct& a : kKindActs)
    if (word == a.word) return a.op;
  throw std::logic_error("kind_act_op: \"" + word + "\" is not in kind_act_words()");
}

std::string read_kind_act(const Field& variant, const std::string& fallback) {
  if (auto f = variant.get("act")) return f->as_choice(kind_act_words(), "act");
  return fallback;
}

double read_rate(const Field& variant, const std::string& key) {
  const auto f = variant.get(key);
  if (!f) return 0.0;
  const double p = f->as_number();
  if (p < 0.0 || p >= 1.0) f->fail(key + " must be in [0, 1), got " + f->node().text);
  return p;
}

double read_expand(const Field& variant, double fallback) {
  const auto f = variant.get("expand");
  if (!f) return fallback;
  const double expand = f->as_number();
  if (!(expand >= 1.0 && expand <= 64.0)) f->fail("expand must be in [1, 64], got " + f->node().text);
  return expand;
}

void write_built_widths(const std::function<Graph()>& graph,
                        const std::vector<std::pair<std::string, std::string>>& widths, nlohmann::ordered_json& out) {
  if (!graph) return;
  bool shortcut = false;
  for (const Op& op : graph().ops) {
    for (const auto& [name, key] : widths)
      if (op.name == name) out[key] = op.conv.out_channels;
    shortcut = shortcut || op.name == "add";
  }
  out["shortcut"] = shortcut ? "identity" : "none";
}

int TorchvisionParts::conv_norm_act(const std::string& unit, int x, int64_t out, bool spatial, bool strided,
                                    int64_t groups, std::optional<OpKind> act) {
  const std::vector<int64_t> one(static_cast<size_t>(block_.dims), 1);
  const std::vector<int64_t> zero(static_cast<size_t>(block_.dims), 0);
  ConvAttrs c;
  c.out_channels = out;
  c.kernel = spatial ? block_.kernel : one;
  c.padding = spatial ? block_.padding : zero;
  c.dilation = spatial ? block_.dilation : one;
  c.stride = strided ? block_.stride : one;
  c.groups = groups;
  c.bias = false;  // a batch norm follows (torchvision's Conv2dNormActivation: bias=None -> False)
  int y = b_.conv(a_.name(unit + "conv"), x, c);
  y = b_.batch_norm(a_.name(unit + "norm"), y);
  if (!act) return y;
  if (*act == OpKind::relu) return b_.relu(a_.name(unit + "act"), y);
  return b_.activation(*act, a_.name(unit + "act"), y);
}

int TorchvisionParts::conv_with_bias(const std::string& name, int x, int64_t out, bool spatial, int64_t groups) {
  const std::vector<int64_t> one(static_cast<size_t>(block_.dims), 1);
  ConvAttrs c;
  c.out_channels = out;
  c.kernel = spatial ? block_.kernel : one;
  c.padding = spatial ? block_.padding : std::vector<int64_t>(static_cast<size_t>(block_.dims), 0);
  c.dilation = spatial ? block_.dilation : one;
  c.stride = one;
  c.groups = groups;
  c.bias = true;
  return b_.conv(a_.name(name), x, c);
}

int TorchvisionParts::squeeze_excitation(int x, int64_t squeeze, OpKind act, OpKind gate) {
  const int64_t channels = b_.desc(x).shape.at(1);
  int s = b_.global_avg_pool(a_.name("se.pool"), x);
  s = conv_with_bias("se.fc1", s, squeeze, false, 1);
  s = act == OpKind::relu ? b_.relu(a_.name("se.act"), s) : b_.activation(act, a_.name("se.act"), s);
  s = conv_with_bias("se.fc2", s, channels, false, 1);
  s = b_.activation(gate, a_.name("se.gate"), s);
  Op scale;
  scale.kind = OpKind::mul;
  scale.name = a_.name("se.scale");
  scale.inputs = {x, s};
  return b_.add(std::move(scale));
}

int TorchvisionParts::drop_path_and_add(int x, int main, double p) {
  if (p > 0.0) main = b_.drop_path(a_.name("drop_path"), main, p);
  return b_.add(a_.name("add"), main, x);
}

int TorchvisionParts::inverted_bottleneck(int x, int64_t hidden, OpKind act,
                                          const std::optional<SqueezeExcitation>& se) {
  int y = hidden == block_.in_channels ? x : conv_norm_act("expand.", x, hidden, false, false, 1, act);
  y = conv_norm_act("depthwise.", y, hidden, true, true, hidden, act);
  if (se) y = squeeze_excitation(y, se->squeeze, se->act, se->gate);
  return conv_norm_act("project.", y, block_.out_channels, false, false, 1, std::nullopt);
}

bool TorchvisionParts::keeps_shape() const {
  return block_.in_channels == block_.out_channels && has_unit_stride(block_);
}

}  // namespace convbench
