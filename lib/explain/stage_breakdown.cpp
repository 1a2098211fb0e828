#include "explain/stage_breakdown.hpp"

#include <map>

namespace convbench {

std::string stage_of(const std::string& op_name) { return op_name.substr(0, op_name.find('.')); }

std::vector<StageFacts> stage_breakdown(const std::vector<OpFacts>& ops, const std::optional<double>& headline_ms) {
  std::vector<StageFacts> stages;
  std::map<std::string, size_t> index;
  std::vector<bool> all_timed;
  for (const OpFacts& o : ops) {
    const std::string name = stage_of(o.name);
    auto [it, added] = index.emplace(name, stages.size());
    if (added) {
      stages.push_back(StageFacts{});
      stages.back().name = name;
      all_timed.push_back(true);
    }
    StageFacts& s = stages[it->second];
    ++s.ops;
    s.params += o.params;
    s.macs += o.macs;
    s.flops += o.flops;
    s.saved_bytes += o.saved_bytes;
    if (o.time_ms)
      s.time_ms = s.time_ms.value_or(0.0) + *o.time_ms;
    else
      all_timed[it->second] = false;
  }
  // A stage with an op that has no time has no time: a partial sum would understate it.
  for (size_t i = 0; i < stages.size(); ++i) {
    if (!all_timed[i]) stages[i].time_ms.reset();
    if (stages[i].time_ms && headline_ms && *headline_ms > 0) stages[i].time_share = *stages[i].time_ms / *headline_ms;
  }
  return stages;
}

}  // namespace convbench
