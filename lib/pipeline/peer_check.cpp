#include "pipeline/peer_check.hpp"

#include <cmath>

#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using nlohmann::json;

std::vector<double> dumped_values(const json& t, const TensorDesc& expect, const std::string& name) {
  const auto shape = t.at("shape").get<std::vector<int64_t>>();
  if (shape != expect.shape)
    throw std::runtime_error(name + ": dumped shape differs from convbench's " + expect.shape_string());
  return t.at("data").get<std::vector<double>>();
}

double norm(const std::vector<double>& v) {
  double n = 0;
  for (double x : v) n += x * x;
  return std::sqrt(n);
}

// ||ours - peer|| / max(||peer||, floor). The floor matters for tensors that are zero up to
// rounding, such as the bias gradient of a conv followed by batch norm: their "relative" error
// is rounding noise over rounding noise, so they are measured against 1% of the row's
// largest gradient instead.
TensorAgreement agree(const std::string& name, const std::vector<double>& ours, const std::vector<double>& peer,
                      double floor, double tolerance) {
  TensorAgreement a;
  a.name = name;
  if (ours.size() != peer.size()) {
    a.rel_error = INFINITY;
    return a;
  }
  double diff = 0;
  for (size_t i = 0; i < peer.size(); ++i) diff += (ours[i] - peer[i]) * (ours[i] - peer[i]);
  const double denom = std::max(norm(peer), floor);
  a.rel_error = denom > 0 ? std::sqrt(diff) / denom : std::sqrt(diff);
  a.ok = a.rel_error <= tolerance;
  return a;
}

// One tensor against the peer's; beyond the tolerance, against the peer's float64 run (`exact`,
// when the dump has one) too: convbench's tensor then agrees when it is no further from that run
// than the peer's own. That is the distance the arithmetic allows a peer computing in lower
// precision (an AMP step; a float32 forward of a module whose file holds float32 weights).
TensorAgreement judge(const std::string& name, const std::vector<double>& ours, const std::vector<double>& peer,
                      double floor, double tolerance, const json* exact, const TensorDesc& desc) {
  TensorAgreement a = agree(name, ours, peer, floor, tolerance);
  if (!a.ok && exact) {
    const std::vector<double> t = dumped_values(*exact, desc, name + " (float64 step)");
    a.ours_from_truth = agree(name, ours, t, floor, tolerance).rel_error;
    a.peer_from_truth = agree(name, peer, t, floor, tolerance).rel_error;
    a.ok = *a.ours_from_truth <= std::max(tolerance, *a.peer_from_truth);
  }
  return a;
}

// The dump's parameters and the buffers as they were before its step, by name, into `state`.
void upload_dumped_weights(Backend& backend, const Graph& g, const json& dump, ModelState& state) {
  for (size_t i = 0; i < g.params.size(); ++i)
    upload(backend, state.params[i],
           dumped_values(dump.at("params").at(g.params[i].name), g.params[i].desc, g.params[i].name));
  for (size_t i = 0; i < g.buffers.size(); ++i)
    upload(backend, state.buffers[i],
           dumped_values(dump.at("buffers_before").at(g.buffers[i].name), g.buffers[i].desc, g.buffers[i].name));
}

// An inference dump (mode infer): the block's input and the peer's forward output, with the
// weights either in the dump or, when it has none, convbench's own starting weights for the
// dump's seed (what `convbench export` wrote into the peer's model).
DumpCheck check_forward(DumpCheck r, const Graph& g, const json& dump, Backend& backend, double tolerance) {
  Executor ex(g, backend, false);
  ModelState state = ex.init_state(dump.value("seed", uint64_t{0}));
  if (dump.contains("params")) upload_dumped_weights(backend, g, dump, state);
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  upload(backend, x, dumped_values(dump.at("input"), g.desc(g.input), "input"));
  Tensor y = ex.forward(state, x);
  const json* truth =
      dump.contains("truth") && dump.at("truth").contains("output") ? &dump.at("truth").at("output") : nullptr;
  r.tensors.push_back(judge("output", download(backend, y),
                            dumped_values(dump.at("output"), g.desc(g.output), "output"), 0.0, tolerance, truth,
                            g.desc(g.output)));
  if (!r.tensors.back().ok) r.status = DumpCheckStatus::mismatch;
  return r;
}

}  // namespace

std::string to_string(DumpCheckStatus status) {
  switch (status) {
    case DumpCheckStatus::ok: return "ok";
    case DumpCheckStatus::mismatch: return "mismatch";
    case DumpCheckStatus::missing: return "missing";
    case DumpCheckStatus::unsupported: return "unsupported";
    case DumpCheckStatus::error: return "error";
  }
  return "error";  // unreachable: -Wswitch checks that every enumerator is handled
}

std::string peer_dump_file_name(const BlockSpec& block, const VariantSpec& variant) {
  const std::string label = block.point.empty() ? "default" : point_label(block);
  std::string raw = block.name + "__" + variant.name + "__" + label, out;
  for (char c : raw)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || std::string("_-.,=+").find(c) != std::string::npos) ? c : '_';
  return out + ".json";
}

DumpCheck check_against_dump(const BlockSpec& spec_block, const VariantSpec& variant, const json& dump,
                             Backend& backend, double tolerance) {
  DumpCheck r;
  r.block = spec_block.name;
  r.variant = variant.name;
  r.point_label = point_label(spec_block);
  r.tolerance = tolerance;
  try {
    r.peer = dump.value("peer", r.peer);
    // The peer may have shrunk batch and spatial size (--dump-scale): take them from its input.
    BlockSpec block = spec_block;
    const auto in_shape = dump.at("input").at("shape").get<std::vector<int64_t>>();
    block.batch = in_shape.at(0);
    block.size.assign(in_shape.begin() + 2, in_shape.end());
    // The reference backend replays a plain step in float64. An AMP step keeps its dtypes (float32
    // weights, the low dtype where autocast casts), which the reference rounds every tensor to, as
    // PyTorch stores them.
    const bool amp = precision_of(spec_block, variant).precision != Precision::plain;
    if (backend.name() == "reference" && !amp) block.dtype = DType::float64;
    const Graph g = build_variant_graph(block, variant);
    for (const Op& op : g.ops)
      if (auto why = backend.unsupported(g, op)) {
        r.status = DumpCheckStatus::unsupported;
        r.message = op.name + ": " + *why;
        return r;
      }
    if (block.mode == RunMode::infer) return check_forward(r, g, dump, backend, tolerance);
    Executor ex(g, backend, true);
    ex.set_dropout_seed(dump.value("dropout_seed", uint64_t{0x5eed}), true);
    ModelState state = ex.init_state(0);
    upload_dumped_weights(backend, g, dump, state);
    // An amp_float16 step scales its loss at the scale the peer's GradScaler used.
    if (state.loss_scaler && dump.contains("loss_scale"))
      state.loss_scaler->scale = dump.at("loss_scale").get<double>();
    Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
    upload(backend, x, dumped_values(dump.at("input"), g.desc(g.input), "input"));
    Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
    upload(backend, dy, dumped_values(dump.at("grad_output"), g.desc(g.output), "grad_output"));
    Tensor y = ex.forward(state, x);
    const double loss_scale = state.loss_scaler ? state.loss_scaler->scale : 1.0;  // the scale this step uses
    ex.backward(state, dy);
    std::vector<std::vector<double>> peer_grads;
    double largest_grad = 0;
    for (size_t i = 0; i < g.params.size(); ++i) {
      peer_grads.push_back(
          dumped_values(dump.at("param_grads").at(g.params[i].name), g.params[i].desc, g.params[i].name));
      largest_grad = std::max(largest_grad, norm(peer_grads.back()));
    }
    // The peer's float64 step, where it sent one (an AMP step: the peer computed in lower precision).
    const json* truth = dump.contains("truth") ? &dump.at("truth") : nullptr;
    // PyTorch's float32 step of the same input, weights and upstream gradient, where the dump holds
    // one: a float32 run (cpu, cuda) beyond the tolerance from the float64 step agrees when it is
    // within kFloat32Slack times PyTorch's own float32 distance from it. A fixed tolerance fails
    // correct blocks whose gradients cancel (a norm's bias before another norm: 1e-2 relative in
    // torchvision's R(2+1)D block, where PyTorch's float32 is as far off).
    const json* float32 =
        !amp && backend.name() != "reference" && dump.contains("float32") ? &dump.at("float32") : nullptr;
    const auto float32_of = [&](const char* section, const std::string& name) -> const json* {
      if (!float32 || !float32->contains(section) || !float32->at(section).contains(name)) return nullptr;
      return &float32->at(section).at(name);
    };
    const auto judge_step = [&](const std::string& name, const std::vector<double>& ours,
                                const std::vector<double>& peer, double floor, const json* exact,
                                const TensorDesc& desc, const json* peer_float32) {
      TensorAgreement a = judge(name, ours, peer, floor, tolerance, exact, desc);
      if (!a.ok && peer_float32) {
        const std::vector<double> theirs = dumped_values(*peer_float32, desc, name + " (float32 step)");
        a.ours_from_truth = a.rel_error;
        a.peer_from_truth = agree(name, theirs, peer, floor, tolerance).rel_error;
        a.truth_slack = kFloat32Slack;
        a.ok = a.rel_error <= std::max(tolerance, kFloat32Slack * *a.peer_from_truth);
      }
      r.tensors.push_back(std::move(a));
    };
    const auto truth_of = [&](const char* section, const std::string& name) -> const json* {
      if (!truth || !truth->contains(section) || !truth->at(section).contains(name)) return nullptr;
      return &truth->at(section).at(name);
    };
    judge_step("output", download(backend, y), dumped_values(dump.at("output"), g.desc(g.output), "output"), 0.0,
               truth && truth->contains("output") ? &truth->at("output") : nullptr, g.desc(g.output),
               float32 && float32->contains("output") ? &float32->at("output") : nullptr);
    // A gradient that is zero up to rounding (a conv bias before a batch norm) is judged against a
    // share of the row's largest: 1%, or 5% in an AMP step, whose half-precision output gradients
    // (rounded one way by PyTorch and the other by the reference) move such a cancelling sum by
    // up to about 1e-3 of the largest (1.4e-3 measured: MyBlock's separable shortcut bias under
    // amp_float16, channels_last, PyTorch 2.15 on an AMD EPYC).
    const double zero_floor = (amp ? 5e-2 : 1e-2) * largest_grad;
    for (size_t i = 0; i < g.params.size(); ++i)
      judge_step(g.params[i].name + " grad", download(backend, state.grads[i]), peer_grads[i], zero_floor,
                 truth_of("param_grads", g.params[i].name), g.params[i].desc,
                 float32_of("param_grads", g.params[i].name));
    for (size_t i = 0; i < g.buffers.size(); ++i)
      judge_step(g.buffers[i].name + " after", download(backend, state.buffers[i]),
                 dumped_values(dump.at("buffers_after").at(g.buffers[i].name), g.buffers[i].desc, g.buffers[i].name),
                 0.0, truth_of("buffers_after", g.buffers[i].name), g.buffers[i].desc,
                 float32_of("buffers_after", g.buffers[i].name));
    for (const TensorAgreement& t : r.tensors)
      if (!t.ok) r.status = DumpCheckStatus::mismatch;
    if (state.loss_scaler && state.loss_scaler->skipped_steps > 0) {
      r.status = DumpCheckStatus::mismatch;
      r.message = "inf or NaN gradients at the loss scale " + std::to_string(loss_scale);
    }
  } catch (const json::exception& e) {
    r.status = DumpCheckStatus::error;
    r.message = std::string("malformed dump: ") + e.what();
  } catch (const std::exception& e) {
    r.status = DumpCheckStatus::error;
    r.message = e.what();
  }
  return r;
}

}  // namespace convbench
