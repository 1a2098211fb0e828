// A one-line progress bar on stderr for long runs: which block / variant / point, elapsed time
// and an estimate of what is left. Silent when stderr is not a terminal or when quiet.
#pragma once

#include <string>

namespace convbench {

class Progress {
 public:
  Progress(int total, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts item `index` (0-based) with a label such as "vnet-block / bottleneck".
  void start(int index, const std::string& label);
  bool enabled() const { return enabled_; }

 private:
  int total_;
  bool enabled_;
  double start_s_;
};

}  // namespace convbench
