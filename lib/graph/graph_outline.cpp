#include "graph/graph_outline.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace convbench {
namespace {

bool is_conv(OpKind k) { return k == OpKind::conv || k == OpKind::conv_transpose || k == OpKind::folded_conv; }

std::string dims_text(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "x" : "") + std::to_string(v[i]);
  return out;
}

// "conv 3x3 16→32 /2 g4": the kernel, the channels, a stride other than 1 and groups.
std::string conv_text(const Graph& g, const Op& op) {
  const TensorDesc& in = g.desc(op.inputs.at(0));
  std::string t = std::string(to_string(op.kind)) + " " + dims_text(op.conv.kernel) + " " +
                  std::to_string(in.shape.size() > 1 ? in.shape[1] : 0) + "→" + std::to_string(op.conv.out_channels);
  if (std::any_of(op.conv.stride.begin(), op.conv.stride.end(), [](int64_t s) { return s != 1; }))
    t += " /" + dims_text(op.conv.stride);
  if (op.conv.groups > 1) t += " g" + std::to_string(op.conv.groups);
  return t;
}

std::string slope_text(double slope) {
  std::ostringstream out;
  out << slope;
  return out.str();
}

// "shortcut" of "shortcut.conv"; "" for a name without a dot.
std::string group_of(const std::string& name) {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

// One group's run of ops: "shortcut: conv 1x1 16→32, batch_norm".
struct Segment {
  std::string group;
  std::vector<std::string> ops;
  bool operator==(const Segment& o) const { return group == o.group && ops == o.ops; }
};

// The ops of a segment, a run of three or more of the same said once ("12 × conv 3x3 32→16").
std::string segment_text(const Segment& s) {
  std::string out = s.group.empty() ? "" : s.group + ": ";
  for (size_t i = 0; i < s.ops.size();) {
    size_t run = 1;
    while (i + run < s.ops.size() && s.ops[i + run] == s.ops[i]) ++run;
    if (run < 3) run = 1;
    out += (i ? ", " : "") + (run > 1 ? std::to_string(run) + " × " : "") + s.ops[i];
    i += run;
  }
  return out;
}

// Repeated runs said once with their count ("12 × [split: slice; branches: conv 3x3 16→16]"): a
// loop of twelve branches would otherwise fill a screen with the same words.
std::string joined(const std::vector<Segment>& segments) {
  std::string out;
  for (size_t i = 0; i < segments.size();) {
    size_t best_period = 0, best_count = 1;
    for (size_t period = 1; period <= 2 && i + period <= segments.size(); ++period) {
      size_t count = 1;
      while (i + (count + 1) * period <= segments.size() &&
             std::equal(segments.begin() + static_cast<std::ptrdiff_t>(i),
                        segments.begin() + static_cast<std::ptrdiff_t>(i + period),
                        segments.begin() + static_cast<std::ptrdiff_t>(i + count * period)))
        ++count;
      if (count >= 3 && count * period > best_count * std::max<size_t>(best_period, 1)) {
        best_period = period;
        best_count = count;
      }
    }
    out += out.empty() ? "" : "; ";
    if (best_period == 0) {
      out += segment_text(segments[i]);
      ++i;
      continue;
    }
    std::string body;
    for (size_t k = 0; k < best_period; ++k) body += (k ? "; " : "") + segment_text(segments[i + k]);
    out += std::to_string(best_count) + " × [" + body + "]";
    i += best_count * best_period;
  }
  return out;
}

}  // namespace

std::string graph_outline(const Graph& g) {
  std::map<int, std::string> producer;  // value id -> the name of the op that makes it
  producer[g.input] = "input";
  std::vector<Segment> segments;
  for (const Op& op : g.ops) {
    std::string text = is_conv(op.kind) ? conv_text(g, op) : std::string(to_string(op.kind));
    // The fused norm's activation is part of what it computes (inplace_abn may have changed it).
    if (op.kind == OpKind::batch_norm_act) text += " (leaky_relu " + slope_text(op.negative_slope) + ")";
    if (op.inputs.size() > 1) {
      const auto name = [&](int v) {
        const auto it = producer.find(v);
        return it != producer.end() ? it->second : std::string("?");
      };
      // Many inputs (a concat of twelve branches): the first and the last.
      if (op.inputs.size() > 3) {
        text += "(" + name(op.inputs.front()) + " … " + name(op.inputs.back()) + ")";
      } else {
        text += "(";
        for (size_t i = 0; i < op.inputs.size(); ++i) text += (i ? " + " : "") + name(op.inputs[i]);
        text += ")";
      }
    }
    const std::string group = group_of(op.name);
    if (segments.empty() || segments.back().group != group)
      segments.push_back({group, {text}});
    else
      segments.back().ops.push_back(text);
    producer[op.output] = op.name;
  }
  return joined(segments);
}

}  // namespace convbench
