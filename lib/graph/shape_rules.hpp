// What shape inference in the op definitions (lib/ops/) shares: the error a bad shape raises,
// the size a window leaves, and the checks every windowed op makes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace convbench {

// The largest size or channel count a value may have along one dim (a spec may state no more; a
// shape rule refuses an output that grows past it). Products of two such numbers fit in int64.
constexpr int64_t kMaxDimSize = int64_t{1} << 31;

// Where in a custom op's spec entry a shape error belongs, so the spec parser can point at the
// field at fault: one of the op's keys ("groups"), entry `input` of its `inputs`, or (both unset)
// the op itself.
struct ErrorSite {
  std::string key;
  int input = -1;
};

// An invalid graph: a plain message ("<op>: what is wrong") that the caller locates (the variant
// builders add the spec's key path; the custom-op parser points at the site when it has one).
class GraphError : public std::runtime_error {
 public:
  explicit GraphError(const std::string& message) : std::runtime_error(message), detail_(message) {}
  GraphError(const std::string& op_name, const std::string& detail, ErrorSite site)
      : std::runtime_error(op_name + ": " + detail), detail_(detail), site_(std::move(site)) {}

  // The message without the op's name, for a caller that locates it at the site.
  const std::string& detail() const { return detail_; }
  const std::optional<ErrorSite>& site() const { return site_; }

 private:
  std::string detail_;
  std::optional<ErrorSite> site_;
};

// Output spatial size of a convolution or pooling window along one dim.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);

// Throws GraphError("<op_name>: <message>") unless `ok`.
void require(bool ok, const std::string& op_name, const std::string& message);
// The same, with the site in a spec the message is about.
void require_at(bool ok, const std::string& op_name, const ErrorSite& site, const std::string& message);
// A per-dim attribute: `dims` values, each at least `min`.
void check_window(const std::string& op_name, const std::vector<int64_t>& v, int dims, const char* what, int64_t min);
// "3x3x3"
std::string dims_string(const std::vector<int64_t>& v);

}  // namespace convbench
