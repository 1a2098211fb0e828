// What shape inference in the op definitions (lib/ops/) shares: the error a bad shape raises,
// the size a window leaves, and the checks every windowed op makes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace convbench {

// An invalid graph: a plain message ("<op>: what is wrong") that the caller locates (the variant
// builders add the spec's key path).
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Output spatial size of a convolution or pooling window along one dim.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);

// Throws GraphError("<op_name>: <message>") unless `ok`.
void require(bool ok, const std::string& op_name, const std::string& message);
// A per-dim attribute: `dims` values, each at least `min`.
void check_window(const std::string& op_name, const std::vector<int64_t>& v, int dims, const char* what, int64_t min);
// "3x3x3"
std::string dims_string(const std::vector<int64_t>& v);

}  // namespace convbench
