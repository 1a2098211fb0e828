#include "report/layout_table.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "report/result_columns.hpp"
#include "spec/spec.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

constexpr const char* kFirst = "channels_first";
constexpr const char* kLast = "channels_last";

using Point = std::vector<std::pair<std::string, std::string>>;

// The sweep point without its layout: what a variant's two layouts share.
Point point_without_layout(const ResultRow& r) {
  Point p;
  for (const auto& entry : r.point)
    if (entry.first != "layout") p.push_back(entry);
  return p;
}

std::string shown_value(const std::string& json_text) {
  return json_text.size() >= 2 && json_text.front() == '"' ? json_text.substr(1, json_text.size() - 2) : json_text;
}

// The tone follows what the cell shows: a ratio that prints as 1.00x is neither.
// The two boundary conversions' share of a boundary-converted row's headline time, from its
// --per-op times: "0.412 (9%)"; "-" when the row has no per-op times for both.
std::string conversion_text(const ResultRow& r) {
  const std::optional<double> in = op_headline_ms(r, kToBlockLayoutOp), out = op_headline_ms(r, kFromBlockLayoutOp);
  const std::optional<TimeStats>& t = headline_time(r);
  if (!ran(r) || !in || !out) return "-";
  const double ms = *in + *out;
  std::string text = format_fixed(ms, 3);
  if (t && t->median > 0) text += " (" + format_fixed(100.0 * ms / t->median, 0) + "%)";
  return text;
}

struct LayoutPair {
  const ResultRow* first = nullptr;
  const ResultRow* last = nullptr;
};

}  // namespace

std::optional<BlockTable> layouts_table(const std::vector<const ResultRow*>& block_rows) {
  // Pair by variant, dtype and the rest of the point, in the order the channels-first rows come.
  using Key = std::tuple<std::string, std::string, Point>;
  std::map<Key, size_t> index;
  std::vector<LayoutPair> pairs;
  for (const ResultRow* r : block_rows) {
    if (r->layout != kFirst) continue;
    if (index.emplace(Key{r->variant, r->dtype, point_without_layout(*r)}, pairs.size()).second)
      pairs.push_back({r, nullptr});
  }
  for (const ResultRow* r : block_rows) {
    if (r->layout != kLast) continue;
    const auto it = index.find(Key{r->variant, r->dtype, point_without_layout(*r)});
    if (it != index.end() && !pairs[it->second].last) pairs[it->second].last = r;
  }
  std::erase_if(pairs, [](const LayoutPair& p) { return p.last == nullptr; });
  if (pairs.empty()) return std::nullopt;

  const ResultRow& front = *pairs.front().first;
  bool timed = false;
  // Time columns only when there are times (not for analyze or --memory-only).
  for (const LayoutPair& p : pairs) timed = timed || headline_time(*p.first) || headline_time(*p.last);
  // The swept fields other than layout stay as columns, so each row names its point.
  std::vector<std::string> swept;
  for (const LayoutPair& p : pairs)
    for (const auto& [field, value] : point_without_layout(*p.first))
      if (std::find(swept.begin(), swept.end(), field) == swept.end()) swept.push_back(field);

  const std::string phase = is_training(front) ? "step" : "fwd";
  // Where the channels-last rows convert at the block's boundary, what the two conversions cost
  // is a column of its own: the cl time includes them.
  bool converts = false;
  for (const LayoutPair& p : pairs) converts = converts || p.last->layout_conversion == "boundary";
  TextTable t;
  t.header = {"variant"};
  for (const std::string& f : swept) t.header.push_back(f);
  if (timed) {
    t.header.push_back("cf " + phase + " ms");
    t.header.push_back("cl " + phase + " ms");
    t.header.push_back(phase + " cl/cf");
    if (converts) t.header.push_back("cl convert ms");
  }
  t.header.push_back("peak cl/cf");
  t.right_aligned.assign(t.header.size(), true);
  t.right_aligned[0] = false;

  for (const LayoutPair& p : pairs) {
    std::vector<std::string> row = {p.first->variant};
    for (const std::string& f : swept) {
      std::string value;
      for (const auto& [field, v] : p.first->point)
        if (field == f) value = shown_value(v);
      row.push_back(value);
    }
    std::vector<Tone> tones(t.header.size(), Tone::plain);
    if (timed) {
      row.push_back(time_cell(*p.first, headline_time(*p.first)));
      row.push_back(time_cell(*p.last, headline_time(*p.last)));
      const std::optional<TimeStats>& a = headline_time(*p.first);
      const std::optional<TimeStats>& b = headline_time(*p.last);
      if (ran(*p.first) && ran(*p.last) && a && b && a->median > 0) {
        const double x = b->median / a->median;
        tones[row.size()] = tone_of_ratio(x);
        row.push_back(format_ratio(x));
      } else {
        row.push_back("-");
      }
      if (converts) row.push_back(p.last->layout_conversion == "boundary" ? conversion_text(*p.last) : "none");
    }
    // Like diff: measured when both rows have it, else predicted for both (a ratio of a measured
    // peak to a predicted one would mix what the runtime did with what the model says).
    const bool both_measured = has_measured_peak(*p.first) && has_measured_peak(*p.last);
    const int64_t peak_first = both_measured ? p.first->measured->peak_bytes : p.first->predicted.peak_bytes;
    const int64_t peak_last = both_measured ? p.last->measured->peak_bytes : p.last->predicted.peak_bytes;
    row.push_back(peak_first > 0 ? format_ratio(static_cast<double>(peak_last) / static_cast<double>(peak_first))
                                 : "-");
    t.rows.push_back(std::move(row));
    t.tones.push_back(std::move(tones));
  }
  std::string title = front.block + ": layouts, channels_last / channels_first, " + front.mode;
  if (!front.device.empty()) title += ", device " + front.device;
  return BlockTable{std::move(title), std::move(t), {}};
}

std::string layouts_note(const std::vector<const ResultRow*>& block_rows) {
  // Lines of under 100 columns, so that the note keeps to the compact table's width.
  std::string note =
      "cl/cf = channels_last / channels_first, same variant and point: below 1.00x, channels-last is\n"
      "faster (time) or needs less memory (peak: measured when both rows have it, else predicted).";
  bool converts = false, per_op = false;
  for (const ResultRow* r : block_rows) {
    if (r->layout != kLast || r->layout_conversion != "boundary") continue;
    converts = true;
    per_op = per_op || op_headline_ms(*r, kToBlockLayoutOp).has_value();
  }
  if (converts) {
    note +=
        "\nThe channels_last rows convert at the block's boundary (layout_conversion: boundary): their\n"
        "time includes " +
        std::string(kToBlockLayoutOp) + " and " + kFromBlockLayoutOp + ", and so do their peaks.";
    note += per_op ? "\ncl convert ms: the two conversions' time (forward + backward) and share of the cl time."
                   : "\nRun with --per-op N to time the two conversions apart (cl convert ms).";
  }
  return note;
}

}  // namespace convbench
