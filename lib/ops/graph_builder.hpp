// Builds a Graph op by op, inferring every output shape as it goes from the op's definition
// (lib/ops/<op>.cpp). Each method returns the id of the value it produces. Invalid shapes throw
// GraphError with a plain message that the caller locates (the variant builders add the spec's
// key path).
#pragma once

#include <string>
#include <unordered_set>

#include "graph/graph.hpp"
#include "graph/shape_rules.hpp"
#include "ops/op_fields.hpp"

namespace convbench {

class GraphBuilder {
 public:
  GraphBuilder(std::string graph_name, const TensorDesc& input);

  int input() const { return graph_.input; }
  // Ops added so far (a network slot's ops are the range between two counts).
  int op_count() const { return static_cast<int>(graph_.ops.size()); }
  const TensorDesc& desc(int value) const { return graph_.desc(value); }

  // Adds any op: `op` names its kind, name, input value ids and attributes. Its definition checks
  // the attributes and shapes, gives the output's shape and declares the op's parameters.
  int add(Op op);
  // Adds an op of a custom variant from the fields its spec gave: the kind's definition turns
  // them into attributes, with the defaults that depend on the block (`block_kernel`,
  // `block_bias`) or on the first input (its channels).
  int add_from_fields(OpKind kind, const std::string& name, std::vector<int> inputs, const OpFieldValues& fields,
                      const std::vector<int64_t>& block_kernel, bool block_bias);

  // The same, one method per op kind, for the variant builders and tests.
  int conv(const std::string& name, int x, const ConvAttrs& attrs);
  int conv_transpose(const std::string& name, int x, const ConvAttrs& attrs);
  int linear(const std::string& name, int x, int64_t out_features, bool bias = true);
  int batch_norm(const std::string& name, int x, double eps = 1e-5, double momentum = 0.1);
  // Batch norm then leaky ReLU as one op that saves its output (Inplace-ABN).
  int batch_norm_act(const std::string& name, int x, double negative_slope, double eps = 1e-5, double momentum = 0.1);
  int group_norm(const std::string& name, int x, int64_t groups, double eps = 1e-5);
  int layer_norm(const std::string& name, int x, double eps = 1e-5);  // over channels at each position
  int layer_scale(const std::string& name, int x);
  int channel_shuffle(const std::string& name, int x, int64_t groups);
  int relu(const std::string& name, int x);
  int leaky_relu(const std::string& name, int x, double negative_slope);
  // An activation without attributes, or with its defaults (sigmoid, silu, hardswish, relu6, gelu).
  int activation(OpKind kind, const std::string& name, int x);
  int dropout(const std::string& name, int x, double p);
  int channel_dropout(const std::string& name, int x, double p);
  int drop_path(const std::string& name, int x, double p);
  int add(const std::string& name, int a, int b);
  int sub(const std::string& name, int a, int b);
  int concat(const std::string& name, const std::vector<int>& xs);
  int max_pool(const std::string& name, int x, const PoolAttrs& attrs);
  int avg_pool(const std::string& name, int x, const PoolAttrs& attrs);
  int global_avg_pool(const std::string& name, int x);
  int upsample(const std::string& name, int x, int64_t scale);
  // Linear (bilinear, trilinear) by `scale`, or to `size` (the output's spatial size) when given.
  int upsample_linear(const std::string& name, int x, int64_t scale, bool align_corners = false,
                      std::vector<int64_t> size = {});
  int convert_layout(const std::string& name, int x);  // to the other memory layout

  // Starts the parameter or buffer `name` ("conv1.weight") of the op added last with values a
  // model file gives (ParamInit::given, logical order); GraphError when the op has none of that
  // name or its size differs.
  void give_values(const std::string& name, GivenValues values);

  // Marks the output and returns the finished graph.
  Graph finish(int output);

 private:
  void check_value(int v, const std::string& op_name) const;

  Graph graph_;
  // The ops' names so far: a duplicate is found in constant time, not by a scan of every op
  // (a 100,000-op network would otherwise compare 5 billion names).
  std::unordered_set<std::string> names_;
};

}  // namespace convbench
