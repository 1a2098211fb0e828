#include "measure/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "measure/stopping_rule.hpp"

namespace convbench {

Progress::Progress(int total, bool quiet)
    : total_(total), enabled_(!quiet && ::isatty(STDERR_FILENO)), start_s_(steady_seconds()) {}

Progress::~Progress() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
}

void Progress::start(int index, const std::string& label) {
  if (!enabled_) return;
  const double elapsed = steady_seconds() - start_s_;
  std::string eta = "?";
  if (index > 0) eta = std::to_string(static_cast<int>(elapsed / index * (total_ - index))) + "s";
  const int width = 20, filled = total_ > 0 ? width * index / total_ : 0;
  std::fprintf(stderr, "\r\033[K[%s%s] %d/%d %s  elapsed %ds, left ~%s",
               std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(width - filled), '.').c_str(), index + 1, total_, label.c_str(),
               static_cast<int>(elapsed), eta.c_str());
  std::fflush(stderr);
}

}  // namespace convbench
