#include "report/summary_tables.hpp"

#include "report/markup_escape.hpp"

#include "report/run_warnings.hpp"
#include "results/trust.hpp"

namespace convbench {
namespace {

// A ratio to a baseline that has none of the quantity (a peer file without predictions) is "-".
// " (disturbed)" / " (noisy)" after a status, empty when the row's times can be trusted.
std::string trust_suffix(const ResultRow& r) {
  const Trust t = assess_trust(r).level;
  return t == Trust::ok ? "" : " (" + to_string(t) + ")";
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

std::string ratio_cell(double value, double base) { return base > 0 ? format_ratio(value / base) : "-"; }

std::string time_cell(const std::optional<TimeStats>& t) {
  if (!t) return "-";
  return format_fixed(t->median, 3) + " ±" + format_fixed(t->noise * 100.0, 1) + "%";
}

bool any_measured(const std::vector<const ResultRow*>& group) {
  for (const ResultRow* r : group)
    if (!r->device.empty()) return true;
  return false;
}

bool any_graph(const std::vector<const ResultRow*>& group) {
  for (const ResultRow* r : group)
    if (ran_with_graph(*r)) return true;
  return false;
}

std::string group_title(const ResultRow& r) {
  std::string shape;
  for (size_t i = 0; i < r.input_shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(r.input_shape[i]);
  std::string t = r.block + (r.point_label.empty() ? "" : " [" + r.point_label + "]") + ": input " + shape + ", " +
                  r.dtype + ", " + r.layout + ", " + r.mode;
  if (!r.device.empty()) t += ", device " + r.device;
  return t;
}

// Achieved rate of the headline phase: `amount` per median second, in units of `unit`.
std::string rate_cell(const ResultRow& r, int64_t amount, double unit) {
  const auto& t = headline_time(r);
  if (r.status != RunStatus::ok || !t || t->median <= 0 || amount <= 0) return "-";
  return format_significant(static_cast<double>(amount) / (t->median * 1e-3) / unit, 3);
}

// The tone follows what the cell shows: a ratio that prints as 1.00x is neither.
Tone ratio_tone(double value) {
  const std::string shown = format_fixed(value, 2);
  if (shown == "1.00") return Tone::plain;
  return value < 1.0 ? Tone::better : Tone::worse;
}

BlockTable block_table(const std::vector<const ResultRow*>& group) {
  const ResultRow& base = baseline_of(group);
  const bool measured = any_measured(group);
  const bool train = is_training(base);
  const bool graph = measured && any_graph(group);
  TextTable t;
  t.header = {"variant", "params", "GFLOP fwd"};
  if (train) t.header.push_back("GFLOP bwd");
  if (measured) {
    t.header.push_back("fwd ms");
    if (train) t.header.insert(t.header.end(), {"bwd ms", "step ms"});
    if (graph) t.header.push_back("graph ms");
    t.header.insert(t.header.end(), {"TFLOP/s", "GB/s", "peak meas."});
  }
  t.header.insert(t.header.end(), {"peak pred.", "saved"});
  t.header.insert(t.header.end(), {"params x", "FLOP x"});
  size_t time_ratio_column = 0;
  if (measured) {
    time_ratio_column = t.header.size();
    t.header.push_back(train ? "step x" : "fwd x");
  }
  t.header.push_back("peak x");
  if (measured) t.header.push_back("status");
  t.right_aligned.assign(t.header.size(), true);
  t.right_aligned[0] = false;
  if (measured) t.right_aligned.back() = false;

  const double base_flops = static_cast<double>(headline_flops(base));
  for (const ResultRow* r : group) {
    std::vector<std::string> row = {r->variant + (r->is_baseline ? " (base)" : ""), format_count(r->params),
                                    format_giga(r->flops.forward)};
    std::vector<Tone> tones;
    if (train) row.push_back(format_giga(r->flops.backward()));
    const bool ok = r->status == RunStatus::ok;
    if (measured) {
      row.push_back(ok ? time_cell(r->forward) : "-");
      if (train) {
        row.push_back(ok ? time_cell(r->backward) : "-");
        row.push_back(ok ? time_cell(r->step) : "-");
      }
      if (graph) row.push_back(ok ? time_cell(r->graph) : "-");
      row.push_back(rate_cell(*r, headline_flops(*r), 1e12));
      row.push_back(rate_cell(*r, headline_bytes(*r), 1e9));
      row.push_back(has_measured_peak(*r) ? format_mib(r->measured->peak_bytes) : "-");
    }
    row.push_back(format_mib(r->predicted.peak_bytes));
    row.push_back(format_mib(r->predicted.saved_bytes));
    row.push_back(ratio_cell(static_cast<double>(r->params), static_cast<double>(base.params)));
    row.push_back(ratio_cell(static_cast<double>(headline_flops(*r)), base_flops));
    if (measured) {
      const auto& mine = headline_time(*r);
      const auto& theirs = headline_time(base);
      if (ok && base.status == RunStatus::ok && mine && theirs && theirs->median > 0) {
        const double x = mine->median / theirs->median;
        row.push_back(format_ratio(x));
        tones.assign(t.header.size(), Tone::plain);
        tones[time_ratio_column] = ratio_tone(x);
      } else {
        row.push_back("-");
      }
    }
    const int64_t peak = has_measured_peak(*r) ? r->measured->peak_bytes : r->predicted.peak_bytes;
    const int64_t base_peak = has_measured_peak(base) ? base.measured->peak_bytes : base.predicted.peak_bytes;
    row.push_back(ratio_cell(static_cast<double>(peak), static_cast<double>(base_peak)));
    // A row that ran but whose times cannot be trusted says so where the reader looks; the
    // evidence is in the warnings under the table.
    if (measured)
      row.push_back(ok ? to_string(r->status) + trust_suffix(*r)
                       : to_string(r->status) + (r->message.empty() ? "" : ": " + r->message));
    t.rows.push_back(std::move(row));
    t.tones.push_back(std::move(tones));
  }
  return {group_title(base), std::move(t)};
}

}  // namespace

std::vector<BlockTable> block_tables(const ResultSet& results) {
  std::vector<BlockTable> tables;
  for (const auto& group : group_by_block(results)) tables.push_back(block_table(group));
  return tables;
}

std::string tables_footnote(const ResultSet& results) {
  if (results.rows.empty()) return "";
  bool measured = false, train = false, infer = false, graph = false;
  for (const ResultRow& r : results.rows) {
    measured = measured || !r.device.empty();
    graph = graph || ran_with_graph(r);
    (is_training(r) ? train : infer) = true;
  }
  const std::string pass = train && infer ? "training step (train blocks) or inference pass (infer blocks)"
                           : train        ? "training step"
                                          : "inference pass";
  const std::string phase = train && infer ? "step (train) or forward pass (infer)"
                            : train        ? "step (forward + backward)"
                                           : "forward pass";
  std::string note =
      "GFLOP: 2 x MACs plus elementwise work. x columns: ratio to the baseline (base). peak: peak bytes of one " +
      pass +
      " (pred. = convbench's memory model, meas. = the runtime's allocator). saved: activations kept for backward.";
  if (measured)
    note += " ms: median ± relative noise (stdev/mean). TFLOP/s, GB/s: achieved rates of the " + phase +
            ": its FLOPs, and the minimum bytes its ops move, over its median time.";
  if (graph)
    note += " graph ms: the " + phase +
            " recorded once as a CUDA graph and replayed (no host work between kernels); eager time minus graph "
            "time is what launching op by op costs.";
  note += "\n";
  for (const std::string& w : run_warnings(results)) note += "warning: " + printable(w) + "\n";
  return note;
}

std::string format_tables(const ResultSet& results, TableStyle style) { return format_tables(results, style, false); }

std::string format_tables(const ResultSet& results, TableStyle style, bool colour) {
  std::string out;
  for (const BlockTable& b : block_tables(results)) {
    if (style == TableStyle::markdown)
      out += "### " + markdown_escape(b.title) + "\n\n" + b.table.render_markdown() + "\n";
    else
      out += printable(b.title) + "\n" + b.table.render_terminal(colour) + "\n";
  }
  return out + tables_footnote(results);
}

std::string format_csv(const ResultSet& results) {
  std::string out =
      "block,variant,kind,point,baseline,dims,dtype,layout,mode,input_shape,output_shape,params,buffers,"
      "macs_forward,macs_backward_data,macs_backward_weight,flops_forward,flops_backward_data,"
      "flops_backward_weight,bytes_forward,bytes_backward,predicted_peak_bytes,predicted_saved_bytes,"
      "device,status,message,measured_peak_bytes,forward_median_ms,forward_q1_ms,forward_q3_ms,"
      "backward_median_ms,backward_q1_ms,backward_q3_ms,step_median_ms,step_q1_ms,step_q3_ms,step_noise,"
      "graph_median_ms,graph_q1_ms,graph_q3_ms,clock_domain,clock_before_mhz,clock_after_mhz,trust,trust_evidence,"
      "cpu_pressure_share,steal_share,threads\n";
  auto shape = [](const std::vector<int64_t>& s) {
    std::string r;
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
    return r;
  };
  auto stats = [](const std::optional<TimeStats>& t) {
    if (!t) return std::string(",,");
    return format_fixed(t->median, 6) + "," + format_fixed(t->q1, 6) + "," + format_fixed(t->q3, 6);
  };
  for (const ResultRow& r : results.rows) {
    const TrustAssessment trust = assess_trust(r);
    std::vector<std::string> cells = {
        csv_escape(r.block),
        csv_escape(r.variant),
        csv_escape(r.kind),
        csv_escape(r.point_label),
        r.is_baseline ? "true" : "false",
        std::to_string(r.dims),
        csv_escape(r.dtype),
        csv_escape(r.layout),
        csv_escape(r.mode),
        shape(r.input_shape),
        shape(r.output_shape),
        std::to_string(r.params),
        std::to_string(r.buffers),
        std::to_string(r.macs.forward),
        std::to_string(r.macs.backward_data),
        std::to_string(r.macs.backward_weight),
        std::to_string(r.flops.forward),
        std::to_string(r.flops.backward_data),
        std::to_string(r.flops.backward_weight),
        std::to_string(r.bytes_forward),
        std::to_string(r.bytes_backward),
        std::to_string(r.predicted.peak_bytes),
        std::to_string(r.predicted.saved_bytes),
        csv_escape(r.device),
        r.device.empty() ? "" : csv_escape(to_string(r.status)),
        csv_escape(r.message),
        r.measured && r.measured->peak_bytes >= 0 ? std::to_string(r.measured->peak_bytes) : "",
        stats(r.forward),
        stats(r.backward),
        stats(r.step),
        r.step ? format_fixed(r.step->noise, 6) : "",
        stats(r.graph),
        r.clock ? csv_escape(r.clock->domain) : "",
        r.clock ? format_fixed(r.clock->before_mhz, 1) : "",
        r.clock ? format_fixed(r.clock->after_mhz, 1) : "",
        r.device.empty() ? "" : to_string(trust.level),
        csv_escape(join(trust.evidence, "; ")),
        r.activity && r.activity->cpu_pressure_share ? format_fixed(*r.activity->cpu_pressure_share, 4) : "",
        r.activity && r.activity->steal_share ? format_fixed(*r.activity->steal_share, 4) : "",
        r.activity ? std::to_string(r.activity->threads) : ""};
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += '\n';
  }
  return out;
}

}  // namespace convbench
