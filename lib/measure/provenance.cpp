#include "measure/provenance.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "build_commit.hpp"
#include "build_info.hpp"
#include "measure/host_activity.hpp"
#include "runtime/backend.hpp"
#include "runtime/device_clock.hpp"
#include "spec/spec_loader.hpp"
#include "util/utf8.hpp"

namespace convbench {
namespace {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : all)
    if (c == '\0') c = ' ';
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

// The distribution, as /etc/os-release names it ("Debian GNU/Linux 12 (bookworm)").
std::string os_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "unknown";
}

// The kernel the run measured under ("Linux 6.1.0-18-amd64 x86_64"): its scheduler and its
// frequency governor are part of what a time means.
std::string kernel_name() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

// A spec's text is recorded whole up to this size (a cited result carries the spec that made
// it); a larger one by its path and hash alone.
constexpr size_t kMaxRecordedSpecBytes = size_t{1} << 20;

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string this_host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown");
}

std::string engine_name() { return std::string("convbench ") + build_info::version; }

nlohmann::json collect_provenance(const Spec& spec, Backend* backend, const std::string& host_name) {
  const dnnl_version_t* dnnl = dnnl_version();
  nlohmann::json p = {
      {"convbench_version", build_info::version},
      {"git_commit", build_info::git_commit},
      {"compiler", build_info::compiler},
      // Any argument may hold any bytes (a Latin-1 path, a --filter): recorded escaped, so that the
      // results can be written as JSON after the run.
      {"command_line", escape_invalid_utf8(command_line())},
      {"date", utc_now()},
      {"spec_file", spec.file},
      {"spec_sha256", spec.sha256},
      {"os", escape_invalid_utf8(os_name())},
      {"kernel", escape_invalid_utf8(kernel_name())},
      {"cpu", escape_invalid_utf8(cpu_model())},
      {"hardware_threads", std::thread::hardware_concurrency()},
      // What the run computed with: a 2-thread run on a loaded 2-CPU machine and a 1-thread run
      // are different measurements (compare --threads).
      {"threads", compute_threads()},
      {"cpu_affinity", cpu_affinity_list()},
      {"cpus_allowed", cpu_affinity_count()},
      {"host_name", escape_invalid_utf8(host_name)},
      {"onednn_version",
       std::to_string(dnnl->major) + "." + std::to_string(dnnl->minor) + "." + std::to_string(dnnl->patch)},
      {"cuda_built", build_info::with_cuda},
  };
  if (!spec.text.empty() && spec.text.size() <= kMaxRecordedSpecBytes) p["spec_text"] = spec.text;
  if (const auto clock = read_host_cpu_clock()) p["cpu_mhz"] = clock->mhz;
  // The CUDA and cuDNN this build links, only for a run on the GPU: a CPU run's metadata must not
  // name libraries it never used (a reader would take them for the run's). cuda_built says the
  // build has the backend either way.
  if (build_info::with_cuda && backend && backend->name() == "cuda") {
    p["cuda_version"] = build_info::cuda_version;
    p["cudnn_version"] = build_info::cudnn_version;
  }
  if (backend) {
    p["backend"] = backend->name();
    const nlohmann::json device = backend->measurement().device_info();
    if (!device.empty()) p["device"] = device;
    if (device.contains("gpu") && device["gpu"].is_string()) p["gpu_name"] = device["gpu"];  // for the roofline
  }
  return p;
}

}  // namespace convbench
