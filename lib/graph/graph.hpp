// A variant's op graph: values (tensors), ops in execution order, parameters and buffers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/op.hpp"
#include "graph/tensor_desc.hpp"

namespace convbench {

struct Value {
  std::string name;
  TensorDesc desc;
};

// How a parameter or buffer starts, as PyTorch's modules start theirs.
enum class ParamInit {
  uniform_fan_in,  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)): conv weights and biases (kaiming_uniform(a=sqrt(5)))
  ones,            // norm weights, running variance
  zeros,           // norm biases, running mean
  blur,            // the binomial filter (outer product of [1, 2, 1]-like rows), normalised to sum 1
  derived,         // from the source graph's values (a folded graph: Graph::derivation says how)
};

// A trainable parameter or a non-trainable buffer (BN running statistics, a frozen conv's weight).
struct Param {
  std::string name;  // "<op>.weight", "<op>.running_mean", ...
  TensorDesc desc;
  int op = -1;         // owning op
  int64_t fan_in = 1;  // for PyTorch-like initialisation ranges
  ParamInit init = ParamInit::uniform_fan_in;
};

struct ParamDerivation;  // graph/fold_program.hpp

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Op> ops;  // topological (execution) order
  std::vector<Param> params;
  std::vector<Param> buffers;
  int input = 0;    // the block input value
  int output = -1;  // the block output value
  // Set on a graph derived from another (a folded variant): its parameters and buffers start as
  // functions of the source's (ParamInit::derived), see graph/fold_program.hpp.
  std::shared_ptr<const ParamDerivation> derivation;

  const TensorDesc& desc(int value) const { return values.at(static_cast<size_t>(value)).desc; }
  // Ops that read each value, in execution order.
  std::vector<std::vector<int>> consumers() const;
  // Whether each value needs a gradient: it depends on a parameter. The block input does not.
  std::vector<bool> requires_grad() const;
};

}  // namespace convbench
