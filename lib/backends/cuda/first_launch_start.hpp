// Where an eager timing starts: at the first device work the timed region queues, not when the
// region begins. The host does work of its own before the first launch of a step (the executor
// sets up, allocates the first output): with the start event recorded on an idle stream at the
// region's beginning, that host time would count as device time, and for small steps it is a
// large share. From the first launch on, the interval still includes every gap in which the GPU
// waited for the host to queue the next op: that is eager execution's launch cost, which
// `--graph` removes and lib/backends/README.md names.
#pragma once

#include <functional>

namespace convbench::cuda {

class FirstLaunchStart {
 public:
  // A timed region begins: the first before_launch() calls `start` (records the start event).
  void arm(std::function<void()> start) {
    start_ = std::move(start);
    launched_ = false;
  }
  // Called before every launch: starts the timing once per region, does nothing outside one.
  void before_launch() {
    if (!start_ || launched_) return;
    launched_ = true;
    start_();
  }
  // The region ends. Returns whether anything was launched in it; the caller starts the timing
  // itself when nothing was (an empty interval).
  bool disarm() {
    start_ = nullptr;
    return launched_;
  }

 private:
  std::function<void()> start_;
  bool launched_ = false;
};

}  // namespace convbench::cuda
