#include "results/json_results.hpp"

#include <algorithm>
#include <cmath>

#include "results/device_limits.hpp"
#include "results/json_reader.hpp"
#include "results/sample_stats.hpp"
#include "results/trust.hpp"
#include "util/input_error.hpp"

namespace convbench {
namespace {

using nlohmann::json;

json directions(const DirectionCounts& c) {
  json j = {{"forward", c.forward}, {"backward_data", c.backward_data}, {"backward_weight", c.backward_weight}};
  if (c.recompute != 0) j["recompute"] = c.recompute;  // memory policy recompute only
  return j;
}

DirectionCounts directions_from(const std::optional<JsonField>& j) {
  DirectionCounts c;
  if (!j) return c;
  c.forward = j->integer("forward", 0);
  c.backward_data = j->integer("backward_data", 0);
  c.backward_weight = j->integer("backward_weight", 0);
  c.recompute = j->integer("recompute", 0);
  return c;
}

json categories(const CategoryBytes& b) {
  json j = json::object();
  for (int i = 0; i < kMemoryCategoryCount; ++i)
    j[std::string(to_string(static_cast<MemoryCategory>(i)))] = b[static_cast<size_t>(i)];
  return j;
}

CategoryBytes categories_from(const std::optional<JsonField>& j) {
  CategoryBytes b{};
  if (!j) return b;
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    const std::string name(to_string(static_cast<MemoryCategory>(i)));
    b[static_cast<size_t>(i)] = j->integer(name, 0);
  }
  return b;
}

json memory_figures(const MemoryFigures& m) {
  json j = {{"at_peak", categories(m.at_peak)},
            {"peak_by_category", categories(m.peak_by_category)},
            {"saved_bytes", m.saved_bytes}};
  if (m.saved_tensors >= 0) j["saved_tensors"] = m.saved_tensors;
  if (m.reserved_peak_bytes >= 0) j["reserved_peak_bytes"] = m.reserved_peak_bytes;
  return j;
}

MemoryFigures memory_figures_from(const std::optional<JsonField>& j, int64_t peak) {
  MemoryFigures m;
  m.peak_bytes = peak;
  if (!j) return m;
  m.at_peak = categories_from(j->object("at_peak"));
  m.peak_by_category = categories_from(j->object("peak_by_category"));
  m.saved_bytes = j->integer("saved_bytes", 0);
  m.saved_tensors = j->integer("saved_tensors", -1, -1);
  m.reserved_peak_bytes = j->integer("reserved_peak_bytes", -1, -1);
  return m;
}

// The measured memory of a row: convbench writes {"peak_bytes", "measured": {...}}; the PyTorch
// peer writes {"saved_bytes", ...} on any device plus "peak_bytes" and "peak_reserved_bytes" on
// CUDA, with no breakdown. A peak that was not measured is -1.
std::optional<MemoryFigures> measured_from(const JsonField& mem) {
  if (const auto measured = mem.object("measured")) return memory_figures_from(measured, mem.integer("peak_bytes", -1));
  if (!mem.find("peak_bytes") && !mem.find("saved_bytes")) return std::nullopt;
  MemoryFigures m;
  m.peak_bytes = mem.integer("peak_bytes", -1);
  m.saved_bytes = mem.integer("saved_bytes", 0);
  m.reserved_peak_bytes = mem.integer("peak_reserved_bytes", -1);
  return m;
}

json time_stats(const TimeStats& t) {
  json j = {{"median", t.median},
            {"min", t.min},
            {"max", t.max},
            {"q1", t.q1},
            {"q3", t.q3},
            {"mean", t.mean},
            {"noise", t.noise},
            {"noise_met", t.noise_met},
            {"samples", t.samples()},
            {"raw_ms", t.raw_ms}};
  if (!t.stop.empty()) j["stop"] = t.stop;
  return j;
}

// Whether `a` and `b` agree to rounding (statistics recomputed from the raw samples).
bool agrees(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-12; }

// convbench writes noise, noise_met and stop ("noise" | "precision" | "timeout"; files written
// before the precision rule have no stop); the peer writes rel_stdev (null for one sample) and
// stop ("converged" for its noise rule | "precision" | "timeout"). Times are finite and non-negative; the order
// statistics are ordered (min <= q1 <= median <= q3 <= max); with raw samples, their count, minimum, maximum and median
// agree with them.
std::optional<TimeStats> time_stats_from(const std::optional<JsonField>& t, const char* phase) {
  if (!t) return std::nullopt;
  const auto j = t->object(phase);
  if (!j) return std::nullopt;
  TimeStats s;
  s.raw_ms = j->numbers("raw_ms");
  s.median = j->at("median").as_number();
  s.q1 = j->number("q1", s.median);
  s.q3 = j->number("q3", s.median);
  // Absent extremes come from the raw samples, else from the quartiles.
  const bool raw = !s.raw_ms.empty();
  s.min = j->number("min", raw ? *std::min_element(s.raw_ms.begin(), s.raw_ms.end()) : std::min(s.q1, s.median));
  s.max = j->number("max", raw ? *std::max_element(s.raw_ms.begin(), s.raw_ms.end()) : std::max(s.q3, s.median));
  s.mean = j->number("mean", s.median);
  s.noise = j->find("noise") ? j->number("noise", 0.0) : j->number("rel_stdev", 0.0);
  s.stop = j->choice("stop", "", {"", "noise", "precision", "timeout", "converged"});
  if (s.stop == "converged") s.stop = "noise";
  s.noise_met = j->find("noise_met") ? j->boolean("noise_met", false) : (s.stop == "noise" || s.stop == "precision");
  if (!(s.min <= s.q1 && s.q1 <= s.median && s.median <= s.q3 && s.q3 <= s.max))
    j->fail("the statistics are out of order (min " + std::to_string(s.min) + ", q1 " + std::to_string(s.q1) +
            ", median " + std::to_string(s.median) + ", q3 " + std::to_string(s.q3) + ", max " + std::to_string(s.max) +
            ")");
  if (!s.raw_ms.empty()) {
    const int64_t samples = j->integer("samples", static_cast<int64_t>(s.raw_ms.size()));
    if (samples != static_cast<int64_t>(s.raw_ms.size()))
      j->at("samples").fail("says " + std::to_string(samples) + " samples, raw_ms has " +
                            std::to_string(s.raw_ms.size()));
    const auto [lo, hi] = std::minmax_element(s.raw_ms.begin(), s.raw_ms.end());
    if (!agrees(*lo, s.min) || !agrees(*hi, s.max) || !agrees(quantile(s.raw_ms, 0.5), s.median))
      j->fail("min, median and max do not agree with raw_ms");
  }
  return s;
}

json host_activity_json(const HostActivity& a) {
  json j = {{"wall_s", a.wall_s},
            {"cpu_per_wall", a.cpu_per_wall},
            {"involuntary_switches_per_s", a.involuntary_switches_per_s},
            {"threads", a.threads},
            {"cpus", a.cpus}};
  // Readings the machine did not give are left out, not written as zero.
  if (a.cpu_pressure_share) j["cpu_pressure_share"] = *a.cpu_pressure_share;
  if (a.steal_share) j["steal_share"] = *a.steal_share;
  if (a.load_before) j["load_before"] = *a.load_before;
  if (a.load_after) j["load_after"] = *a.load_after;
  if (a.gpu_other_processes) j["gpu_other_processes"] = *a.gpu_other_processes;
  return j;
}

HostActivity host_activity_from(const JsonField& j) {
  HostActivity a;
  a.wall_s = j.number("wall_s", 0.0, 0.0, 1e9);
  a.cpu_per_wall = j.number("cpu_per_wall", 0.0, 0.0, 1e6);
  a.involuntary_switches_per_s = j.number("involuntary_switches_per_s", 0.0, 0.0, 1e12);
  a.threads = static_cast<int>(j.integer("threads", 0, 0, 1 << 20));
  a.cpus = static_cast<int>(j.integer("cpus", 0, 0, 1 << 20));
  const auto optional_number = [&](const char* key, double max) -> std::optional<double> {
    if (!j.find(key)) return std::nullopt;
    return j.number(key, 0.0, 0.0, max);
  };
  a.cpu_pressure_share = optional_number("cpu_pressure_share", 1.0);
  a.steal_share = optional_number("steal_share", 1.0);
  a.load_before = optional_number("load_before", 1e9);
  a.load_after = optional_number("load_after", 1e9);
  if (j.find("gpu_other_processes"))
    a.gpu_other_processes = static_cast<int>(j.integer("gpu_other_processes", 0, 0, 1 << 20));
  return a;
}

json fold_json(const FoldFacts& f) {
  json convs = json::array();
  for (const FoldedConvFacts& c : f.convs)
    convs.push_back({{"name", c.name},
                     {"replaces", c.replaces},
                     {"kernel", c.kernel},
                     {"stride", c.stride},
                     {"padding", c.padding},
                     {"dilation", c.dilation},
                     {"groups", c.groups},
                     {"bias", c.bias},
                     {"kernel_macs", c.kernel_macs}});
  json j = {{"source", f.source},
            {"fold", f.fold},
            {"trained_params", f.trained_params},
            {"kernel_params", f.kernel_params},
            {"source_ops", f.source_ops},
            {"ops", f.ops},
            {"source_saved", f.source_saved},
            {"saved", f.saved},
            {"convs", convs},
            {"kept", f.kept},
            {"output_error", f.output_error}};
  if (f.gradient_error >= 0.0) j["gradient_error"] = f.gradient_error;
  j["proof_shape"] = f.proof_shape;
  j["proof_reduced"] = f.proof_reduced;
  return j;
}

json row_to_json(const ResultRow& r) {
  json point = json::object();
  for (const auto& [k, v] : r.point) point[k] = json::parse(v);
  json j = {{"block", r.block},
            {"variant", r.variant},
            {"kind", r.kind},
            {"point", point},
            {"point_label", r.point_label},
            {"baseline", r.is_baseline},
            {"dims", r.dims},
            {"dtype", r.dtype},
            {"layout", r.layout},
            {"mode", r.mode},
            {"input_shape", r.input_shape},
            {"output_shape", r.output_shape}};
  // A variant that could not be read has no counts to write (not zeros: nothing was counted).
  if (counted(r.status)) {
    j["params"] = r.params;
    j["buffers"] = r.buffers;
    j["macs"] = directions(r.macs);
    j["flops"] = directions(r.flops);
    j["bytes"] = {{"forward", r.bytes_forward}, {"backward", r.bytes_backward}};
  }
  // Written only where PyTorch would count more buffers, so rows without batch norm read as before.
  if (r.buffer_counters > 0) j["buffer_counters"] = r.buffer_counters;
  // Written only where the step converts, so rows without conversions read as before.
  if (r.layout_conversion != "none") j["layout_conversion"] = r.layout_conversion;
  if (!r.kernel.empty()) j["kernel"] = r.kernel;
  if (r.subject != "block") j["subject"] = r.subject;
  if (!r.graph_hash.empty()) j["graph_hash"] = r.graph_hash;
  // Written only for a policy, so rows without one read as before.
  if (r.memory_policy != "none") j["memory_policy"] = r.memory_policy;
  if (r.precision != "plain") j["precision"] = r.precision;  // rows written before AMP keep their form
  if (!r.plain_graph_hash.empty()) j["plain_graph_hash"] = r.plain_graph_hash;
  if (!r.policy_note.empty()) j["policy_note"] = r.policy_note;
  if (!r.structure.empty()) j["structure"] = r.structure;
  json memory = {{"predicted_peak_bytes", r.predicted.peak_bytes}, {"predicted", memory_figures(r.predicted)}};
  if (r.measured) {
    if (r.measured->peak_bytes >= 0) memory["peak_bytes"] = r.measured->peak_bytes;
    memory["measured"] = memory_figures(*r.measured);
  }
  if (counted(r.status)) j["memory"] = memory;
  if (r.device.empty() && !counted(r.status)) {  // analyze: the only status an unmeasured row has
    j["status"] = to_string(r.status);
    j["message"] = r.message;
  }
  if (!r.device.empty()) {
    j["device"] = r.device;
    j["status"] = to_string(r.status);
    j["message"] = r.message;
    json t = json::object();
    if (r.forward) t["forward"] = time_stats(*r.forward);
    if (r.backward) t["backward"] = time_stats(*r.backward);
    if (r.step) t["step"] = time_stats(*r.step);
    if (r.graph) t["graph"] = time_stats(*r.graph);
    j["time_ms"] = t;
    if (!r.graph_message.empty()) j["graph_message"] = r.graph_message;
    if (r.clock)
      j["clock"] = {{"domain", r.clock->domain},
                    {"before_mhz", r.clock->before_mhz},
                    {"after_mhz", r.clock->after_mhz},
                    {"limits_after", r.clock->limits_after}};
    if (r.activity) j["host_activity"] = host_activity_json(*r.activity);
    // Derived from the evidence above (results/trust.hpp); written for readers such as pandas
    // and recomputed, never read back, so a file cannot claim a trust its evidence lacks.
    // Derived like trust: the headline throughput, for readers that do not divide.
    if (const std::optional<double> sps = samples_per_second(r); sps && r.status == RunStatus::ok)
      j["samples_per_s"] = *sps;
    const TrustAssessment trust = assess_trust(r);
    j["trust"] = to_string(trust.level);
    j["trust_evidence"] = trust.evidence;
    if (!r.op_details.empty()) j["op_details"] = r.op_details;
    if (!r.op_times.empty()) j["op_times"] = r.op_times;
  }
  if (!r.counters.empty()) j["counters"] = r.counters;
  if (r.fold) j["fold"] = fold_json(*r.fold);
  return j;
}

FoldFacts fold_from(const JsonField& f) {
  FoldFacts x;
  x.source = f.string("source", "");
  x.fold = f.choice("fold", "once", {"once", "online"});
  x.trained_params = f.integer("trained_params", 0);
  x.kernel_params = f.integer("kernel_params", 0);
  x.source_ops = f.integer("source_ops", 0);
  x.ops = f.integer("ops", 0);
  x.source_saved = f.strings("source_saved");
  x.saved = f.strings("saved");
  if (const auto list = f.find("convs"))
    for (const JsonField& c : list->items()) {
      FoldedConvFacts k;
      k.name = c.string("name", "");
      k.replaces = c.strings("replaces");
      k.kernel = c.integers("kernel", 1);
      k.stride = c.integers("stride", 1);
      k.padding = c.integers("padding", 0);
      k.dilation = c.integers("dilation", 1);
      k.groups = c.integer("groups", 1);
      k.bias = c.boolean("bias", false);
      k.kernel_macs = c.integer("kernel_macs", 0);
      x.convs.push_back(std::move(k));
    }
  x.kept = f.strings("kept");
  x.output_error = f.number("output_error", 0.0, 0.0, 1e300);
  x.gradient_error = f.number("gradient_error", -1.0, -1.0, 1e300);
  x.proof_shape = f.integers("proof_shape", 1);
  x.proof_reduced = f.boolean("proof_reduced", false);
  return x;
}

ResultRow row_from_json(const JsonField& j) {
  ResultRow r;
  j.at("block");  // both required
  j.at("variant");
  r.block = j.string("block", "");
  r.variant = j.string("variant", "");
  if (r.block.empty()) j.at("block").fail("expected a non-empty string");
  if (r.variant.empty()) j.at("variant").fail("expected a non-empty string");
  r.kind = j.string("kind", "");
  r.subject = j.string("subject", "block");
  if (r.subject != "block" && r.subject != "network") j.at("subject").fail("expected \"block\" or \"network\"");
  if (const auto point = j.object("point")) {
    for (const auto& [k, v] : point->value().items()) {
      if (!v.is_primitive() || v.is_null())
        point->at(k).fail("a sweep point's value must be a number, string or boolean, got " + describe_json(v));
      r.point.emplace_back(k, v.dump());
    }
  }
  r.point_label = j.string("point_label", "");
  r.is_baseline = j.boolean("baseline", false);
  r.dims = static_cast<int>(j.integer("dims", 2, 2, 3));
  r.dtype = j.string("dtype", "");
  r.layout = j.string("layout", "");
  r.layout_conversion = j.choice("layout_conversion", "none", {"none", "boundary"});
  r.mode = j.choice("mode", "train", {"train", "infer"});
  r.input_shape = j.integers("input_shape", 1);
  r.output_shape = j.integers("output_shape", 1);
  r.kernel = j.integers("kernel", 1);
  if (!r.kernel.empty() && r.kernel.size() != static_cast<size_t>(r.dims))
    j.at("kernel").fail("expected " + std::to_string(r.dims) + " sizes for a " + std::to_string(r.dims) +
                        "-D block, got " + std::to_string(r.kernel.size()));
  for (const auto* shape : {&r.input_shape, &r.output_shape})
    if (!shape->empty() && shape->size() != static_cast<size_t>(r.dims) + 2)
      j.at(shape == &r.input_shape ? "input_shape" : "output_shape")
          .fail("expected " + std::to_string(r.dims + 2) + " dims for a " + std::to_string(r.dims) + "-D block, got " +
                std::to_string(shape->size()));
  r.memory_policy = j.choice("memory_policy", "none", {"none", "recompute", "inplace_abn", "inplace_act"});
  r.precision = j.choice("precision", "plain", {"plain", "amp_float16", "amp_bfloat16"});
  r.plain_graph_hash = j.string("plain_graph_hash", "");
  r.policy_note = j.string("policy_note", "");
  r.structure = j.string("structure", "");
  if (!r.plain_graph_hash.empty() && (r.plain_graph_hash.size() != 64 ||
                                      r.plain_graph_hash.find_first_not_of("0123456789abcdef") != std::string::npos))
    j.at("plain_graph_hash").fail("expected 64 lower-case hex digits (a SHA-256)");
  r.graph_hash = j.string("graph_hash", "");
  if (!r.graph_hash.empty() &&
      (r.graph_hash.size() != 64 || r.graph_hash.find_first_not_of("0123456789abcdef") != std::string::npos))
    j.at("graph_hash").fail("expected 64 lower-case hex digits (a SHA-256)");
  r.params = j.integer("params", 0);
  r.buffers = j.integer("buffers", 0);
  r.buffer_counters = j.integer("buffer_counters", 0);
  r.macs = directions_from(j.object("macs"));
  r.flops = directions_from(j.object("flops"));
  if (const auto bytes = j.object("bytes")) {
    r.bytes_forward = bytes->integer("forward", 0);
    r.bytes_backward = bytes->integer("backward", 0);
  }
  if (const auto mem = j.object("memory")) {
    r.predicted = memory_figures_from(mem->object("predicted"), mem->integer("predicted_peak_bytes", 0));
    r.measured = measured_from(*mem);
  }
  r.device = j.string("device", "");
  std::vector<std::string> statuses;
  for (RunStatus s : kRunStatuses) statuses.push_back(to_string(s));
  r.status = *parse_run_status(j.choice("status", "ok", statuses));  // choice() admits only these
  r.message = j.string("message", "");
  if (const auto d = j.object("op_details")) r.op_details = d->value();
  if (const auto t = j.object("op_times")) r.op_times = t->value();
  if (const auto c = j.object("counters")) r.counters = c->value();
  const auto t = j.object("time_ms");
  r.forward = time_stats_from(t, "forward");
  r.backward = time_stats_from(t, "backward");
  r.step = time_stats_from(t, "step");
  r.graph = time_stats_from(t, "graph");
  r.graph_message = j.string("graph_message", "");
  if (const auto c = j.object("clock"))
    r.clock = ClockWindow{c->string("domain", ""), c->number("before_mhz", 0.0, 0.0, 1e7),
                          c->number("after_mhz", 0.0, 0.0, 1e7), c->strings("limits_after")};
  if (const auto a = j.object("host_activity")) r.activity = host_activity_from(*a);
  if (const auto f = j.object("fold")) r.fold = fold_from(*f);
  return r;
}

// A recorded roof must be one a device can have: the HTML roofline is drawn from it.
void check_device_limits(const JsonField& provenance) {
  const auto d = provenance.object("device_limits");
  if (!d) return;
  d->at("peak_flops").as_number(kMinPeakFlops, kMaxPeakFlops);
  d->at("bandwidth_bytes_per_s").as_number(kMinBandwidth, kMaxBandwidth);
  d->string("source", "");
  d->string("doubt", "");
  d->string("dtype", "");
  d->string("datasheet", "");
  d->boolean("other_device", false);
}

}  // namespace

json host_activity_to_json(const HostActivity& activity) { return host_activity_json(activity); }

HostActivity host_activity_from_json(const json& j, const std::string& file_name) {
  return host_activity_from(JsonField(j, "host_activity", file_name));
}

json results_to_json(const ResultSet& results) {
  json rows = json::array();
  for (const ResultRow& r : results.rows) rows.push_back(row_to_json(r));
  json doc = {{"schema", kResultsSchema}, {"engine", results.engine}};
  if (!results.device.empty()) doc["device"] = results.device;
  doc["provenance"] = results.provenance;
  doc["results"] = rows;
  return doc;
}

ResultSet results_from_json(const json& doc, const std::string& file_name) {
  const JsonField top(doc, "", file_name);
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string() || doc["schema"] != kResultsSchema)
    throw InputError({file_name, 0, 0}, "schema",
                     std::string("not a convbench results file (expected \"schema\": \"") + kResultsSchema + "\")");
  if (!doc.contains("results") || !doc["results"].is_array())
    throw InputError({file_name, 0, 0}, "results", "missing the \"results\" list");
  ResultSet set;
  set.engine = top.string("engine", "convbench");
  set.device = top.string("device", "");
  if (const auto p = top.object("provenance")) {
    set.provenance = p->value();
    check_device_limits(*p);
  }
  for (const JsonField& row : top.at("results").items()) set.rows.push_back(row_from_json(row));
  return set;
}

ResultSet load_results_file(const std::string& path) {
  const InputText in = read_input_file(path, "results file", kMaxResultsBytes);
  return results_from_json(parse_json_input(in, "results file"), in.name);
}

}  // namespace convbench
