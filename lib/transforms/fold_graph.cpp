#include "transforms/fold_graph.hpp"

#include <map>
#include <memory>
#include <set>

#include "ops/graph_builder.hpp"
#include "transforms/linear_map.hpp"

namespace convbench {
namespace {

// An emitted region that cannot be one conv after all: keep the op that produces it, and fold again.
struct KeepAndRetry {
  int op;
  std::string reason;
};

class Folder {
 public:
  Folder(const Graph& source, const FoldOptions& options, const std::vector<std::string>& forced)
      : src_(source), options_(options), forced_(forced), maps_(source) {}

  FoldResult run() {
    walk();
    return emit();
  }

 private:
  // Gives every value a map from its region's root; marks the values that must exist.
  void walk() {
    const size_t nv = src_.values.size(), nops = src_.ops.size();
    map_of_.assign(nv, -1);
    needed_.assign(nv, 0);
    kept_.assign(nops, 0);
    reasons_.assign(nops, "");
    map_of_[static_cast<size_t>(src_.input)] = maps_.identity(src_.input);
    const bool inference = !options_.training;
    const bool online = options_.mode == FoldMode::online;
    for (size_t i = 0; i < nops; ++i) {
      const Op& op = src_.ops[i];
      if (!forced_[i].empty()) {
        keep(i, forced_[i]);
        continue;
      }
      if (online && op.kind == OpKind::conv && op.conv.frozen) {
        keep(i, "conv '" + op.name + "' is frozen: fold: online trains the weights it folds, and it has none");
        continue;
      }
      std::vector<int> in;
      for (int v : op.inputs) in.push_back(map_of_[static_cast<size_t>(v)]);
      try {
        map_of_[static_cast<size_t>(op.output)] = maps_.apply(static_cast<int>(i), in, inference, !online);
      } catch (const LinearMapRefusal& e) {
        if (op.kind == OpKind::conv && maps_.map(in.at(0)).reg >= 0) {
          // The conv cannot join its input's region (a border): a new region starts at its input.
          reasons_[i] = e.what();
          const int u = op.inputs.at(0);
          needed_[static_cast<size_t>(u)] = 1;
          map_of_[static_cast<size_t>(op.output)] =
              maps_.apply(static_cast<int>(i), {maps_.identity(u)}, inference, !online);
        } else {
          keep(i, e.what());
        }
      }
    }
    needed_[static_cast<size_t>(src_.output)] = 1;
  }

  void keep(size_t i, const std::string& why) {
    const Op& op = src_.ops[i];
    kept_[i] = 1;
    reasons_[i] = why;
    for (int v : op.inputs) needed_[static_cast<size_t>(v)] = 1;
    map_of_[static_cast<size_t>(op.output)] = maps_.identity(op.output);
  }

  // Adds source op i as it is (its inputs remapped); its parameters and buffers copy the source's.
  int copy_op(GraphBuilder& b, size_t i) {
    Op c = src_.ops[i];
    for (int& v : c.inputs) v = new_id_.at(static_cast<size_t>(v));
    c.params.clear();
    c.buffers.clear();
    c.output = -1;
    const int id = b.add(std::move(c));
    const Op& op = src_.ops[i];
    for (int p : op.params) {
      use_param(p, op.name);
      derivation_->params.push_back({DerivedValue::From::source_param, p});
    }
    for (int p : op.buffers) derivation_->buffers.push_back({DerivedValue::From::source_buffer, p});
    return id;
  }

  // A parameter trained online must belong to one op of the folded graph: a weight both kept (its
  // output is needed by a non-linear op) and folded into a conv would be shared by two ops.
  void use_param(int p, const std::string& by) {
    if (options_.mode != FoldMode::online) return;
    const auto [it, inserted] = param_user_.emplace(p, by);
    if (!inserted)
      throw KeepAndRetry{-1, "'" + src_.params[static_cast<size_t>(p)].name + "' would be trained by both '" +
                                 it->second + "' and '" + by + "'"};
  }

  FoldResult emit() {
    FoldResult result;
    derivation_ = std::make_shared<ParamDerivation>();
    derivation_->source_params = src_.params;
    derivation_->source_buffers = src_.buffers;
    GraphBuilder b(src_.name, src_.desc(src_.input));
    new_id_.assign(src_.values.size(), -1);
    new_id_[static_cast<size_t>(src_.input)] = b.input();
    std::map<int, int> emitted;                        // register -> value in the folded graph
    std::vector<std::pair<int, std::string>> renames;  // folded_conv params named as the source's
    for (size_t i = 0; i < src_.ops.size(); ++i) {
      const Op& op = src_.ops[i];
      const auto v = static_cast<size_t>(op.output);
      if (kept_[i]) {
        new_id_[v] = copy_op(b, i);
        continue;
      }
      if (!needed_[v]) continue;
      const int m = map_of_[v];
      const LinearMap& lm = maps_.map(m);
      if (lm.reg < 0) {  // the identity of its root (dropout in inference)
        new_id_[v] = new_id_.at(static_cast<size_t>(lm.root));
        continue;
      }
      if (const auto it = emitted.find(lm.reg); it != emitted.end()) {
        new_id_[v] = it->second;
        continue;
      }
      if (lm.ops.size() == 1 && lm.ops[0] == static_cast<int>(i)) {  // one op of its root: nothing to fold
        new_id_[v] = copy_op(b, i);
        emitted[lm.reg] = new_id_[v];
        continue;
      }
      ConvCut cut;
      try {
        cut = maps_.cut_conv(m, op.output);
      } catch (const LinearMapRefusal& e) {
        throw KeepAndRetry{static_cast<int>(i), e.what()};
      }
      auto program = std::make_shared<FoldProgram>(maps_.program_for(m, cut));
      FoldedConv folded{op.name, {}, cut.attrs, program->macs()};
      for (int o : lm.ops) folded.ops.push_back(src_.ops[static_cast<size_t>(o)].name);
      const int root = new_id_.at(static_cast<size_t>(lm.root));
      if (options_.mode == FoldMode::online) {
        Op f;
        f.kind = OpKind::folded_conv;
        f.name = op.name;
        f.inputs = {root};
        f.conv = cut.attrs;
        f.fold = program;
        for (const FoldOperand& o : program->operands) use_param(o.index, op.name);
        const auto first = static_cast<int>(derivation_->params.size());
        new_id_[v] = b.add(std::move(f));
        for (size_t k = 0; k < program->operands.size(); ++k) {
          derivation_->params.push_back({DerivedValue::From::source_param, program->operands[k].index});
          renames.emplace_back(first + static_cast<int>(k), program->operands[k].name);
        }
      } else {
        const int index = static_cast<int>(derivation_->programs.size());
        derivation_->programs.push_back(program);
        new_id_[v] = b.conv(op.name, root, cut.attrs);
        derivation_->params.push_back({DerivedValue::From::fold_weight, index});
        if (cut.attrs.bias) derivation_->params.push_back({DerivedValue::From::fold_bias, index});
      }
      emitted[lm.reg] = new_id_[v];
      result.convs.push_back(std::move(folded));
    }
    result.graph = b.finish(new_id_.at(static_cast<size_t>(src_.output)));
    for (const auto& [p, name] : renames) result.graph.params.at(static_cast<size_t>(p)).name = name;
    for (Param& p : result.graph.params) p.init = ParamInit::derived;
    for (Param& p : result.graph.buffers) p.init = ParamInit::derived;
    result.graph.derivation = derivation_;
    std::set<std::string> seen;
    for (const std::string& r : reasons_)
      if (!r.empty() && seen.insert(r).second) result.kept.push_back(r);
    return result;
  }

  const Graph& src_;
  FoldOptions options_;
  const std::vector<std::string>& forced_;
  LinearMapBuilder maps_;
  std::vector<int> map_of_;
  std::vector<char> needed_, kept_;
  std::vector<std::string> reasons_;
  std::vector<int> new_id_;
  std::shared_ptr<ParamDerivation> derivation_;
  std::map<int, std::string> param_user_;
};

}  // namespace

FoldResult fold_graph(const Graph& source, const FoldOptions& options) {
  std::vector<std::string> forced(source.ops.size());
  std::vector<std::string> shared_weights;
  for (;;) {
    try {
      FoldResult r = Folder(source, options, forced).run();
      if (r.convs.empty()) {
        std::string why;
        for (const std::string& k : r.kept) why += (why.empty() ? "" : "; ") + k;
        for (const std::string& k : shared_weights) why += (why.empty() ? "" : "; ") + k;
        throw FoldRefused("nothing to fold" + (why.empty() ? std::string(": every conv stands alone") : ": " + why));
      }
      return r;
    } catch (const KeepAndRetry& k) {
      if (k.op < 0) {  // a weight shared online: fold nothing rather than train it twice
        shared_weights.push_back(k.reason);
        throw FoldRefused("cannot fold online: " + k.reason);
      }
      if (!forced.at(static_cast<size_t>(k.op)).empty())
        throw std::logic_error("fold: op " + source.ops[static_cast<size_t>(k.op)].name + " kept twice");
      forced[static_cast<size_t>(k.op)] = k.reason;
    }
  }
}

}  // namespace convbench
