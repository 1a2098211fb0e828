// The starting values of a graph's parameters and buffers, as PyTorch's modules start theirs
// (uniform in +-1/sqrt(fan_in) for conv weights and biases, ones and zeros for norm affine, zero
// mean and unit variance running statistics, the binomial blur), drawn in graph order from one
// seeded generator: parameters first, then buffers; or the values the user's model file gives
// (ParamInit::given: an ONNX file's initializers), which draw nothing. A derived graph (a folded variant) draws its
// source's values the same way and computes its own from them (graph/fold_program.hpp), so it
// starts with exactly the weights its source starts with.
//
// Executor::init_state uploads these; the fold's proof calls derive_values on random values.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "graph/fold_program.hpp"
#include "graph/graph.hpp"

namespace convbench {

struct GraphValues {
  std::vector<std::vector<double>> params, buffers;  // one per graph param / buffer, logical order
};

// One parameter's or buffer's starting values (not for ParamInit::derived).
std::vector<double> initial_values(const Param& p, std::mt19937_64& rng);

// Every parameter's and buffer's starting values for `seed`.
GraphValues initial_graph_values(const Graph& graph, uint64_t seed);

// A derived graph's values from its source's (`source` in the source graph's order).
GraphValues derive_values(const ParamDerivation& derivation, const GraphValues& source);

}  // namespace convbench
