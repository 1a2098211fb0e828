// What else the machine was doing while a row was timed. A benchmark on a shared machine can be
// slowed many times over by other processes (on a 2-core VM with a compiler running, samples of a
// 0.25 ms step came out at 0.12 ms and 236 ms, multiples of the scheduler's tick), and nothing in
// the samples alone proves it. So the runner reads the kernel's own accounting before the first
// timed sample of a row and after the last, and keeps the difference as evidence:
//  - CPU pressure (/proc/pressure/cpu "some"): the share of wall time in which at least one
//    runnable task waited for a CPU; near zero when the run has the cores to itself;
//  - steal (/proc/stat): the share of CPU time a hypervisor gave to other guests;
//  - the 1-minute load average before and after;
//  - this process's CPU time per wall second, and its involuntary context switches per second
//    (the scheduler took the CPU away from it).
// Each reading is optional: a kernel without PSI, a container without /proc/stat.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>

#include "results/results.hpp"

namespace convbench {

struct HostActivitySnapshot {
  double wall_s = 0;
  double process_cpu_s = 0;                      // user + system time of every thread of this process
  int64_t involuntary_switches = 0;              // getrusage's ru_nivcsw
  std::optional<double> cpu_pressure_some_us;    // /proc/pressure/cpu "some ... total=" (microseconds)
  std::optional<double> steal_ticks, all_ticks;  // /proc/stat's first line
  std::optional<double> load1;                   // /proc/loadavg's first field
};

HostActivitySnapshot read_host_activity();

// The evidence between two snapshots; `threads` is how many threads the run computes with and
// `cpus` how many CPUs it may use.
HostActivity host_activity_between(const HostActivitySnapshot& before, const HostActivitySnapshot& after, int threads,
                                   int cpus);

// Parsers of the kernel's texts (exposed for tests with recorded contents).
std::optional<double> parse_cpu_pressure_some_total(std::istream& pressure);
bool parse_proc_stat_steal(std::istream& stat, double& steal_ticks, double& all_ticks);
std::optional<double> parse_loadavg_1min(std::istream& loadavg);

// The threads the host backends compute with (OpenMP's current maximum) and the CPUs this
// process may run on ("0-1", "0,2,4-7"), for the provenance of a run.
int compute_threads();
std::string cpu_affinity_list();
int cpu_affinity_count();

}  // namespace convbench
