#include "analysis/memory_model.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/checked_math.hpp"
#include "ops/autograd_rules.hpp"

namespace convbench {
namespace {

// Byte-count buffers with reference counts: the model's stand-in for tensors.
class BufferSim {
 public:
  int alloc(int64_t bytes, MemoryCategory c) {
    bufs_.push_back({bytes, c, 1});
    on_allocate(bytes, c);
    return static_cast<int>(bufs_.size()) - 1;
  }
  void ref(int id) { ++bufs_[static_cast<size_t>(id)].refs; }
  void unref(int id) {
    Buf& b = bufs_[static_cast<size_t>(id)];
    if (--b.refs == 0) stats_.on_free(b.bytes, b.category);
  }
  int refs(int id) const { return bufs_[static_cast<size_t>(id)].refs; }
  void transient(int64_t bytes, MemoryCategory c) {  // allocated and freed around one call
    if (bytes <= 0) return;
    on_allocate(bytes, c);
    stats_.on_free(bytes, c);
  }
  MemoryStats& stats() { return stats_; }
  int64_t bytes(int id) const { return bufs_[static_cast<size_t>(id)].bytes; }
  MemoryCategory category(int id) const { return bufs_[static_cast<size_t>(id)].category; }
  // The op now running, remembered with the peak it reaches.
  void set_moment(std::string op, std::string phase) {
    op_ = std::move(op);
    phase_ = std::move(phase);
  }
  const std::string& peak_op() const { return peak_op_; }
  const std::string& peak_phase() const { return peak_phase_; }

 private:
  struct Buf {
    int64_t bytes;
    MemoryCategory category;
    int refs;
  };
  void on_allocate(int64_t bytes, MemoryCategory c) {
    const int64_t before = stats_.peak;
    stats_.on_allocate(bytes, c);
    if (stats_.peak > before) {
      peak_op_ = op_;
      peak_phase_ = phase_;
    }
  }
  std::vector<Buf> bufs_;
  MemoryStats stats_;
  std::string op_, phase_, peak_op_, peak_phase_;
};

int64_t bytes_of(const TensorDesc& d) {
  int64_t n = element_bytes(d.dtype);
  for (int64_t x : d.shape) n = checked_mul(n, x);
  return n;
}

}  // namespace

MemoryPrediction predict_memory(const Graph& graph, bool training, const WorkspaceQuery& workspace) {
  const size_t nv = graph.values.size(), nops = graph.ops.size();
  const std::vector<bool> rg = graph.requires_grad();
  std::vector<bool> recorded(nops, false), saved_value(nv, false);
  std::vector<int> last_use(nv, -1);
  for (size_t i = 0; i < nops; ++i) {
    const Op& op = graph.ops[i];
    recorded[i] = training && rg[static_cast<size_t>(op.output)];
    for (int v : op.inputs) last_use[static_cast<size_t>(v)] = static_cast<int>(i);
    if (!recorded[i]) continue;
    const SavedTensors s = saved_tensors(op);
    for (int pos : s.inputs) saved_value[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])] = true;
    if (s.output) saved_value[static_cast<size_t>(op.output)] = true;
  }
  auto ws = [&](const Op& op, Phase phase) { return workspace ? workspace(op, phase) : 0; };

  BufferSim sim;
  MemoryPrediction p;
  for (const Param& prm : graph.params) {
    sim.alloc(bytes_of(prm.desc), MemoryCategory::parameters);
    p.parameter_bytes = checked_add(p.parameter_bytes, bytes_of(prm.desc));
  }
  for (const Param& buf : graph.buffers) sim.alloc(bytes_of(buf.desc), MemoryCategory::buffers);
  std::vector<int> value_buf(nv, -1);
  value_buf[static_cast<size_t>(graph.input)] = sim.alloc(bytes_of(graph.desc(graph.input)), MemoryCategory::inputs);
  const int dy = training ? sim.alloc(bytes_of(graph.desc(graph.output)), MemoryCategory::inputs) : -1;
  p.resident_bytes = sim.stats().current;
  sim.stats().reset_peak();
  // Who made each buffer and who keeps it, for the attribution of saved bytes.
  std::map<int, SavedTensorFacts> kept;
  kept[value_buf[static_cast<size_t>(graph.input)]].what = "block input";

  // ---- forward
  sim.ref(value_buf[static_cast<size_t>(graph.input)]);  // the value table's reference
  std::vector<std::vector<int>> tape(nops);
  for (size_t i = 0; i < nops; ++i) {
    const Op& op = graph.ops[i];
    sim.set_moment(op.name, "forward");
    const auto out = static_cast<size_t>(op.output);
    if (output_aliases_input(op, training)) {
      value_buf[out] = value_buf[static_cast<size_t>(op.inputs[0])];
      sim.ref(value_buf[out]);
    } else {
      value_buf[out] = sim.alloc(bytes_of(graph.desc(op.output)),
                                 saved_value[out] ? MemoryCategory::saved : MemoryCategory::temporaries);
      kept[value_buf[out]].what = "output of " + op.name;
      kept[value_buf[out]].producer = op.name;
    }
    std::vector<int> aux;
    if (training)
      for (const TensorDesc& a : aux_tensors(graph, op)) {
        aux.push_back(sim.alloc(bytes_of(a), recorded[i] ? MemoryCategory::saved : MemoryCategory::temporaries));
        kept[aux.back()].what = (op.kind == OpKind::dropout           ? "mask of "
                                 : op.kind == OpKind::channel_dropout ? "noise of "
                                                                      : "statistics of ") +
                                op.name;
        kept[aux.back()].producer = op.name;
      }
    sim.transient(ws(op, Phase::forward), MemoryCategory::workspace);
    if (recorded[i]) {
      const SavedTensors s = saved_tensors(op);
      for (int pos : s.inputs) {
        const int b = value_buf[static_cast<size_t>(op.inputs[static_cast<size_t>(pos)])];
        sim.ref(b);
        tape[i].push_back(b);
      }
      if (s.output) {
        sim.ref(value_buf[out]);
        tape[i].push_back(value_buf[out]);
      }
      tape[i].insert(tape[i].end(), aux.begin(), aux.end());  // the tape takes the aux refs
      for (int b : tape[i]) {
        std::vector<std::string>& by = kept[b].saved_by;
        if (by.empty() || by.back() != op.name) by.push_back(op.name);
      }
    } else {
      for (int b : aux) sim.unref(b);
    }
    std::vector<int> inputs = op.inputs;
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (int v : inputs)
      if (last_use[static_cast<size_t>(v)] == static_cast<int>(i)) sim.unref(value_buf[static_cast<size_t>(v)]);
  }
  p.saved_bytes = sim.stats().current_by_category[static_cast<size_t>(MemoryCategory::saved)];
  for (auto& [buf, facts] : kept) {  // buffer ids grow in allocation order: forward's order
    if (facts.saved_by.empty()) continue;
    facts.bytes = sim.bytes(buf);
    facts.counted = sim.category(buf) == MemoryCategory::saved;
    p.saved.push_back(std::move(facts));
  }

  // ---- backward
  if (training) {
    std::vector<int> grad(nv, -1);
    sim.ref(dy);
    grad[static_cast<size_t>(graph.output)] = dy;
    for (size_t i = nops; i-- > 0;) {
      if (!recorded[i]) continue;
      const Op& op = graph.ops[i];
      sim.set_moment(op.name, "backward");
      const int g = grad[static_cast<size_t>(op.output)];
      grad[static_cast<size_t>(op.output)] = -1;
      std::vector<int> gi(op.inputs.size(), -1);
      for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
        const int v = op.inputs[pos];
        if (!rg[static_cast<size_t>(v)]) continue;
        if (grad_flow(op, static_cast<int>(pos)) == GradFlow::alias) {
          sim.ref(g);
          gi[pos] = g;
        } else {
          gi[pos] = sim.alloc(bytes_of(graph.desc(v)), MemoryCategory::temporaries);
        }
      }
      for (int prm : op.params) {
        const int64_t b = bytes_of(graph.params[static_cast<size_t>(prm)].desc);
        sim.alloc(b, MemoryCategory::gradients);
        p.gradient_bytes = checked_add(p.gradient_bytes, b);
      }
      sim.transient(ws(op, Phase::backward), MemoryCategory::workspace);
      for (int b : tape[i]) sim.unref(b);
      sim.unref(g);
      for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
        if (gi[pos] < 0) continue;
        int& slot = grad[static_cast<size_t>(op.inputs[pos])];
        if (slot < 0) {
          slot = gi[pos];
        } else if (sim.refs(slot) == 1) {
          sim.unref(gi[pos]);  // added in place into the slot
        } else if (sim.refs(gi[pos]) == 1) {
          sim.unref(slot);  // the slot is added in place into the new gradient
          slot = gi[pos];
        } else {
          const int sum = sim.alloc(bytes_of(graph.desc(op.inputs[pos])), MemoryCategory::temporaries);
          sim.unref(slot);
          sim.unref(gi[pos]);
          slot = sum;
        }
      }
    }
  }
  p.peak_bytes = sim.stats().peak;
  p.peak_op = sim.peak_op();
  p.peak_phase = sim.peak_phase();
  p.at_peak = sim.stats().at_peak;
  p.peak_by_category = sim.stats().peak_by_category;
  return p;
}

}  // namespace convbench
