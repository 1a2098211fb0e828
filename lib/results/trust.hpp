// Whether a row's times can be trusted, from evidence recorded with the row (results.hpp's
// HostActivity, the clock window, the raw samples), so `compare`, `report` and `diff` reach the
// same judgement from the same file:
//   ok         nothing suggests interference;
//   noisy      the samples are heavy-tailed or bimodal, or the machine was mildly busy: the
//              median may stand, but compare it with care;
//   disturbed  something else took the CPU or GPU away while the row was timed, the device's clock
//              fell, or the phases contradict each other: do not use the row's times.
// Rules and thresholds (why these values):
//   - CPU pressure (share of wall time a runnable task waited for a CPU) or steal at least
//     kDisturbedShare: a fifth of the time someone waited, so samples straddle scheduler ticks
//     (4 ms); at least kNoisyShare: noisy. A run alone on its cores stays near zero on both.
//   - another process on the GPU (NVML): disturbed, it competes for the SMs and memory bandwidth.
//   - the device clock fell by more than kClockDropWarnFraction while timing: disturbed.
//   - per timed phase, the share of samples slower than twice the phase's fastest sample at
//     least kSlowSampleShare (and two samples at least: one outlier in seven moves no median),
//     or the median at least twice the fastest: noisy (a quiet run's samples sit within tens of
//     percent of each other); the median at least
//     kDisturbedMedianOverMin times the fastest: disturbed (most samples were slowed, so the
//     median itself is wrong, as with 0.12 ms and 236 ms samples).
//   - a training step whose median is more than twice forward + backward, or less than half
//     of it: disturbed (the phases run the same kernels, so one of them was measured under load).
//   - noisy samples together with any CPU pressure or steal of kNoisyShare or more: disturbed.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

enum class Trust { ok, noisy, disturbed };
std::string to_string(Trust t);  // "ok" | "noisy" | "disturbed"

inline constexpr double kNoisyShare = 0.05;
inline constexpr double kDisturbedShare = 0.20;
inline constexpr double kSlowSampleShare = 0.10;
inline constexpr double kDisturbedMedianOverMin = 3.0;
inline constexpr double kImpossibleStepRatio = 2.0;
// A clock that ends a row's timing more than this fraction below where it started is a drop.
// GPUs boost in steps of about 15 MHz and CPUs report jittery clocks; 5% is well above both.
inline constexpr double kClockDropWarnFraction = 0.05;

bool clock_dropped(const ClockWindow& c);

// The shape of one phase's samples.
struct SampleShape {
  int slow_samples = 0;        // samples slower than twice the fastest
  double slow_share = 0;       // their share of all samples
  double median_over_min = 1;  // median / fastest sample
};
SampleShape sample_shape(const TimeStats& t);

struct TrustAssessment {
  Trust level = Trust::ok;
  std::vector<std::string> evidence;  // one clause per finding, e.g. "a task waited for a CPU 43% of the time"
};

// The evidence as one clause list, "; " between findings.
std::string evidence_text(const TrustAssessment& t);

// ok with no evidence for rows that were not timed (analyze, --memory-only, failed rows).
TrustAssessment assess_trust(const ResultRow& r);

// The rules on what else the machine was doing (CPU pressure, steal, other processes on the GPU)
// alone: the same judgement for a measurement that is not a row, such as the cpu's limits
// (pipeline/device_limits_choice.hpp), so that one set of thresholds says when a machine was busy.
TrustAssessment assess_host_activity(const HostActivity& a);
// CPU pressure or steal of kNoisyShare or more: uneven samples on such a machine are disturbed.
bool host_was_busy(const HostActivity& a);

}  // namespace convbench
