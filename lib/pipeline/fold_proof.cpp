#include "pipeline/fold_proof.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "backends/backend_registry.hpp"
#include "ops/param_values.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"

namespace convbench {
namespace {

std::vector<double> uniform(int64_t n, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

// Uploads `values` into a fresh state of `ex`'s graph.
ModelState state_with(Executor& ex, const GraphValues& values) {
  ModelState s = ex.init_state(0);
  for (size_t i = 0; i < s.params.size(); ++i) upload(ex.backend(), s.params[i], values.params.at(i));
  for (size_t i = 0; i < s.buffers.size(); ++i) upload(ex.backend(), s.buffers[i], values.buffers.at(i));
  return s;
}

}  // namespace

double max_relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("max_relative_error: sizes differ");
  double scale = 0.0, diff = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::abs(a[i]));
    diff = std::max(diff, std::abs(a[i] - b[i]));
    if (std::isnan(b[i]) || std::isnan(a[i])) return INFINITY;
  }
  return scale > 0.0 ? diff / scale : diff;
}

FoldProof prove_fold(const Graph& source, const Graph& folded, bool training, uint64_t seed) {
  if (!folded.derivation) throw std::invalid_argument("prove_fold: the folded graph has no derivation");
  if (source.desc(source.input).dtype != DType::float64 || folded.desc(folded.input).dtype != DType::float64)
    throw std::invalid_argument("prove_fold: both graphs must be float64");
  std::unique_ptr<Backend> backend = make_backend("reference");
  std::mt19937_64 rng(seed);
  // Random values, or the user's where their model file gives them (an ONNX block's
  // initializers): the proof is then about the weights they will run with.
  auto values = [&](const Param& p, double lo, double hi) {
    return p.init == ParamInit::given ? *p.values : uniform(p.desc.numel(), rng, lo, hi);
  };
  GraphValues src;
  for (const Param& p : source.params) src.params.push_back(values(p, -1.0, 1.0));
  // Buffers are batch norm running statistics (a variance must be positive) or frozen weights.
  for (const Param& b : source.buffers) src.buffers.push_back(values(b, 0.5, 1.5));
  const GraphValues fold = derive_values(*folded.derivation, src);
  const std::vector<double> x = uniform(source.desc(source.input).numel(), rng, -1.0, 1.0);

  Executor a(source, *backend, training), b(folded, *backend, training);
  a.set_dropout_seed(seed, true);  // the same masks in both graphs, whatever an op's position
  b.set_dropout_seed(seed, true);
  ModelState sa = state_with(a, src), sb = state_with(b, fold);
  Tensor xa = make_tensor(backend->allocator(), source.desc(source.input), MemoryCategory::inputs);
  upload(*backend, xa, x);
  const Tensor ya = a.forward(sa, xa), yb = b.forward(sb, xa);
  FoldProof proof;
  const std::vector<double> out_a = download(*backend, ya);
  proof.output_error = max_relative_error(out_a, download(*backend, yb));
  if (!training) return proof;

  Tensor dy = make_tensor(backend->allocator(), source.desc(source.output), MemoryCategory::inputs);
  upload(*backend, dy, uniform(dy.desc.numel(), rng, -1.0, 1.0));
  a.backward(sa, dy);
  b.backward(sb, dy);
  proof.gradient_error = 0.0;
  // Every folded parameter copies one source parameter (fold: online): compare their gradients.
  for (size_t i = 0; i < folded.params.size(); ++i) {
    const DerivedValue& d = folded.derivation->params.at(i);
    if (d.from != DerivedValue::From::source_param)
      throw std::invalid_argument("prove_fold: a trained folded parameter must be a source parameter");
    const std::vector<double> ga = download(*backend, sa.grads.at(static_cast<size_t>(d.index)));
    const std::vector<double> gb = download(*backend, sb.grads.at(i));
    proof.gradient_error = std::max(proof.gradient_error, max_relative_error(ga, gb));
  }
  return proof;
}

}  // namespace convbench
