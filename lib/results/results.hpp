// The in-memory result of a run: one row per block x variant x sweep point. Every output format
// (terminal table, JSON, CSV, Markdown) is generated from this, and JSON round-trips it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/op_counts.hpp"
#include "results/run_status.hpp"
#include "runtime/memory_stats.hpp"

namespace convbench {

inline constexpr const char* kResultsSchema = "convbench.results/1";

struct TimeStats {
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0, mean = 0;
  double noise = 0;        // stdev / mean of the samples
  bool noise_met = false;  // the stopping rule's target was reached (stop is not "timeout")
  std::string stop;        // "noise", "precision" or "timeout" (measure/stopping_rule.hpp); "" when not recorded
  std::vector<double> raw_ms;
  int samples() const { return static_cast<int>(raw_ms.size()); }
};

// The device's clock read just before a row's first timed sample and just after its last.
struct ClockWindow {
  std::string domain;  // "sm" (GPU) or "cpu" (host)
  double before_mhz = 0, after_mhz = 0;
  std::vector<std::string> limits_after;  // what held the clock down at the end (NVML), if known
};

// What else the machine was doing while a row was timed, read from the kernel (and NVML) just
// before its first timed sample and after its last (measure/host_activity.hpp). Each reading is
// optional: not every kernel, container or device says. results/trust.hpp judges it.
struct HostActivity {
  double wall_s = 0;                              // the window the readings cover
  std::optional<double> cpu_pressure_share;       // share of it in which a runnable task waited for a CPU (PSI "some")
  std::optional<double> steal_share;              // share of the CPUs' time a hypervisor gave to other guests
  std::optional<double> load_before, load_after;  // 1-minute load average
  double cpu_per_wall = 0;                        // this process's CPU seconds per wall second (all threads)
  double involuntary_switches_per_s = 0;          // the scheduler took a CPU away from this process
  int threads = 0;                                // threads the run computed with
  int cpus = 0;                                   // CPUs the process was allowed to run on
  std::optional<int> gpu_other_processes;         // other processes holding the GPU (NVML), when known
};

struct MemoryFigures {
  int64_t peak_bytes = 0;  // measured: -1 when the producer did not measure a peak (PyTorch peer on CPU)
  CategoryBytes at_peak{};
  CategoryBytes peak_by_category{};
  int64_t saved_bytes = 0;           // saved for backward at the end of forward
  int64_t saved_tensors = -1;        // how many tensors those bytes are (predicted only; -1: not known)
  int64_t reserved_peak_bytes = -1;  // measured only (-1: not applicable)
};

// One conv a folded variant runs in place of source ops (FoldFacts).
struct FoldedConvFacts {
  std::string name;                   // its op
  std::vector<std::string> replaces;  // the source ops folded into it
  std::vector<int64_t> kernel, stride, padding, dilation;
  int64_t groups = 1;
  bool bias = false;
  int64_t kernel_macs = 0;  // computing its kernel from the branch weights (fold: online, per step)
};

// What a folded variant ({kind: folded}) is, next to its source, and the proof that it computes
// what the source computes (configs/README.md "Folded convolutions").
struct FoldFacts {
  std::string source;               // the variant it folds
  std::string fold;                 // once | online
  int64_t trained_params = 0;       // the source's parameters: what training updates
  int64_t kernel_params = 0;        // the folded graph's conv weights and biases: what runs
  int64_t source_ops = 0, ops = 0;  // ops per forward pass, source and folded
  // What a training step keeps for backward (the block input left out), source and folded:
  // values by name, and "<op>.kernel" / "<op>.stats" for an op's own saved tensors.
  std::vector<std::string> source_saved, saved;
  std::vector<FoldedConvFacts> convs;
  std::vector<std::string> kept;  // why the source ops that stay were not folded
  // The proof: max relative error of the output (and, training, of every parameter gradient)
  // against the source on the reference backend in float64, at proof_shape (the block input's).
  double output_error = 0.0;
  double gradient_error = -1.0;  // -1: not checked (inference)
  std::vector<int64_t> proof_shape;
  bool proof_reduced = false;  // proven at a smaller batch and size than the row's (same channels, kernels, strides)
};

struct ResultRow {
  std::string block, variant, kind;
  // What `block` names: "block", or "network" for a row of a spec's `networks:` (JSON writes the
  // key `subject` only for networks, so block rows read as before).
  std::string subject = "block";
  std::vector<std::pair<std::string, std::string>> point;  // swept field -> JSON text
  std::string point_label;
  bool is_baseline = false;
  int dims = 2;
  std::string dtype, layout, mode;
  // "boundary" when the step converts the block's input from channels-first and its output back
  // (a channels-last block with layout_conversion: boundary), else "none".
  std::string layout_conversion = "none";
  std::vector<int64_t> input_shape, output_shape;
  std::vector<int64_t> kernel;  // the block's kernel per spatial dim; empty when the file had none
  // SHA-256 of the variant's resolved op graph (variants/graph_hash.hpp): what the history keys a
  // series by. Empty in files written before it existed (and in the PyTorch peer's files).
  std::string graph_hash;
  // The variant's memory policy (configs/README.md "Memory policies"): none | recompute | inplace_abn |
  // inplace_act. A row with a policy also carries the hash of the graph without it, which is the
  // graph_hash of the row it is compared with (policy_table.hpp: what the policy buys).
  std::string memory_policy = "none";
  // The variant's precision (configs/README.md "Mixed precision"): plain, amp_float16 or
  // amp_bfloat16. An AMP row's dtype is float32, the dtype of its master weights.
  std::string precision = "plain";
  std::string plain_graph_hash;
  std::string policy_note;  // Graph::policy_note: what the policy changed beyond memory
  // What the variant builds, in one line (graph/graph_outline.hpp), shown under its block's
  // table. Empty for networks (their spec says it) and in files written before it existed.
  std::string structure;

  int64_t params = 0, buffers = 0;
  // PyTorch's BatchNorm num_batches_tracked elements, which convbench's batch norm does not keep:
  // buffers + buffer_counters is PyTorch's count of the module's buffers.
  int64_t buffer_counters = 0;
  DirectionCounts macs, flops;
  int64_t bytes_forward = 0, bytes_backward = 0;
  MemoryFigures predicted;

  // Measured by `compare` (absent for `analyze`).
  std::string device;  // cpu | reference | cuda; empty when not measured
  RunStatus status = RunStatus::ok;
  std::string message;
  std::optional<MemoryFigures> measured;
  std::optional<TimeStats> forward, backward, step;
  // With --graph: the headline phase (the step in train mode, forward in infer mode) recorded
  // once as a CUDA graph and replayed, so no host work sits between its kernels.
  std::optional<TimeStats> graph;
  std::string graph_message;  // why a row run with --graph has no graph times (capture failed)
  std::optional<ClockWindow> clock;
  std::optional<HostActivity> activity;  // absent when not timed (analyze, --memory-only, a peer's file)
  // Per-op choices of the backend (e.g. cuDNN algorithm, math type, workspace), keyed by op.
  nlohmann::json op_details = nlohmann::json::object();
  // With --per-op: each op's median forward_ms / backward_ms (synchronised around every op).
  nlohmann::json op_times = nlohmann::json::object();
  // A PyTorch peer's row run with --counters (scripts/peer/counters.py): the FLOP counters'
  // numbers ("values"), what each one's rule predicts ("predicted"), the rules ("rules") and any
  // counter's error ("errors"). Empty for convbench's own rows.
  nlohmann::json counters = nlohmann::json::object();
  // A folded variant's facts and proof (absent for every other row).
  std::optional<FoldFacts> fold;
};

struct ResultSet {
  std::string engine;  // "convbench <version>" or "pytorch <version>"
  std::string device;  // empty for analyze
  nlohmann::json provenance = nlohmann::json::object();
  std::vector<ResultRow> rows;
};

// A run that a signal stopped (compare's provenance "interrupted"): its rows are those that
// finished, not the whole spec. nullopt for a whole run.
struct RunInterruption {
  std::string signal;                   // "SIGINT"
  int64_t finished_rows = 0, rows = 0;  // of the rows the run was to measure
  std::vector<std::string> not_run;     // "block [point] / variant" of each row it did not finish
};
std::optional<RunInterruption> interruption_of(const ResultSet& results);
// "interrupted by SIGINT after 2 of 5 rows (not run: a / b, a / c)".
std::string interruption_text(const RunInterruption& i);

// The phase that sums a row up: the whole training step in train mode, forward in infer mode.
// Its time, FLOPs and minimum bytes give the achieved rates and the roofline position.
bool is_training(const ResultRow& r);
// The row is a whole network's (subject "network"), not a block's.
inline bool is_network(const ResultRow& r) { return r.subject == "network"; }
const std::optional<TimeStats>& headline_time(const ResultRow& r);
// The row's layout as titles and diffs say it: "channels_last", or "channels_last (boundary-converted)"
// when the step converts at the block's boundary.
std::string layout_text(const ResultRow& r);
// The dtype a row's convolutions compute in, which its device limits (peak FLOP/s) are for: its
// dtype, but under mixed precision (whose rows carry float32, the master weights' dtype) the low
// dtype: an amp_bfloat16 row's convolutions run at bfloat16's peak, not float32's.
std::string compute_dtype(const ResultRow& r);
// The op's median time over the row's headline phase (forward, plus backward and any recomputation in training), from
// its --per-op times; nullopt when the row has none for the op.
std::optional<double> op_headline_ms(const ResultRow& r, const std::string& op_name);
int64_t headline_flops(const ResultRow& r);
int64_t headline_bytes(const ResultRow& r);
// Throughput of the headline phase: the batch (the input's first dimension) over the median
// headline time, in samples per second; nullopt when the row has no headline time.
std::optional<double> samples_per_second(const ResultRow& r);
// Channels of a shape (its second dim: shapes are logical, N, C, spatial..., in every layout) and
// its spatial dims; 0 / empty for an empty shape.
int64_t channels_of(const ResultRow& r, const std::vector<int64_t>& shape);
std::vector<int64_t> spatial_of(const ResultRow& r, const std::vector<int64_t>& shape);
// The row ran: its status is ok (its times and measured memory are there to compare).
inline bool ran(const ResultRow& r) { return r.status == RunStatus::ok; }
// A measured peak that can be shown: the row ran (status ok) and the peak was measured.
bool has_measured_peak(const ResultRow& r);
// The row was run with --graph: it has graph times or says why not (tables then show the column).
bool ran_with_graph(const ResultRow& r);

// Rows of the same block and point, in order (the unit a table shows and ratios refer to).
std::vector<std::vector<const ResultRow*>> group_by_block(const ResultSet& results);
// The baseline row of a group (falls back to the first row).
const ResultRow& baseline_of(const std::vector<const ResultRow*>& group);

}  // namespace convbench
