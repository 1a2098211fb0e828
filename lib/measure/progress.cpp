#include "measure/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "measure/stopping_rule.hpp"

namespace convbench {
namespace {
// Often enough that the elapsed seconds tick, rarely enough to cost nothing.
constexpr auto kRedrawEvery = std::chrono::milliseconds(500);
}  // namespace

int stderr_terminal_width() {
  winsize w{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const int c = std::atoi(columns);
    if (c > 0) return c;
  }
  return 80;
}

std::string Progress::render(int index, int total, const std::string& label, double elapsed_s, int width) {
  std::string eta = "?";
  if (index > 0) eta = std::to_string(static_cast<int>(elapsed_s / index * (total - index))) + "s";
  const int bar = 20, filled = total > 0 ? std::clamp(bar * index / total, 0, bar) : 0;
  const std::string head = "[" + std::string(static_cast<size_t>(filled), '#') +
                           std::string(static_cast<size_t>(bar - filled), '.') + "] " + std::to_string(index + 1) +
                           "/" + std::to_string(total) + " ";
  const std::string tail = "  " + std::to_string(static_cast<int>(elapsed_s)) + "s, left ~" + eta;
  const int room = std::max(0, width - 1 - static_cast<int>(head.size() + tail.size()));
  std::string shown = label;
  if (static_cast<int>(shown.size()) > room)
    shown = room > 3 ? shown.substr(0, static_cast<size_t>(room - 3)) + "..." : "";
  std::string line = head + shown + tail;
  if (static_cast<int>(line.size()) > width - 1) line.resize(static_cast<size_t>(std::max(0, width - 1)));
  return line;
}

namespace {
// "45s", "1m50s", "2h05m".
std::string duration_text(double s) {
  const long t = std::lround(std::max(0.0, s));
  char buf[32];
  if (t < 60)
    std::snprintf(buf, sizeof buf, "%lds", t);
  else if (t < 3600)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return buf;
}
}  // namespace

std::string Progress::finished_line(int index, int total, const std::string& label, const std::string& outcome,
                                    double item_s, double elapsed_s) {
  const int done = index + 1, left = std::max(0, total - done);
  char item[32];
  std::snprintf(item, sizeof item, "%.1f s", item_s);
  return "convbench: " + std::to_string(done) + "/" + std::to_string(total) + " done, " + std::to_string(left) +
         " left" + (left > 0 ? " (about " + duration_text(elapsed_s / done * left) + ")" : "") + ": " + label + ": " +
         outcome + ", " + item;
}

Progress::Progress(int total, bool quiet)
    : total_(total),
      enabled_(!quiet && ::isatty(STDERR_FILENO)),
      lines_(!quiet && !::isatty(STDERR_FILENO)),
      start_s_(steady_seconds()) {
  if (enabled_) timer_ = std::thread([this] { timer_loop(); });
}

Progress::~Progress() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    erase_locked();
  }
  wake_.notify_all();
  timer_.join();
}

void Progress::start(int index, const std::string& label) {
  item_start_s_ = steady_seconds();
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  index_ = index;
  label_ = label;
  draw_locked();
}

void Progress::finish(int index, const std::string& label, const std::string& outcome) {
  if (!lines_) return;
  const double now = steady_seconds();
  if (now - start_s_ < kProgressLinesAfterS) return;
  const std::string line = finished_line(index, total_, label, outcome, now - item_start_s_, now - start_s_);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void Progress::above(const std::function<void()>& write) {
  if (!enabled_) {
    write();
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  erase_locked();
  write();
  std::fflush(stderr);
  draw_locked();
}

void Progress::draw_locked() {
  if (index_ < 0 || stopping_) return;
  const std::string line = render(index_, total_, label_, steady_seconds() - start_s_, stderr_terminal_width());
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::erase_locked() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

void Progress::timer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kRedrawEvery, [this] { return stopping_; });
    if (!stopping_ && shown_) draw_locked();
  }
}

}  // namespace convbench
