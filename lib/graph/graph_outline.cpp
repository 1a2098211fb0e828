#include "graph/graph_outline.hpp"

#include <algorithm>
#include <map>

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

// "shortcut" of "shortcut.conv"; "" for a name without a dot.
std::string group_of(const std::string& name) {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

}  // namespace

std::string graph_outline(const Graph& g) {
  std::map<int, std::string> producer;  // value id -> the name of the op that makes it
  producer[g.input] = "input";
  std::string out, group;
  bool first = true;
  for (const Op& op : g.ops) {
    std::string text = is_conv(op.kind) ? conv_text(g, op) : std::string(to_string(op.kind));
    if (op.inputs.size() > 1) {
      text += "(";
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        const auto it = producer.find(op.inputs[i]);
        text += (i ? " + " : "") + (it != producer.end() ? it->second : std::string("?"));
      }
      text += ")";
    }
    const std::string op_group = group_of(op.name);
    if (first)
      out = (op_group.empty() ? "" : op_group + ": ") + text;
    else if (op_group != group)
      out += "; " + (op_group.empty() ? "" : op_group + ": ") + text;
    else
      out += ", " + text;
    group = op_group;
    first = false;
    producer[op.output] = op.name;
  }
  return out;
}

}  // namespace convbench
