#include "report/network_vs_block.hpp"

#include <utility>

#include "util/text_table.hpp"

namespace convbench {
namespace {

// A variant's ratios to its group's baseline: time only when both rows were timed and ran,
// the peak measured when both have a measured peak, else predicted (as the per-block tables).
struct Ratios {
  std::optional<double> time;
  double peak = 0;
  bool peak_measured = false;
  double params = 0;
};

Ratios ratios(const ResultRow& r, const ResultRow& base) {
  Ratios x;
  const std::optional<TimeStats>& t = headline_time(r);
  const std::optional<TimeStats>& tb = headline_time(base);
  if (r.status == RunStatus::ok && base.status == RunStatus::ok && t && tb && tb->median > 0)
    x.time = t->median / tb->median;
  x.peak_measured = has_measured_peak(r) && has_measured_peak(base);
  const int64_t peak = x.peak_measured ? r.measured->peak_bytes : r.predicted.peak_bytes;
  const int64_t base_peak = x.peak_measured ? base.measured->peak_bytes : base.predicted.peak_bytes;
  x.peak = base_peak > 0 ? static_cast<double>(peak) / static_cast<double>(base_peak) : 0;
  x.params = base.params > 0 ? static_cast<double>(r.params) / static_cast<double>(base.params) : 0;
  return x;
}

struct Pairing {
  const ResultRow* net = nullptr;
  const ResultRow* net_base = nullptr;
  const ResultRow* block = nullptr;
  const ResultRow* block_base = nullptr;
};

std::string group_name(const ResultRow& r) {
  return r.block + (r.point_label.empty() ? "" : " [" + r.point_label + "]");
}

const ResultRow* find_variant(const std::vector<const ResultRow*>& group, const std::string& variant) {
  for (const ResultRow* r : group)
    if (r->variant == variant) return r;
  return nullptr;
}

std::vector<Pairing> pairings(const ResultSet& results) {
  std::vector<Pairing> out;
  const auto groups = group_by_block(results);
  for (const auto& net : groups) {
    const ResultRow& net_base = baseline_of(net);
    if (!is_network(net_base)) continue;
    for (const auto& block : groups) {
      const ResultRow& block_base = baseline_of(block);
      if (is_network(block_base) || block_base.mode != net_base.mode || block_base.variant != net_base.variant)
        continue;
      for (const ResultRow* r : net) {
        if (r == &net_base) continue;
        if (const ResultRow* b = find_variant(block, r->variant)) out.push_back({r, &net_base, b, &block_base});
      }
    }
  }
  return out;
}

std::string ratio_text(const std::optional<double>& v) { return v ? format_ratio(*v) : "-"; }

}  // namespace

std::optional<BlockTable> network_vs_block_table(const ResultSet& results) {
  const std::vector<Pairing> pairs = pairings(results);
  if (pairs.empty()) return std::nullopt;
  BlockTable t;
  t.title = "block vs network: each variant against its baseline on one block and in the whole network";
  t.table.header = {"variant", "block", "time x", "peak x", "params x", "network", "time x", "peak x", "params x"};
  t.table.right_aligned = {false, false, true, true, true, false, true, true, true};
  for (const Pairing& p : pairs) {
    const Ratios b = ratios(*p.block, *p.block_base), n = ratios(*p.net, *p.net_base);
    t.table.rows.push_back({p.net->variant, group_name(*p.block), ratio_text(b.time),
                            format_ratio(b.peak) + (b.peak_measured ? "" : " pred."), format_ratio(b.params),
                            group_name(*p.net), ratio_text(n.time),
                            format_ratio(n.peak) + (n.peak_measured ? "" : " pred."), format_ratio(n.params)});
  }
  return t;
}

std::string network_vs_block_note(const ResultSet& results) {
  std::string out;
  for (const Pairing& p : pairings(results)) {
    const Ratios b = ratios(*p.block, *p.block_base), n = ratios(*p.net, *p.net_base);
    auto part = [](const Ratios& x) {
      std::string s = format_ratio(x.peak) + " peak";
      if (x.time) s += ", " + format_ratio(*x.time) + " " + "time";
      return s;
    };
    out += p.net->variant + ": " + part(b) + " per block (" + group_name(*p.block) + "); " + part(n) +
           " per network (" + group_name(*p.net) + ").\n";
  }
  if (!out.empty())
    out +=
        "time: the training step (forward in inference) over the baseline's; peak: measured when both rows "
        "have a measured peak, else predicted (pred.).\n";
  return out;
}

}  // namespace convbench
