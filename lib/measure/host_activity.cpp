#include "measure/host_activity.hpp"

#include <omp.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "measure/stopping_rule.hpp"
#include "results/index_ranges.hpp"

namespace convbench {

std::optional<double> parse_cpu_pressure_some_total(std::istream& pressure) {
  std::string line;
  while (std::getline(pressure, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const size_t at = line.find("total=");
    if (at == std::string::npos) return std::nullopt;
    try {
      return std::stod(line.substr(at + 6));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool parse_proc_stat_steal(std::istream& stat, double& steal_ticks, double& all_ticks) {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": guest time is
  // already counted in user and nice, so the total is the first eight fields.
  std::string line;
  if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return false;
  std::istringstream fields(line.substr(4));
  std::vector<double> v;
  double x = 0;
  while (v.size() < 8 && fields >> x) v.push_back(x);
  if (v.size() < 8) return false;
  steal_ticks = v[7];
  all_ticks = 0;
  for (double t : v) all_ticks += t;
  return true;
}

std::optional<double> parse_loadavg_1min(std::istream& loadavg) {
  double load = 0;
  if (loadavg >> load && load >= 0) return load;
  return std::nullopt;
}

HostActivitySnapshot read_host_activity() {
  HostActivitySnapshot s;
  s.wall_s = steady_seconds();
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    s.process_cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                      static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    s.involuntary_switches = usage.ru_nivcsw;
  }
  if (std::ifstream pressure("/proc/pressure/cpu"); pressure)
    s.cpu_pressure_some_us = parse_cpu_pressure_some_total(pressure);
  if (std::ifstream stat("/proc/stat"); stat) {
    double steal = 0, all = 0;
    if (parse_proc_stat_steal(stat, steal, all)) {
      s.steal_ticks = steal;
      s.all_ticks = all;
    }
  }
  if (std::ifstream loadavg("/proc/loadavg"); loadavg) s.load1 = parse_loadavg_1min(loadavg);
  return s;
}

HostActivity host_activity_between(const HostActivitySnapshot& before, const HostActivitySnapshot& after, int threads,
                                   int cpus) {
  HostActivity a;
  a.threads = threads;
  a.cpus = cpus;
  a.wall_s = std::max(0.0, after.wall_s - before.wall_s);
  a.load_before = before.load1;
  a.load_after = after.load1;
  if (a.wall_s <= 0) return a;
  a.cpu_per_wall = std::max(0.0, after.process_cpu_s - before.process_cpu_s) / a.wall_s;
  a.involuntary_switches_per_s =
      static_cast<double>(std::max<int64_t>(0, after.involuntary_switches - before.involuntary_switches)) / a.wall_s;
  if (before.cpu_pressure_some_us && after.cpu_pressure_some_us)
    a.cpu_pressure_share =
        std::clamp((*after.cpu_pressure_some_us - *before.cpu_pressure_some_us) * 1e-6 / a.wall_s, 0.0, 1.0);
  if (before.steal_ticks && after.steal_ticks && before.all_ticks && after.all_ticks &&
      *after.all_ticks > *before.all_ticks)
    a.steal_share =
        std::clamp((*after.steal_ticks - *before.steal_ticks) / (*after.all_ticks - *before.all_ticks), 0.0, 1.0);
  return a;
}

int compute_threads() { return omp_get_max_threads(); }

namespace {
std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}
}  // namespace

std::string cpu_affinity_list() { return index_ranges(affinity_cpus()); }

int cpu_affinity_count() { return static_cast<int>(affinity_cpus().size()); }

}  // namespace convbench
