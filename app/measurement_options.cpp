#include "measurement_options.hpp"

#include <string>
#include <vector>

#include "backends/backend_registry.hpp"
#include "option_checks.hpp"

namespace convbench::cli {

void add_measurement_options(CLI::App& sub, CompareOptions& c, std::string& memory_limit) {
  std::vector<std::string> devices = {"auto"};
  devices.insert(devices.end(), device_names().begin(), device_names().end());
  sub.add_option("--device", c.device, "auto: cuda when a GPU is usable, else cpu")
      ->check(CLI::IsMember(devices))  // slurm checks its shards' flags with it
      ->capture_default_str();
  sub.add_option("--max-noise", c.run.measure.max_noise,
                 "Stop sampling when stdev/mean of the samples, or the half-width of the median's 95% confidence "
                 "interval over the median, is at most this")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  sub.add_option("--min-time", c.run.measure.min_time_s, "Measure at least this many seconds per phase")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
  sub.add_option("--min-samples", c.run.measure.min_samples, "Take at least this many samples per phase")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  sub.add_option("--timeout", c.run.measure.timeout_s, "Give up on the noise target after this many seconds per phase")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
  sub.add_option("--seed", c.run.seed, "Seed for inputs and weights (0 to 2^63-1)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{INT64_MAX}))
      ->capture_default_str();
  sub.add_flag(
      "--memory-only", [&c](int64_t) { c.run.time = false; }, "Measure memory only, no timing");
  sub.add_option("--per-op", c.run.per_op_steps,
                 "Also time every op (median over this many extra steps, the device synchronised around each op; "
                 "stops after --timeout like a phase); written to the JSON rows as op_times")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  sub.add_flag("--cold", c.run.cold,
               "Cold-cache timing: evict the caches before every sample (the GPU's L2 on cuda, the CPU's "
               "last-level cache on cpu and reference)");
  sub.add_flag("--graph", c.run.graph,
               "Also time the step (train) or forward pass (infer) recorded once as a CUDA graph and replayed: "
               "the kernels without the host's launch gaps, next to the eager time (cuda only)");
  sub.add_option("--cudnn-algo", c.backend.cudnn_algo,
                 "cuda: heuristic (cuDNN's first choice that fits) or find (time the candidates once per shape, "
                 "before measuring)")
      ->check(CLI::IsMember({"heuristic", "find"}))
      ->capture_default_str();
  sub.add_option("--cudnn-api", c.backend.cudnn_api,
                 "cuda: cuDNN's legacy API (heuristic or find) or its graph API (engines from cuDNN's heuristics, "
                 "filtered by their notes, as PyTorch)")
      ->check(CLI::IsMember({"legacy", "graph"}))
      ->capture_default_str();
  sub.add_option("--conv-fusion", c.backend.conv_fusion,
                 "cpu, cuda: conv_act runs a conv and the in-place activation after it (memory_policy "
                 "inplace_act) as one fused call (oneDNN post-op; cuDNN fused engine with --cudnn-api graph, "
                 "where cuDNN has one); cuda: conv_bn_stats (training) has a conv also write its output's "
                 "per-channel sums for the batch norm after it (cuDNN GENSTATS); all: both; none runs them apart")
      ->check(CLI::IsMember({"none", "conv_act", "conv_bn_stats", "all"}))
      ->capture_default_str();
  sub.add_option("--depthwise-conv", c.backend.depthwise_conv,
                 "cuda: who runs depthwise convs: auto (convbench's kernels for channels-first, cuDNN for "
                 "channels-last, as PyTorch eager), own (convbench's kernels) or cudnn")
      ->check(CLI::IsMember({"auto", "own", "cudnn"}))
      ->capture_default_str();
  sub.add_option("--linear", c.backend.linear,
                 "cuda: who computes linear layers: auto (cuBLAS where this build has it), own (convbench's "
                 "kernels) or cublas")
      ->check(CLI::IsMember({"auto", "own", "cublas"}))
      ->capture_default_str();
  sub.add_option("--memory-limit", memory_limit,
                 "Fail (status oom) any variant needing more than this many bytes at once, e.g. 16GiB: emulates "
                 "a device with less memory")
      ->capture_default_str();
  sub.add_option("--threads", c.backend.threads,
                 "Threads of the cpu and reference backends (default: OpenMP's, one per allowed CPU); the run's "
                 "threads and CPU affinity are recorded in the provenance")
      ->check(CLI::Range(1, 4096));
  sub.add_flag("-q,--quiet", c.quiet, "No progress messages on stderr");
}

}  // namespace convbench::cli
