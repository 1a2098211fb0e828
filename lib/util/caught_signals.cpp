#include "util/caught_signals.hpp"

#include <cstdio>

namespace convbench {
namespace {

volatile std::sig_atomic_t caught_signal = 0;

extern "C" void note_signal(int signo) { caught_signal = signo; }

}  // namespace

CaughtSignals::CaughtSignals() {
  caught_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a write in progress returns EINTR and its loop looks
  for (size_t i = 0; i < std::size(kCaught); ++i) {
    ::sigaction(kCaught[i], nullptr, &old_[i]);
    installed_[i] = old_[i].sa_handler != SIG_IGN;
    if (installed_[i]) ::sigaction(kCaught[i], &sa, nullptr);
  }
}

CaughtSignals::~CaughtSignals() {
  for (size_t i = 0; i < std::size(kCaught); ++i)
    if (installed_[i]) ::sigaction(kCaught[i], &old_[i], nullptr);
}

int CaughtSignals::pending() const { return caught_signal; }

int take_late_signal() {
  const int signo = caught_signal;
  caught_signal = 0;
  return signo;
}

std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(signo);
  }
}

int signal_number(const std::string& name) {
  for (const int signo : {SIGINT, SIGTERM, SIGHUP})
    if (name == signal_name(signo)) return signo;
  return 0;
}

void raise_with_default_action(int signo) {
  std::fflush(stdout);
  std::fflush(stderr);
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(signo, &sa, nullptr);
  std::raise(signo);
}

}  // namespace convbench
