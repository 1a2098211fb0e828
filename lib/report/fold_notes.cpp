#include "report/fold_notes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string dims(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

bool all_ones(const std::vector<int64_t>& v, int64_t one) {
  for (int64_t x : v)
    if (x != one) return false;
  return true;
}

// One number when every dim has it, else "2x1".
std::string per_dim(const std::vector<int64_t>& v) {
  return !v.empty() && all_ones(v, v.front()) ? std::to_string(v.front()) : dims(v);
}

// "7x7, stride 2, dilation 2, padding 6, 4 groups, bias"
std::string geometry(const FoldedConvFacts& c) {
  std::string s = dims(c.kernel);
  if (!all_ones(c.stride, 1)) s += ", stride " + per_dim(c.stride);
  if (!all_ones(c.dilation, 1)) s += ", dilation " + per_dim(c.dilation);
  if (!all_ones(c.padding, 0)) s += ", padding " + per_dim(c.padding);
  if (c.groups > 1) s += ", " + std::to_string(c.groups) + " groups";
  if (c.bias) s += ", bias";
  return s;
}

std::string plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The peak as the tables show it: measured when both rows have one, else predicted.
std::pair<int64_t, int64_t> peaks(const ResultRow& a, const ResultRow& b) {
  if (has_measured_peak(a) && has_measured_peak(b)) return {a.measured->peak_bytes, b.measured->peak_bytes};
  return {a.predicted.peak_bytes, b.predicted.peak_bytes};
}

// "p, depth and low_pass" (at most four, then "and N more"); "nothing" for none.
std::string names(const std::vector<std::string>& list) {
  if (list.empty()) return "nothing";
  std::string out;
  const size_t shown = std::min<size_t>(list.size(), 4);
  for (size_t i = 0; i < shown; ++i)
    out += (i == 0 ? "" : (i + 1 == shown && shown == list.size() ? " and " : ", ")) + printable(list[i]);
  if (shown < list.size()) out += " and " + std::to_string(list.size() - shown) + " more";
  return out;
}

std::string signed_mib(int64_t bytes) { return (bytes <= 0 ? "-" : "+") + format_mib(bytes < 0 ? -bytes : bytes); }

const ResultRow* source_row(const std::vector<const ResultRow*>& group, const ResultRow& r) {
  for (const ResultRow* s : group)
    if (s->variant == r.fold->source && s->point_label == r.point_label) return s;
  return nullptr;
}

}  // namespace

std::string fold_buys(const ResultRow& f, const ResultRow& s) {
  const FoldFacts& x = *f.fold;
  std::string out = "what it buys: " + plural(x.ops, "op", "ops") + " instead of " + std::to_string(x.source_ops);
  const auto [peak, source_peak] = peaks(f, s);
  if (is_training(f))
    out += "; saves " + names(x.saved) + " (" + format_mib(f.predicted.saved_bytes) + ") instead of " +
           names(x.source_saved) + " (" + format_mib(s.predicted.saved_bytes) + ") for backward";
  out += peak == source_peak ? ": the same peak (" + format_mib(peak) + ")"
                             : ": " + signed_mib(peak - source_peak) + " at the peak (" + format_mib(source_peak) +
                                   " -> " + format_mib(peak) + ")";
  const std::optional<TimeStats>& t = headline_time(f);
  const std::optional<TimeStats>& ts = headline_time(s);
  if (f.status == RunStatus::ok && s.status == RunStatus::ok && t && ts && ts->median > 0)
    out += "; " + std::string(is_training(f) ? "step " : "forward ") + format_ratio(t->median / ts->median) + " (" +
           format_significant(ts->median, 3) + " -> " + format_significant(t->median, 3) + " ms)";
  return out;
}

std::string fold_notes(const std::vector<const ResultRow*>& group) {
  std::string out;
  for (const ResultRow* r : group) {
    if (!r->fold) continue;
    const FoldFacts& x = *r->fold;
    std::string line = printable(r->variant) + " = " + printable(x.source) + " folded " + x.fold + ":";
    for (size_t i = 0; i < x.convs.size(); ++i) {
      const FoldedConvFacts& c = x.convs[i];
      line += (i ? ";" : "") + std::string(" ") + plural(static_cast<int64_t>(c.replaces.size()), "op", "ops") +
              " -> 1 conv " + printable(c.name) + " (" + geometry(c) + ")";
    }
    line += ". Trains " + format_count(x.trained_params) + " params, runs " + format_count(x.kernel_params);
    if (x.fold == "online") {
      int64_t macs = 0;
      for (const FoldedConvFacts& c : x.convs) macs += c.kernel_macs;
      line += " (the kernel computed from the branch weights in every step: " + format_count(macs) + " MACs)";
    }
    line += ". Proven equal to " + printable(x.source) + " on reference float64 at " + dims(x.proof_shape) +
            (x.proof_reduced ? " (reduced)" : "") + ": max relative error " + sci(x.output_error) +
            (x.gradient_error >= 0 ? " (output), " + sci(x.gradient_error) + " (gradients)" : "") + ".\n";
    if (const ResultRow* s = source_row(group, *r)) line += "  " + fold_buys(*r, *s) + ".\n";
    for (const std::string& k : x.kept) line += "  kept: " + printable(k) + "\n";
    out += line;
  }
  return out;
}

}  // namespace convbench
