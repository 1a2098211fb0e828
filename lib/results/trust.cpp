#include "results/trust.hpp"

#include <algorithm>
#include <cstdio>

namespace convbench {
namespace {

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100.0);
  return buf;
}

std::string number(double x, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

class Judge {
 public:
  void add(Trust level, std::string evidence) {
    result_.level = std::max(result_.level, level);
    result_.evidence.push_back(std::move(evidence));
  }
  void add(const TrustAssessment& part) {
    result_.level = std::max(result_.level, part.level);
    result_.evidence.insert(result_.evidence.end(), part.evidence.begin(), part.evidence.end());
  }
  TrustAssessment result() const { return result_; }

 private:
  TrustAssessment result_;
};

}  // namespace

std::string to_string(Trust t) {
  switch (t) {
    case Trust::ok: return "ok";
    case Trust::noisy: return "noisy";
    case Trust::disturbed: return "disturbed";
  }
  return "?";
}

bool clock_dropped(const ClockWindow& c) {
  return c.before_mhz > 0 && c.after_mhz < c.before_mhz * (1.0 - kClockDropWarnFraction);
}

SampleShape sample_shape(const TimeStats& t) {
  SampleShape s;
  if (t.raw_ms.empty()) return s;
  const double fastest = *std::min_element(t.raw_ms.begin(), t.raw_ms.end());
  if (fastest <= 0) return s;
  const auto slow = std::count_if(t.raw_ms.begin(), t.raw_ms.end(), [&](double x) { return x > 2.0 * fastest; });
  s.slow_samples = static_cast<int>(slow);
  s.slow_share = static_cast<double>(slow) / static_cast<double>(t.raw_ms.size());
  s.median_over_min = t.median / fastest;
  return s;
}

std::string evidence_text(const TrustAssessment& t) {
  std::string s;
  for (const std::string& e : t.evidence) s += (s.empty() ? "" : "; ") + e;
  return s;
}

bool host_was_busy(const HostActivity& a) {
  const auto busy = [](const std::optional<double>& share) { return share && *share >= kNoisyShare; };
  return busy(a.cpu_pressure_share) || busy(a.steal_share);
}

TrustAssessment assess_host_activity(const HostActivity& a) {
  Judge judge;
  const auto share = [&](const std::optional<double>& s, const std::string& what, const std::string& hint = "") {
    if (!s || *s < kNoisyShare) return;
    judge.add(*s >= kDisturbedShare ? Trust::disturbed : Trust::noisy,
              what + " " + percent(*s) + " of the time" + hint);
  };
  // More threads than CPUs make the run wait on itself: say so, it is the user's to fix.
  std::string waited = "a runnable task waited for a CPU", hint;
  if (a.threads > a.cpus && a.cpus > 0)
    waited = "this run's " + std::to_string(a.threads) + " threads on " + std::to_string(a.cpus) +
             " CPUs (try --threads " + std::to_string(a.cpus) + ") or another task waited for a CPU";
  // Threads on every CPU leave none for anything else (the kernel's own work, a shell, the run's
  // timer): on a small machine that alone can disturb the run, and one thread fewer is often
  // quiet (on a 2-vCPU VM, --threads 1 turned every disturbed row of a 3-D block ok).
  else if (a.threads == a.cpus && a.cpus >= 2)
    hint = " (this run computed on all " + std::to_string(a.cpus) +
           " CPUs: if nothing else was running, try --threads " + std::to_string(a.cpus - 1) + ")";
  share(a.cpu_pressure_share, waited, hint);
  share(a.steal_share, "the hypervisor gave the CPUs to other guests");
  if (a.gpu_other_processes && *a.gpu_other_processes > 0)
    judge.add(Trust::disturbed,
              std::to_string(*a.gpu_other_processes) + " other process(es) held the GPU while it was timed");
  return judge.result();
}

TrustAssessment assess_trust(const ResultRow& r) {
  Judge judge;
  if (r.status != RunStatus::ok) return judge.result();

  const bool busy = r.activity && host_was_busy(*r.activity);
  if (r.activity) judge.add(assess_host_activity(*r.activity));
  if (r.clock && clock_dropped(*r.clock))
    judge.add(Trust::disturbed, r.clock->domain + " clock fell from " + number(r.clock->before_mhz, 0) + " to " +
                                    number(r.clock->after_mhz, 0) + " MHz while timing");

  bool noisy_samples = false;
  const std::pair<const char*, const std::optional<TimeStats>*> phases[] = {
      {"forward", &r.forward}, {"backward", &r.backward}, {"step", &r.step}, {"graph replay", &r.graph}};
  for (const auto& [name, stats] : phases) {
    if (!*stats || (*stats)->raw_ms.empty()) continue;
    const SampleShape s = sample_shape(**stats);
    if (s.median_over_min >= kDisturbedMedianOverMin) {
      judge.add(Trust::disturbed, std::string(name) + " median " + number(s.median_over_min, 1) +
                                      "x its fastest sample (most samples were slowed)");
      noisy_samples = true;
    } else if ((s.slow_share >= kSlowSampleShare && s.slow_samples >= 2) || s.median_over_min >= 2.0) {
      judge.add(Trust::noisy, std::string(name) + ": " + percent(s.slow_share) +
                                  " of samples slower than twice the fastest (heavy tail or two modes)");
      noisy_samples = true;
    }
  }
  if (noisy_samples && busy && judge.result().level < Trust::disturbed)
    judge.add(Trust::disturbed, "the uneven samples coincide with a busy machine");

  if (r.step && r.forward && r.backward) {
    const double parts = r.forward->median + r.backward->median;
    if (parts > 0 && r.step->median > 0 &&
        (r.step->median > kImpossibleStepRatio * parts || r.step->median * kImpossibleStepRatio < parts))
      judge.add(Trust::disturbed, "step median " + number(r.step->median, 3) + " ms against forward + backward " +
                                      number(parts, 3) + " ms (the same kernels: one was measured under load)");
  }
  return judge.result();
}

}  // namespace convbench
