// A one-line progress bar on stderr for long runs: which block / variant / point, elapsed time
// and an estimate of what is left. When stderr is not a terminal (a CI log, `2> log`), a line per
// finished item instead, once the run has taken more than kProgressLinesAfterS (a short run stays
// silent): the count done and left, the item, its outcome and its time. Silent when quiet.
//
// The line is redrawn by a timer (so the elapsed time moves during a long row), cut to the
// terminal's width (a wrapped line cannot be erased with \r and would leave one stale line per
// redraw), and erased when the run ends, before anything prints the tables. Messages written
// while it shows go through above(), which erases the line, writes the message and redraws.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace convbench {

inline constexpr double kProgressLinesAfterS = 3.0;

class Progress {
 public:
  Progress(int total, bool quiet);
  ~Progress();  // stops the timer and erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts item `index` (0-based) with a label such as "vnet-block / bottleneck".
  void start(int index, const std::string& label);
  // Item `index` finished with `outcome` ("ok", "ok (disturbed)", "oom"): without a terminal, its
  // line once the run is past kProgressLinesAfterS.
  void finish(int index, const std::string& label, const std::string& outcome);
  // Runs `write` (which prints whole lines to stderr, e.g. a log message) with the bar out of
  // the way; without a bar, just runs it.
  void above(const std::function<void()>& write);
  bool enabled() const { return enabled_; }

  // The bar's text for a terminal `width` columns wide (exposed for tests): never wider than
  // width - 1, so the cursor stays on the line; the label is cut first.
  static std::string render(int index, int total, const std::string& label, double elapsed_s, int width);
  // A finished item's line (exposed for tests): "convbench: 3/32 done, 29 left (about 1m50s):
  // blk / b on cpu: ok, 4.1 s".
  static std::string finished_line(int index, int total, const std::string& label, const std::string& outcome,
                                   double item_s, double elapsed_s);

 private:
  void draw_locked();
  void erase_locked();
  void timer_loop();

  int total_;
  bool enabled_;  // the bar: a terminal, not quiet
  bool lines_;    // lines per finished item: no terminal, not quiet
  double start_s_;
  double item_start_s_ = 0;
  int index_ = -1;
  std::string label_;
  bool shown_ = false;
  bool stopping_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread timer_;
};

// Columns of the terminal on stderr (TIOCGWINSZ), else $COLUMNS, else 80.
int stderr_terminal_width();

}  // namespace convbench
