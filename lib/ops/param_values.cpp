#include "ops/param_values.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ops/fold_eval.hpp"

namespace convbench {
namespace {

// The binomial blur filter for a weight (Cout, Cin/groups, k...): per spatial dim the row of
// binomial coefficients of length k ([1, 2, 1] for k = 3), their outer product normalised to sum
// 1, the same for every (out, in) channel pair.
std::vector<double> blur_values(const TensorDesc& weight) {
  std::vector<double> filter = {1.0};
  for (size_t d = 2; d < weight.shape.size(); ++d) {
    std::vector<double> row = {1.0};
    for (int64_t i = 1; i < weight.shape[d]; ++i) {  // Pascal's triangle, one row down
      row.push_back(1.0);
      for (size_t j = row.size() - 2; j > 0; --j) row[j] += row[j - 1];
    }
    std::vector<double> product;
    for (double f : filter)
      for (double r : row) product.push_back(f * r);
    filter = std::move(product);
  }
  double sum = 0.0;
  for (double f : filter) sum += f;
  std::vector<double> v;
  for (int64_t pair = 0; pair < weight.shape[0] * weight.shape[1]; ++pair)
    for (double f : filter) v.push_back(f / sum);
  return v;
}

std::vector<std::vector<double>> draw(const std::vector<Param>& list, std::mt19937_64& rng) {
  std::vector<std::vector<double>> out;
  for (const Param& p : list) out.push_back(initial_values(p, rng));
  return out;
}

}  // namespace

std::vector<double> initial_values(const Param& p, std::mt19937_64& rng) {
  std::vector<double> v(static_cast<size_t>(p.desc.numel()));
  switch (p.init) {
    case ParamInit::ones: std::fill(v.begin(), v.end(), 1.0); break;
    case ParamInit::zeros: std::fill(v.begin(), v.end(), 0.0); break;
    case ParamInit::layer_scale: std::fill(v.begin(), v.end(), 1e-6); break;
    case ParamInit::blur: v = blur_values(p.desc); break;
    case ParamInit::uniform_fan_in: {
      // kaiming_uniform(a=sqrt(5)) for weights and the bias rule both give +-1/sqrt(fan_in).
      const double bound = 1.0 / std::sqrt(static_cast<double>(p.fan_in));
      std::uniform_real_distribution<double> u(-bound, bound);
      for (double& x : v) x = u(rng);
      break;
    }
    case ParamInit::given:
      if (!p.values || p.values->size() != v.size())
        throw std::logic_error(p.name + ": given values missing or of another size than the parameter");
      v = *p.values;
      break;
    case ParamInit::derived:
      throw std::logic_error(p.name + ": a derived value comes from its source graph (initial_graph_values)");
  }
  return v;
}

GraphValues initial_graph_values(const Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (graph.derivation) {
    GraphValues source;
    source.params = draw(graph.derivation->source_params, rng);
    source.buffers = draw(graph.derivation->source_buffers, rng);
    return derive_values(*graph.derivation, source);
  }
  GraphValues v;
  v.params = draw(graph.params, rng);
  // After every parameter, so that a frozen conv's random weight does not shift the others'.
  v.buffers = draw(graph.buffers, rng);
  return v;
}

GraphValues derive_values(const ParamDerivation& d, const GraphValues& source) {
  // Each program's folded weight and bias, from the source's values of its operands.
  std::vector<std::vector<double>> weights, biases;
  for (const auto& program : d.programs) {
    std::vector<const double*> operands;
    for (const FoldOperand& o : program->operands) {
      const auto& list = o.buffer ? source.buffers : source.params;
      operands.push_back(list.at(static_cast<size_t>(o.index)).data());
    }
    std::vector<double> registers(static_cast<size_t>(FoldLayout(*program).elements));
    int64_t wn = 1;
    for (int64_t s : program->weight_shape()) wn *= s;
    std::vector<double> w(static_cast<size_t>(wn)), b(static_cast<size_t>(program->out().out_channels));
    fold_forward(*program, operands, registers.data(), w.data(), program->has_bias() ? b.data() : nullptr);
    weights.push_back(std::move(w));
    biases.push_back(std::move(b));
  }
  auto value = [&](const DerivedValue& v) -> std::vector<double> {
    const auto i = static_cast<size_t>(v.index);
    switch (v.from) {
      case DerivedValue::From::source_param: return source.params.at(i);
      case DerivedValue::From::source_buffer: return source.buffers.at(i);
      case DerivedValue::From::fold_weight: return weights.at(i);
      case DerivedValue::From::fold_bias: return biases.at(i);
    }
    return {};
  };
  GraphValues out;
  for (const DerivedValue& v : d.params) out.params.push_back(value(v));
  for (const DerivedValue& v : d.buffers) out.buffers.push_back(value(v));
  return out;
}

}  // namespace convbench
