#include "backends/cpu/onednn_ops.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

namespace convbench::cpu {

using dnnl::memory;

memory::dims to_dims(const std::vector<int64_t>& v) { return memory::dims(v.begin(), v.end()); }

memory::data_type onednn_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: return memory::data_type::f32;
    case DType::bfloat16: return memory::data_type::bf16;
    case DType::float16: return memory::data_type::f16;
    default:
      throw std::invalid_argument("cpu backend: oneDNN is not given " + std::string(to_string(dtype)) + " tensors");
  }
}

memory::desc activation_md(const TensorDesc& desc, memory::data_type type) {
  const bool last = desc.layout == Layout::channels_last;
  memory::format_tag tag;
  switch (desc.rank()) {
    case 4: tag = last ? memory::format_tag::nhwc : memory::format_tag::nchw; break;
    case 5: tag = last ? memory::format_tag::ndhwc : memory::format_tag::ncdhw; break;
    default: throw std::invalid_argument("cpu backend: activations must be 4-D or 5-D, got " + desc.shape_string());
  }
  return memory::desc(to_dims(desc.shape), type, tag);
}

memory::desc vector_md(int64_t n, memory::data_type type) { return memory::desc({n}, type, memory::format_tag::a); }

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

OneDnnOps::OneDnnOps(ConvFusion fusion) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), fusion_(fusion) {
  attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
}

bool OneDnnOps::has_fast_conv(DType dtype) {
  const auto known = fast_conv_.find(dtype);
  if (known != fast_conv_.end()) return known->second;
  bool fast = false;
  try {
    const memory::data_type t = onednn_type(dtype);
    const memory::desc src({1, 16, 8, 8}, t, memory::format_tag::any), dst = src;
    const memory::desc weights({16, 16, 3, 3}, t, memory::format_tag::any);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src,
                                        weights, dst, {1, 1}, {0, 0}, {1, 1}, {1, 1}),
        attr_, engine_);
    fast = !is_reference_impl(pd);
  } catch (const dnnl::error&) {
    fast = false;  // no implementation at all for this data type
  }
  fast_conv_.emplace(dtype, fast);
  return fast;
}

int64_t OneDnnOps::workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose: {
      if (phase == Phase::backward && !training) return 0;
      const bool grad_input = graph.values.at(static_cast<size_t>(op.inputs.at(0))).requires_grad;
      return conv_plan(graph, op, phase, training, grad_input).workspace_bytes;
    }
    case OpKind::batch_norm:
      if (!batch_norm_on_onednn(graph.desc(op.inputs.at(0)), phase)) return 0;
      return batch_norm_plan(graph, op, training).workspace_bytes;
    default: return 0;
  }
}

void OneDnnOps::add_step(Plan& plan, const dnnl::primitive_desc& pd, std::vector<Operand> operands) {
  Step step;
  step.primitive = dnnl::primitive(pd);
  ++primitives_created_;
  step.scratchpad = pd.scratchpad_desc();
  for (Operand& o : operands) {
    o.internal = pd.query_md(dnnl::query::exec_arg_md, o.arg);
    if (o.reordered()) {
      const dnnl::reorder::primitive_desc rpd =
          o.is_output ? dnnl::reorder::primitive_desc(engine_, o.internal, engine_, o.user, attr_)
                      : dnnl::reorder::primitive_desc(engine_, o.user, engine_, o.internal, attr_);
      o.reorder = dnnl::reorder(rpd);
      o.reorder_scratchpad = rpd.scratchpad_desc();
      ++primitives_created_;
    }
  }
  step.operands = std::move(operands);
  plan.steps.push_back(std::move(step));
}

void OneDnnOps::place(Plan& plan) {
  // An input copy (same source, same format) read by several steps is shared: it lives at the
  // front of the workspace for the whole call and is made by the first step that reads it.
  // Everything else a step needs is private to it and reuses the space after the shared copies,
  // because steps run one after another.
  struct Shared {
    int source;
    memory::desc md;
    int64_t offset;
  };
  std::vector<Shared> shared;
  auto uses = [&](int source, const memory::desc& md) {
    int n = 0;
    for (const Step& s : plan.steps)
      for (const Operand& o : s.operands)
        if (!o.is_output && o.reordered() && o.source == source && o.internal == md) ++n;
    return n;
  };
  int64_t shared_bytes = 0;
  for (Step& s : plan.steps)
    for (Operand& o : s.operands) {
      if (o.is_output || !o.reordered() || uses(o.source, o.internal) < 2) continue;
      auto it = std::find_if(shared.begin(), shared.end(),
                             [&](const Shared& sh) { return sh.source == o.source && sh.md == o.internal; });
      if (it != shared.end()) {
        o.offset = it->offset;
        o.filled_earlier = true;
      } else {
        o.offset = shared_bytes;
        shared.push_back({o.source, o.internal, shared_bytes});
        shared_bytes += align_workspace(static_cast<int64_t>(o.internal.get_size()));
      }
    }
  int64_t largest_step = 0;
  for (Step& s : plan.steps) {
    int64_t cursor = shared_bytes;
    int64_t scratch = static_cast<int64_t>(s.scratchpad.get_size());
    for (Operand& o : s.operands) {
      if (!o.reordered()) continue;
      scratch = std::max(scratch, static_cast<int64_t>(o.reorder_scratchpad.get_size()));
      if (o.offset >= 0) continue;  // shared
      o.offset = cursor;
      cursor += align_workspace(static_cast<int64_t>(o.internal.get_size()));
    }
    s.scratch_offset = cursor;
    cursor += align_workspace(scratch);
    largest_step = std::max(largest_step, cursor);
  }
  plan.workspace_bytes = largest_step;
}

void OneDnnOps::run(const Plan& plan, const std::vector<void*>& tensors, void* workspace) {
  if (plan.workspace_bytes > 0 && workspace == nullptr)
    throw std::invalid_argument("cpu backend: this op needs " + std::to_string(plan.workspace_bytes) +
                                " bytes of workspace and got none");
  char* ws = static_cast<char*>(workspace);
  for (const Step& step : plan.steps) {
    char* scratch_ptr = ws ? ws + step.scratch_offset : nullptr;
    std::unordered_map<int, memory> args;
    auto with_scratchpad = [&](const memory::desc& md, std::unordered_map<int, memory>& a) {
      if (md.get_size() > 0) a.insert({DNNL_ARG_SCRATCHPAD, memory(md, engine_, scratch_ptr)});
    };
    std::vector<std::pair<const Operand*, memory>> outputs_to_copy;
    for (const Operand& o : step.operands) {
      void* user_ptr = tensors.at(static_cast<size_t>(o.source));
      if (user_ptr == nullptr) throw std::logic_error("cpu backend: a oneDNN argument has no tensor");
      memory user(o.user, engine_, user_ptr);
      if (!o.reordered()) {
        args.insert({o.arg, user});
        continue;
      }
      memory internal(o.internal, engine_, ws + o.offset);
      if (o.is_output) {
        outputs_to_copy.emplace_back(&o, user);
      } else if (!o.filled_earlier) {
        std::unordered_map<int, memory> r{{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, internal}};
        with_scratchpad(o.reorder_scratchpad, r);
        o.reorder.execute(stream_, r);
      }
      args.insert({o.arg, internal});
    }
    with_scratchpad(step.scratchpad, args);
    step.primitive.execute(stream_, args);
    for (auto& [o, user] : outputs_to_copy) {
      std::unordered_map<int, memory> r{{DNNL_ARG_FROM, args.at(o->arg)}, {DNNL_ARG_TO, user}};
      with_scratchpad(o->reorder_scratchpad, r);
      o->reorder.execute(stream_, r);
    }
  }
  stream_.wait();
}

}  // namespace convbench::cpu
