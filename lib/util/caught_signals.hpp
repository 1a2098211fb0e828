// The signals a user or a scheduler sends to end a run early (SIGINT from Ctrl-C, SIGTERM from
// kill or Slurm, SIGHUP from a closed terminal), caught for as long as a CaughtSignals lives, so
// that the code they interrupt can finish what must not be left half done (an output file, the
// rows already measured) and then end the way the signal asked.
//
// This is the one piece of process-wide state in convbench, and why: a signal handler can tell the
// code it interrupted only through an object of static storage duration. Nothing else reads it.
#pragma once

#include <csignal>
#include <cstddef>
#include <string>

namespace convbench {

class CaughtSignals {
 public:
  // Catches SIGINT, SIGTERM and SIGHUP (each that the process does not ignore: nohup's SIGHUP
  // stays ignored) and forgets any signal caught before.
  CaughtSignals();
  // Puts the previous handlers back. A signal caught and not yet acted on stays readable through
  // late_signal(), so that the caller can still act on it.
  ~CaughtSignals();
  CaughtSignals(const CaughtSignals&) = delete;
  CaughtSignals& operator=(const CaughtSignals&) = delete;

  // The signal caught since construction, or 0.
  int pending() const;

 private:
  static constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[std::size(kCaught)]{};
  bool installed_[std::size(kCaught)]{};
};

// A signal caught by a CaughtSignals that has since been destroyed (it arrived after its owner
// last looked), taken: reading it forgets it. 0 when there is none.
int take_late_signal();

// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
std::string signal_name(int signo);
// The other way round, for a name signal_name gives: 0 for any other text.
int signal_number(const std::string& name);

// Ends the process as `signo` would have without convbench's handler (its default action: the
// shell then sees 128 + signo), after output is flushed. Returns only if the default action
// does not end the process.
void raise_with_default_action(int signo);

}  // namespace convbench
