#include "graph/shape_rules.hpp"

namespace convbench {

int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + 2 * padding;
  if (span > padded) return 0;
  return (padded - span) / stride + 1;
}

void require(bool ok, const std::string& op_name, const std::string& message) {
  if (!ok) throw GraphError(op_name + ": " + message);
}

void require_at(bool ok, const std::string& op_name, const ErrorSite& site, const std::string& message) {
  if (!ok) throw GraphError(op_name, message, site);
}

void check_window(const std::string& op_name, const std::vector<int64_t>& v, int dims, const char* what, int64_t min) {
  require(static_cast<int>(v.size()) == dims, op_name,
          std::string(what) + " needs " + std::to_string(dims) + " values, got " + std::to_string(v.size()));
  for (int64_t x : v)
    require(x >= min, op_name, std::string(what) + " must be >= " + std::to_string(min) + ", got " + std::to_string(x));
}

std::string dims_string(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

}  // namespace convbench
