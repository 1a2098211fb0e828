#include "spec/block_kind_checks.hpp"

#include <vector>

namespace convbench {

void fit_norm_groups(const BlockSpec& block, const FitSite& at, int64_t channels, const std::string& which) {
  if (block.norm == NormKind::group && channels % block.norm_groups != 0)
    at.fail("", "group norm after the " + which + " needs its " + std::to_string(channels) +
                    " channels divisible by norm_groups " + std::to_string(block.norm_groups));
}

void fit_elements(const BlockSpec& block, const FitSite& at, const std::string& key, int64_t channels,
                  const std::string& which) {
  std::vector<int64_t> shape = {block.batch, channels};
  shape.insert(shape.end(), block.size.begin(), block.size.end());
  if (!checked_product(shape))
    at.fail(key, "the " + which + " tensor " + shape_text(shape) + " has more elements than int64 can count");
}

}  // namespace convbench
