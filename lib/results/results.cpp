#include "results/results.hpp"

#include <map>

#include "graph/dtype.hpp"

namespace convbench {

bool is_training(const ResultRow& r) { return r.mode == "train"; }

const std::optional<TimeStats>& headline_time(const ResultRow& r) { return is_training(r) ? r.step : r.forward; }

std::optional<double> op_headline_ms(const ResultRow& r, const std::string& op_name) {
  if (!r.op_times.is_object() || !r.op_times.contains(op_name)) return std::nullopt;
  const nlohmann::json& t = r.op_times[op_name];
  if (!t.is_object() || !t.contains("forward_ms") || !t["forward_ms"].is_number()) return std::nullopt;
  double ms = t["forward_ms"].get<double>();
  // An op whose output needs no gradient has no backward (its time is absent): forward only.
  if (is_training(r) && t.contains("backward_ms") && t["backward_ms"].is_number()) ms += t["backward_ms"].get<double>();
  // A recompute segment's op runs its forward a second time, inside backward.
  if (is_training(r) && t.contains("recompute_ms") && t["recompute_ms"].is_number())
    ms += t["recompute_ms"].get<double>();
  return ms;
}

std::string compute_dtype(const ResultRow& r) {
  if (const auto precision = parse_precision(r.precision))
    if (const auto low = autocast_dtype(*precision)) return std::string(to_string(*low));
  return r.dtype;
}

std::string layout_text(const ResultRow& r) {
  return r.layout_conversion == "boundary" ? r.layout + " (boundary-converted)" : r.layout;
}

int64_t headline_flops(const ResultRow& r) { return r.flops.forward + (is_training(r) ? r.flops.backward() : 0); }

int64_t headline_bytes(const ResultRow& r) { return r.bytes_forward + (is_training(r) ? r.bytes_backward : 0); }

std::optional<double> samples_per_second(const ResultRow& r) {
  const std::optional<TimeStats>& t = headline_time(r);
  if (!t || t->median <= 0 || r.input_shape.empty()) return std::nullopt;
  return static_cast<double>(r.input_shape.front()) / (t->median / 1000.0);
}

// Shapes in rows are logical (N, C, spatial...) whatever the layout, as TensorDesc's are: the
// layout is how the tensor is stored, not how its shape is written.
int64_t channels_of(const ResultRow&, const std::vector<int64_t>& shape) { return shape.size() < 2 ? 0 : shape[1]; }

std::vector<int64_t> spatial_of(const ResultRow&, const std::vector<int64_t>& shape) {
  if (shape.size() < 3) return {};
  return std::vector<int64_t>(shape.begin() + 2, shape.end());
}

bool has_measured_peak(const ResultRow& r) {
  return r.status == RunStatus::ok && r.measured && r.measured->peak_bytes >= 0;
}

bool ran_with_graph(const ResultRow& r) { return r.graph || !r.graph_message.empty(); }

std::vector<std::vector<const ResultRow*>> group_by_block(const ResultSet& results) {
  std::vector<std::vector<const ResultRow*>> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const ResultRow& r : results.rows) {
    auto key = std::make_pair(r.block, r.point_label);
    auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, groups.size());
      groups.push_back({&r});
    } else {
      groups[it->second].push_back(&r);
    }
  }
  return groups;
}

const ResultRow& baseline_of(const std::vector<const ResultRow*>& group) {
  for (const ResultRow* r : group)
    if (r->is_baseline) return *r;
  return *group.front();
}

std::optional<RunInterruption> interruption_of(const ResultSet& results) {
  // The provenance of a file read back is the file's: anything of the wrong type is read as
  // "interrupted, details unknown" rather than as a whole run.
  if (!results.provenance.is_object() || !results.provenance.contains("interrupted")) return std::nullopt;
  const nlohmann::json& j = results.provenance["interrupted"];
  RunInterruption i;
  i.signal = "a signal";
  if (!j.is_object()) return i;
  if (j.contains("signal") && j["signal"].is_string()) i.signal = j["signal"].get<std::string>();
  if (j.contains("finished_rows") && j["finished_rows"].is_number_integer())
    i.finished_rows = j["finished_rows"].get<int64_t>();
  if (j.contains("rows") && j["rows"].is_number_integer()) i.rows = j["rows"].get<int64_t>();
  if (j.contains("not_run") && j["not_run"].is_array())
    for (const auto& n : j["not_run"])
      if (n.is_string()) i.not_run.push_back(n.get<std::string>());
  return i;
}

std::string interruption_text(const RunInterruption& i) {
  std::string text = "interrupted by " + i.signal + " after " + std::to_string(i.finished_rows) + " of " +
                     std::to_string(i.rows) + " rows";
  if (!i.not_run.empty()) {
    text += " (not run: ";
    for (size_t k = 0; k < i.not_run.size(); ++k) {
      if (k == 5) {
        text += ", and " + std::to_string(i.not_run.size() - 5) + " more";
        break;
      }
      text += (k ? ", " : "") + i.not_run[k];
    }
    text += ")";
  }
  return text;
}

}  // namespace convbench
