#include "report/summary_tables.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "report/fold_notes.hpp"
#include "report/layout_table.hpp"
#include "report/markup_escape.hpp"
#include "report/network_vs_block.hpp"
#include "report/policy_table.hpp"

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

// Markdown's escaping would show a line break as "\n": a note there is one paragraph line.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
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

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// The input shapes of a swept group in one: a dim that varies lists its values, in sweep order
// ("{2,16}x16x32x32x32"). Shorter than naming the first point's shape and its label, so a
// swept table's title stays within the compact table's 100 columns.
std::string swept_shape_text(const std::vector<const ResultRow*>& group) {
  const std::vector<int64_t>& first = group.front()->input_shape;
  std::string s;
  for (size_t d = 0; d < first.size(); ++d) {
    std::vector<int64_t> values;
    for (const ResultRow* r : group)
      if (r->input_shape.size() == first.size() &&
          std::find(values.begin(), values.end(), r->input_shape[d]) == values.end())
        values.push_back(r->input_shape[d]);
    std::string dim;
    for (size_t i = 0; i < values.size(); ++i) dim += (i ? "," : "") + std::to_string(values[i]);
    s += (d ? "x" : "") + (values.size() > 1 ? "{" + dim + "}" : dim);
  }
  return s;
}

// The swept fields of a group, in the order the rows carry them.
std::vector<std::string> swept_fields(const std::vector<const ResultRow*>& group) {
  std::vector<std::string> fields;
  for (const ResultRow* r : group)
    for (const auto& [field, value] : r->point)
      if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
  return fields;
}

std::string group_title(const std::vector<const ResultRow*>& group) {
  const ResultRow& r = *group.front();
  const std::vector<std::string> swept = swept_fields(group);
  bool one_point = true;
  for (const ResultRow* other : group) one_point = one_point && other->point_label == r.point_label;
  std::string t = r.block + (one_point && !r.point_label.empty() ? " [" + r.point_label + "]" : "") + ": input " +
                  (one_point ? shape_text(r.input_shape) : swept_shape_text(group));
  if (!one_point) {
    t += ", sweeping";
    for (size_t i = 0; i < swept.size(); ++i) t += (i ? ", " : " ") + swept[i];
  }
  // A swept dtype, layout or mode lists its values, as a varying dim does: the first row's alone
  // would claim the whole table is float32.
  const auto text_of = [&](const auto& field) {
    std::vector<std::string> values;
    for (const ResultRow* row : group)
      if (std::find(values.begin(), values.end(), field(*row)) == values.end()) values.push_back(field(*row));
    return values.size() > 1 ? "{" + join(values, ",") + "}" : values.front();
  };
  // A swept layout_conversion has its own column; otherwise the layout says whether it converts.
  const bool conversion_swept = std::find(swept.begin(), swept.end(), "layout_conversion") != swept.end();
  t += ", " + text_of([](const ResultRow& row) { return row.dtype; }) + ", " +
       text_of([&](const ResultRow& row) { return conversion_swept ? row.layout : layout_text(row); }) + ", " +
       text_of([](const ResultRow& row) { return row.mode; });
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

// What a cell sees: its row, the baseline at the row's sweep point, and the table's mode.
struct CellContext {
  const ResultRow& row;
  const ResultRow& base;
  bool train;
};

struct Cell {
  std::string text;
  Tone tone = Tone::plain;
};

// One column the tables can show. `when` says whether it applies to a table (measured, train,
// graph); the cell renders one row.
struct Column {
  const char* name;  // for --columns
  const char* header_train;
  const char* header_infer;
  bool measured_only, train_only, graph_only;
  std::function<Cell(const CellContext&)> cell;
};

int64_t shown_peak(const ResultRow& r) {
  return has_measured_peak(r) ? r.measured->peak_bytes : r.predicted.peak_bytes;
}

const std::vector<Column>& columns() {
  static const std::vector<Column> all = {
      {"params", "params", "params", false, false, false,
       [](const CellContext& c) { return Cell{format_count(c.row.params)}; }},
      {"gflop_fwd", "GFLOP fwd", "GFLOP fwd", false, false, false,
       [](const CellContext& c) { return Cell{format_giga(c.row.flops.forward)}; }},
      {"gflop_bwd", "GFLOP bwd", "GFLOP bwd", false, true, false,
       [](const CellContext& c) { return Cell{format_giga(c.row.flops.backward())}; }},
      // MACs next to GFLOP: papers and posts often quote MACs and call them FLOPs (a 2x gap).
      {"gmac_fwd", "GMAC fwd", "GMAC fwd", false, false, false,
       [](const CellContext& c) { return Cell{format_giga(c.row.macs.forward)}; }},
      {"gmac_bwd", "GMAC bwd", "GMAC bwd", false, true, false,
       [](const CellContext& c) { return Cell{format_giga(c.row.macs.backward())}; }},
      {"fwd_ms", "fwd ms", "fwd ms", true, false, false,
       [](const CellContext& c) { return Cell{ran(c.row) ? time_cell(c.row.forward) : "-"}; }},
      {"bwd_ms", "bwd ms", "bwd ms", true, true, false,
       [](const CellContext& c) { return Cell{ran(c.row) ? time_cell(c.row.backward) : "-"}; }},
      {"step_ms", "step ms", "step ms", true, true, false,
       [](const CellContext& c) { return Cell{ran(c.row) ? time_cell(c.row.step) : "-"}; }},
      {"time_ms", "step ms", "fwd ms", true, false, false,
       [](const CellContext& c) { return Cell{ran(c.row) ? time_cell(headline_time(c.row)) : "-"}; }},
      {"graph_ms", "graph ms", "graph ms", true, false, true,
       [](const CellContext& c) { return Cell{ran(c.row) ? time_cell(c.row.graph) : "-"}; }},
      {"samples_per_s", "samples/s", "samples/s", true, false, false,
       [](const CellContext& c) {
         const std::optional<double> v = samples_per_second(c.row);
         return Cell{ran(c.row) && v ? format_significant(*v, 3) : "-"};
       }},
      {"tflops", "TFLOP/s", "TFLOP/s", true, false, false,
       [](const CellContext& c) { return Cell{rate_cell(c.row, headline_flops(c.row), 1e12)}; }},
      {"gbs", "GB/s", "GB/s", true, false, false,
       [](const CellContext& c) { return Cell{rate_cell(c.row, headline_bytes(c.row), 1e9)}; }},
      {"peak_measured", "peak meas.", "peak meas.", true, false, false,
       [](const CellContext& c) {
         return Cell{has_measured_peak(c.row) ? format_mib(c.row.measured->peak_bytes) : "-"};
       }},
      {"peak_predicted", "peak pred.", "peak pred.", false, false, false,
       [](const CellContext& c) { return Cell{format_mib(c.row.predicted.peak_bytes)}; }},
      {"peak", "peak", "peak", false, false, false,
       [](const CellContext& c) { return Cell{format_mib(shown_peak(c.row))}; }},
      {"saved", "saved", "saved", false, false, false,
       [](const CellContext& c) { return Cell{format_mib(c.row.predicted.saved_bytes)}; }},
      {"params_x", "params x", "params x", false, false, false,
       [](const CellContext& c) {
         return Cell{ratio_cell(static_cast<double>(c.row.params), static_cast<double>(c.base.params))};
       }},
      {"flop_x", "FLOP x", "FLOP x", false, false, false,
       [](const CellContext& c) {
         return Cell{
             ratio_cell(static_cast<double>(headline_flops(c.row)), static_cast<double>(headline_flops(c.base)))};
       }},
      {"time_x", "step x", "fwd x", true, false, false,
       [](const CellContext& c) {
         const auto& mine = headline_time(c.row);
         const auto& theirs = headline_time(c.base);
         if (!ran(c.row) || !ran(c.base) || !mine || !theirs || theirs->median <= 0) return Cell{"-"};
         const double x = mine->median / theirs->median;
         return Cell{format_ratio(x), ratio_tone(x)};
       }},
      {"peak_x", "peak x", "peak x", false, false, false,
       [](const CellContext& c) {
         return Cell{ratio_cell(static_cast<double>(shown_peak(c.row)), static_cast<double>(shown_peak(c.base)))};
       }},
      // A row that ran but whose times cannot be trusted says so where the reader looks; the
      // evidence is in the warnings under the table.
      {"status", "status", "status", true, false, false,
       [](const CellContext& c) {
         return Cell{ran(c.row) ? to_string(c.row.status) + trust_suffix(c.row)
                                : to_string(c.row.status) + (c.row.message.empty() ? "" : ": " + c.row.message)};
       }},
  };
  return all;
}

// The compact default fits 100 columns for a block of three variants with a swept field: the
// headline time and its ratio, throughput, the peak and its ratio, FLOPs ratio, status.
const std::vector<std::string> kCompact = {"time_ms", "graph_ms", "time_x", "samples_per_s",
                                           "peak",    "peak_x",   "flop_x", "status"};
// A whole network's run also shows its forward GFLOP and GMAC: what papers compare networks by
// (their "FLOPs" are usually MACs).
const std::vector<std::string> kCompactNetwork = {"time_ms", "graph_ms",  "time_x",   "samples_per_s", "peak",
                                                  "peak_x",  "gflop_fwd", "gmac_fwd", "flop_x",        "status"};
// params x gives way to GMAC fwd (params are shown whole); --wide has both.
const std::vector<std::string> kCompactAnalysis = {"params",         "gflop_fwd", "gflop_bwd", "gmac_fwd",
                                                   "peak_predicted", "saved",     "flop_x",    "peak_x"};
const std::vector<std::string> kWide = {"params",   "gflop_fwd", "gflop_bwd",     "gmac_fwd",       "gmac_bwd",
                                        "fwd_ms",   "bwd_ms",    "step_ms",       "graph_ms",       "samples_per_s",
                                        "tflops",   "gbs",       "peak_measured", "peak_predicted", "saved",
                                        "params_x", "flop_x",    "time_x",        "peak_x",         "status"};

const Column& column_named(const std::string& name) {
  for (const Column& c : columns())
    if (name == c.name) return c;
  throw std::invalid_argument("unknown column \"" + name + "\"");
}

BlockTable block_table(const std::vector<const ResultRow*>& group, const std::vector<std::string>& chosen) {
  const bool measured = any_measured(group);
  const bool train = is_training(*group.front());
  const bool graph = measured && any_graph(group);
  const std::vector<std::string> swept = swept_fields(group);
  // The baseline of each sweep point: ratios compare variants at the same point.
  std::map<std::string, const ResultRow*> base_at;
  for (const ResultRow* r : group)
    if (r->is_baseline || !base_at.count(r->point_label)) base_at[r->point_label] = r;

  std::vector<const Column*> shown;
  for (const std::string& name : chosen) {
    const Column& c = column_named(name);
    if ((c.measured_only && !measured) || (c.train_only && !train) || (c.graph_only && !graph)) continue;
    shown.push_back(&c);
  }
  // Variants that differ in their memory policy (not swept: a swept one has its own column) say it.
  bool policies_differ = false;
  for (const ResultRow* r : group)
    policies_differ = policies_differ || r->memory_policy != group.front()->memory_policy;
  const bool policy_column = policies_differ && std::find(swept.begin(), swept.end(), "memory_policy") == swept.end();
  TextTable t;
  t.header = {"variant"};
  if (policy_column) t.header.push_back("policy");
  for (const std::string& f : swept) t.header.push_back(f);
  for (const Column* c : shown) t.header.push_back(train ? c->header_train : c->header_infer);
  t.right_aligned.assign(t.header.size(), true);
  t.right_aligned[0] = false;
  if (policy_column) t.right_aligned[1] = false;
  if (!shown.empty() && std::string(shown.back()->name) == "status") t.right_aligned.back() = false;
  for (const ResultRow* r : group) {
    std::vector<std::string> row = {r->variant + (r->is_baseline ? " (base)" : "")};
    if (policy_column) row.push_back(r->memory_policy);
    for (const std::string& f : swept) {
      std::string value;
      for (const auto& [field, v] : r->point)
        if (field == f) value = v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
      row.push_back(value);
    }
    std::vector<Tone> tones(t.header.size(), Tone::plain);
    const CellContext context{*r, *base_at.at(r->point_label), train};
    for (const Column* c : shown) {
      Cell cell = c->cell(context);
      tones[row.size()] = cell.tone;
      row.push_back(std::move(cell.text));
    }
    t.rows.push_back(std::move(row));
    t.tones.push_back(std::move(tones));
  }
  return {group_title(group), std::move(t)};
}

// Rows of the same block, all sweep points together, in row order. A block swept over `mode`
// gets a table per mode: train and infer rows have different columns (step vs forward time,
// backward FLOPs), and one header cannot name both.
std::vector<std::vector<const ResultRow*>> rows_by_block(const ResultSet& results) {
  std::vector<std::vector<const ResultRow*>> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const ResultRow& r : results.rows) {
    auto [it, added] = index.emplace(std::make_pair(r.block, r.mode), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  return groups;
}

// Note lines as Markdown: a line that starts a paragraph, its indented lines as list items.
std::string markdown_notes(const std::string& notes) {
  std::string out, line;
  std::istringstream in(notes);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind("  ", 0) == 0)
      out += "- " + markdown_escape(line.substr(2)) + "\n";
    else
      out += (out.empty() ? "" : "\n") + markdown_escape(line) + "\n";
  }
  return out + "\n";
}

std::vector<std::string> columns_for(const TableOptions& options, TableStyle style, bool measured, bool network) {
  if (!options.columns.empty()) return options.columns;
  if (options.wide || style == TableStyle::markdown) return kWide;
  if (measured && network) return kCompactNetwork;
  return measured ? kCompact : kCompactAnalysis;
}

}  // namespace

const std::vector<std::string>& table_column_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Column& c : columns()) n.emplace_back(c.name);
    return n;
  }();
  return names;
}

void check_table_columns(const std::vector<std::string>& names) {
  for (const std::string& n : names) column_named(n);
}

std::vector<BlockTable> block_tables(const ResultSet& results) {
  std::vector<BlockTable> tables;
  for (const auto& group : group_by_block(results)) tables.push_back(block_table(group, kWide));
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
      "GFLOP: 2 x MACs plus elementwise work; GMAC: the multiply-accumulates of convolutions alone (what many papers "
      "and posts call \"FLOPs\"; 1 MAC = 2 FLOP). x columns: ratio to the baseline (base) at the same sweep point. "
      "peak: peak bytes of one " +
      pass +
      " (pred. = convbench's memory model, meas. = the runtime's allocator; plain peak: measured when the row has "
      "it, else predicted). saved: activations kept for backward.";
  // Which prediction an analysis shows: analyze leaves the backends' workspace out unless --device.
  if (!measured && results.provenance.is_object() && results.provenance.contains("predicted_workspace") &&
      results.provenance["predicted_workspace"].is_string()) {
    const std::string ws = results.provenance["predicted_workspace"].get<std::string>();
    note += ws == "none" ? " pred. leaves out any backend's workspace (analyze --device cpu|cuda includes it)."
                         : " pred. includes the " + ws + " backend's workspace.";
  }
  if (measured)
    note += " ms: median ± relative noise (stdev/mean). samples/s: the batch over the median time of the " + phase +
            ". TFLOP/s, GB/s: achieved rates of the " + phase +
            ": its FLOPs, and the minimum bytes its ops move, over its median time. --wide shows every column, "
            "--columns chooses.";
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
  return format_tables(results, style, colour, TableOptions{});
}

std::string format_tables(const ResultSet& results, TableStyle style, bool colour, const TableOptions& options) {
  std::string out;
  for (const auto& group : rows_by_block(results)) {
    const BlockTable b =
        block_table(group, columns_for(options, style, any_measured(group), is_network(*group.front())));
    if (style == TableStyle::markdown)
      out += "### " + markdown_escape(b.title) + "\n\n" + b.table.render_markdown() + "\n";
    else
      out += printable(b.title) + "\n" + b.table.render_terminal(colour) + "\n";
    // A variant run with and without a memory policy: what the policy buys.
    if (const std::optional<BlockTable> pt = policies_table(group)) {
      if (style == TableStyle::markdown)
        out += "### " + markdown_escape(pt->title) + "\n\n" + pt->table.render_markdown() + "\n" +
               markdown_escape(policies_note(group)) + "\n";
      else
        out += printable(pt->title) + "\n" + pt->table.render_terminal(colour) + policies_note(group) + "\n";
    }
    // Folded variants: what each folds into what, its proof, and what it buys against its source.
    if (const std::string notes = fold_notes(group); !notes.empty())
      out += style == TableStyle::markdown ? markdown_notes(notes) : notes + "\n";
    // A block run in both layouts: its variants' two layouts side by side, after its own table.
    if (const std::optional<BlockTable> l = layouts_table(group)) {
      if (style == TableStyle::markdown)
        out += "### " + markdown_escape(l->title) + "\n\n" + l->table.render_markdown() + "\n" +
               markdown_escape(one_line(layouts_note(group))) + "\n\n";
      else
        out += printable(l->title) + "\n" + l->table.render_terminal(colour) + layouts_note(group) + "\n\n";
    }
  }
  // Networks and blocks in one run: each variant's effect at both scales, side by side.
  if (const std::optional<BlockTable> nb = network_vs_block_table(results)) {
    if (style == TableStyle::markdown)
      out += "### " + markdown_escape(nb->title) + "\n\n" + nb->table.render_markdown() + "\n" +
             markdown_escape(one_line(network_vs_block_note(results))) + "\n\n";
    else
      out += printable(nb->title) + "\n" + nb->table.render_terminal(colour) + network_vs_block_note(results) + "\n";
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
      "cpu_pressure_share,steal_share,threads,batch,in_channels,out_channels,in_depth,in_height,in_width,"
      "kernel_depth,kernel_height,kernel_width,samples_per_s,layout_conversion,memory_policy,flops_recompute";
  // One column per swept field, its value as a number where it is one (pandas reads it as such).
  std::vector<std::string> swept;
  for (const ResultRow& r : results.rows)
    for (const auto& [field, value] : r.point)
      if (std::find(swept.begin(), swept.end(), field) == swept.end()) swept.push_back(field);
  for (const std::string& f : swept) out += ",sweep_" + csv_escape(f);
  out += "\n";
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
    // The block's fields as numbers: 2-D blocks leave the depth columns empty.
    const std::vector<int64_t> in_spatial = spatial_of(r, r.input_shape);
    const auto dim = [](const std::vector<int64_t>& v, int from_end) {
      return static_cast<int>(v.size()) >= from_end ? std::to_string(v[v.size() - static_cast<size_t>(from_end)])
                                                    : std::string();
    };
    cells.push_back(r.input_shape.empty() ? "" : std::to_string(r.input_shape.front()));
    cells.push_back(r.input_shape.empty() ? "" : std::to_string(channels_of(r, r.input_shape)));
    cells.push_back(r.output_shape.empty() ? "" : std::to_string(channels_of(r, r.output_shape)));
    for (int k : {3, 2, 1}) cells.push_back(dim(in_spatial, k));
    for (int k : {3, 2, 1}) cells.push_back(dim(r.kernel, k));
    const std::optional<double> sps = samples_per_second(r);
    cells.push_back(sps && r.status == RunStatus::ok ? format_significant(*sps, 6) : "");
    cells.push_back(csv_escape(r.layout_conversion));
    cells.push_back(csv_escape(r.memory_policy));
    cells.push_back(std::to_string(r.flops.recompute));
    for (const std::string& f : swept) {
      std::string value;
      for (const auto& [field, v] : r.point)
        if (field == f) value = v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
      cells.push_back(csv_escape(value));
    }
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += '\n';
  }
  return out;
}

}  // namespace convbench
