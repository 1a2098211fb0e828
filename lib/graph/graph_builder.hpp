// Builds a Graph op by op, inferring every output shape as it goes. Each method returns the id of
// the value it produces. Invalid shapes throw GraphError with a plain message that the caller
// locates (the variant builders add the spec's key path).
#pragma once

#include <stdexcept>
#include <string>

#include "graph/graph.hpp"

namespace convbench {

class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GraphBuilder {
 public:
  GraphBuilder(std::string graph_name, const TensorDesc& input);

  int input() const { return graph_.input; }
  const TensorDesc& desc(int value) const { return graph_.desc(value); }

  int conv(const std::string& name, int x, const ConvAttrs& attrs);
  int conv_transpose(const std::string& name, int x, const ConvAttrs& attrs);
  int batch_norm(const std::string& name, int x, double eps = 1e-5, double momentum = 0.1);
  int group_norm(const std::string& name, int x, int64_t groups, double eps = 1e-5);
  int relu(const std::string& name, int x);
  int leaky_relu(const std::string& name, int x, double negative_slope);
  int dropout(const std::string& name, int x, double p);
  int add(const std::string& name, int a, int b);
  int sub(const std::string& name, int a, int b);
  int concat(const std::string& name, const std::vector<int>& xs);
  int max_pool(const std::string& name, int x, const PoolAttrs& attrs);
  int avg_pool(const std::string& name, int x, const PoolAttrs& attrs);
  int upsample(const std::string& name, int x, int64_t scale);

  // Marks the output and returns the finished graph.
  Graph finish(int output);

 private:
  int add_op(Op op, const TensorDesc& out);
  void check_value(int v, const std::string& op_name) const;
  int add_param(const std::string& name, std::vector<int64_t> shape, int op, int64_t fan_in,
                ParamInit init = ParamInit::uniform_fan_in);
  int add_buffer(const std::string& name, std::vector<int64_t> shape, int op, ParamInit init);

  Graph graph_;
};

// Output spatial size of a convolution or pooling window along one dim.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);

}  // namespace convbench
