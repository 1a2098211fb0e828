#include "report/networks_side_by_side.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "util/text_table.hpp"

namespace convbench {
namespace {

// What makes two networks' rows comparable: the same input, numbers and mode, on one device.
using InputKey = std::tuple<std::vector<int64_t>, std::string, std::string, std::string, std::string>;

InputKey input_key(const ResultRow& r) { return {r.input_shape, r.dtype, r.layout, r.mode, r.device}; }

// The baselines of the networks (one per network group), by input, in the results' order; only
// inputs that two or more networks share.
std::vector<std::vector<const ResultRow*>> comparable_networks(const ResultSet& results) {
  std::vector<InputKey> order;
  std::map<InputKey, std::vector<const ResultRow*>> by_input;
  for (const auto& group : group_by_block(results)) {
    const ResultRow& base = baseline_of(group);
    if (!is_network(base)) continue;
    const InputKey key = input_key(base);
    if (!by_input.count(key)) order.push_back(key);
    by_input[key].push_back(&base);
  }
  std::vector<std::vector<const ResultRow*>> out;
  for (const InputKey& key : order)
    if (by_input[key].size() >= 2) out.push_back(by_input[key]);
  return out;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

std::optional<double> time_ratio(const ResultRow& r, const ResultRow& ref) {
  const std::optional<TimeStats>& t = headline_time(r);
  const std::optional<TimeStats>& tr = headline_time(ref);
  if (!ran(r) || !ran(ref) || !t || !tr || tr->median <= 0) return std::nullopt;
  return t->median / tr->median;
}

// The peak both rows have measured, else both predicted (never one of each).
std::pair<int64_t, bool> peak_of(const ResultRow& r, const ResultRow& ref) {
  const bool measured = has_measured_peak(r) && has_measured_peak(ref);
  return {measured ? r.measured->peak_bytes : r.predicted.peak_bytes, measured};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace

std::vector<BlockTable> networks_side_by_side_tables(const ResultSet& results) {
  std::vector<BlockTable> tables;
  for (const auto& nets : comparable_networks(results)) {
    const ResultRow& ref = *nets.front();
    const bool timed = std::any_of(nets.begin(), nets.end(), [](const ResultRow* r) { return headline_time(*r); });
    const bool train = is_training(ref);
    BlockTable t;
    t.title = "networks side by side: input " + shape_text(ref.input_shape) + ", " + ref.dtype + ", " + ref.layout +
              ", " + ref.mode + (ref.device.empty() ? "" : ", device " + ref.device) + "; x: against " + ref.block;
    t.table.header = {"network", "variant", "params", train ? "GFLOP step" : "GFLOP fwd", "GMAC fwd"};
    if (timed) t.table.header.insert(t.table.header.end(), {train ? "step ms" : "fwd ms", "samples/s"});
    t.table.header.insert(t.table.header.end(), {"peak", "params x", "FLOP x"});
    if (timed) t.table.header.insert(t.table.header.end(), {"time x", "time/FLOP x"});
    t.table.header.push_back("peak x");
    t.table.right_aligned.assign(t.table.header.size(), true);
    t.table.right_aligned[0] = t.table.right_aligned[1] = false;
    for (const ResultRow* r : nets) {
      const auto [peak, measured] = peak_of(*r, ref);
      const auto [ref_peak, ref_measured] = peak_of(ref, *r);
      std::vector<std::string> row = {r->block, r->variant, format_count(r->params),
                                      format_fixed(static_cast<double>(headline_flops(*r)) / 1e9, 3),
                                      format_fixed(static_cast<double>(r->macs.forward) / 1e9, 3)};
      const std::optional<double> tx = time_ratio(*r, ref);
      if (timed) {
        const std::optional<TimeStats>& time = headline_time(*r);
        const std::optional<double> sps = samples_per_second(*r);
        row.push_back(time && ran(*r) ? format_fixed(time->median, 3) : "-");
        row.push_back(sps && ran(*r) ? format_fixed(*sps, 1) : "-");
      }
      const double flop_x = ratio(static_cast<double>(headline_flops(*r)), static_cast<double>(headline_flops(ref)));
      row.push_back(format_mib(peak) + (measured ? "" : " pred."));
      row.push_back(format_ratio(ratio(static_cast<double>(r->params), static_cast<double>(ref.params))));
      row.push_back(format_ratio(flop_x));
      if (timed) {
        row.push_back(tx ? format_ratio(*tx) : "-");
        row.push_back(tx && flop_x > 0 ? format_ratio(*tx / flop_x) : "-");
      }
      row.push_back(format_ratio(ratio(static_cast<double>(peak), static_cast<double>(ref_peak))));
      t.table.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
  return tables;
}

std::string networks_side_by_side_note(const ResultSet& results) {
  std::string out;
  for (const auto& nets : comparable_networks(results)) {
    const ResultRow& ref = *nets.front();
    for (const ResultRow* r : nets) {
      if (r == &ref) continue;
      const std::optional<double> tx = time_ratio(*r, ref);
      if (!tx) continue;
      const double flop_x = ratio(static_cast<double>(headline_flops(*r)), static_cast<double>(headline_flops(ref)));
      if (flop_x <= 0) continue;
      const double per_flop = *tx / flop_x;
      out += r->block + ": " + format_ratio(flop_x) + " the FLOPs and " + format_ratio(*tx) + " the " +
             (is_training(*r) ? "step" : "forward") + " time of " + ref.block + ": " + format_ratio(per_flop) +
             " the time per FLOP" +
             (flop_x < 1.0 && *tx >= 1.0 ? " (fewer FLOPs, yet no faster)"
              : per_flop >= 2.0          ? " (its FLOPs overstate its speed)"
                                         : "") +
             ".\n";
    }
  }
  if (!out.empty())
    out +=
        "x: each network's baseline variant against the first network of the spec at the same input; time/FLOP x: "
        "time x over FLOP x (above 1.00x a FLOP costs more time than in the first network); peak: measured when both "
        "rows have a measured peak, else predicted (pred.).\n";
  return out;
}

}  // namespace convbench
