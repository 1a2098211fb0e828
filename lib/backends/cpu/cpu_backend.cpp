#include "backends/cpu/cpu_backend.hpp"

#include <cstring>
#include <stdexcept>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"

namespace convbench {
namespace {

template <class T>
T* at_or_null(const std::vector<T*>& v, size_t i) {
  return i < v.size() ? v[i] : nullptr;
}

const Tensor& need(const Tensor* t, const Op& op, const char* what) {
  if (t == nullptr) throw std::invalid_argument(op.name + ": cpu backend needs the " + what);
  return *t;
}

}  // namespace

CpuBackend::CpuBackend() : onednn_(std::make_unique<cpu::OneDnnOps>()) {}
CpuBackend::~CpuBackend() = default;

std::optional<std::string> CpuBackend::unsupported(const Graph& graph, const Op& op) const {
  const DType dtype = graph.desc(op.inputs.at(0)).dtype;
  if (dtype == DType::float32 || dtype == DType::tf32) return std::nullopt;
  return "cpu backend computes float32; use --device reference for float64/float16/bfloat16 (got " +
         std::string(to_string(dtype)) + ")";
}

int64_t CpuBackend::workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  if (cpu::is_own_depthwise_conv(graph, op)) return 0;
  return onednn_->workspace_bytes(graph, op, phase, training);
}

int64_t CpuBackend::primitives_created() const { return onednn_->primitives_created(); }

void CpuBackend::forward(const ForwardCall& call) {
  const Op& op = call.op;
  const Tensor& x = need(at_or_null(call.inputs, 0), op, "input");
  Tensor& y = *call.output;
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose:
      if (cpu::is_own_depthwise_conv(call.graph, op))
        cpu::depthwise_conv_forward(call);
      else
        onednn_->conv_forward(call);
      return;
    case OpKind::batch_norm:
      if (cpu::batch_norm_on_onednn(x.desc, Phase::forward))
        onednn_->batch_norm_forward(call);
      else if (call.training)
        cpu::batch_norm_forward_training(call);
      else
        cpu::batch_norm_forward_inference(call);
      return;
    case OpKind::group_norm: {
      const size_t stats = static_cast<size_t>(x.desc.batch() * op.norm.groups);
      float* mean = nullptr;
      float* rstd = nullptr;
      if (call.aux.size() >= 2) {
        mean = call.aux[0]->data<float>();
        rstd = call.aux[1]->data<float>();
      } else {  // inference keeps no statistics; N * groups floats are ours to hold
        group_stats_.resize(2 * stats);
        mean = group_stats_.data();
        rstd = group_stats_.data() + stats;
      }
      cpu::group_norm_forward(x, *call.params.at(0), *call.params.at(1), y, mean, rstd, op.norm.groups, op.norm.eps);
      return;
    }
    case OpKind::relu: cpu::relu_forward(x, y); return;
    case OpKind::leaky_relu: cpu::leaky_relu_forward(x, y, static_cast<float>(op.negative_slope)); return;
    case OpKind::dropout:
      if (!call.training) {
        cpu::copy(x, y);  // the executor aliases instead; called anyway, it is the identity
        return;
      }
      cpu::dropout_forward(x, y, at_or_null(call.aux, 0), call.seed, static_cast<float>(op.dropout_p));
      return;
    case OpKind::add: cpu::add(x, need(at_or_null(call.inputs, 1), op, "second operand"), y); return;
    case OpKind::sub: cpu::sub(x, need(at_or_null(call.inputs, 1), op, "second operand"), y); return;
    case OpKind::concat: cpu::concat_forward(call.inputs, y); return;
    case OpKind::max_pool: cpu::max_pool_forward(x, y, at_or_null(call.aux, 0), op.pool); return;
    case OpKind::avg_pool: cpu::avg_pool_forward(x, y, op.pool); return;
    case OpKind::upsample: cpu::upsample_forward(x, y, op.upsample_scale); return;
  }
  throw std::invalid_argument(op.name + ": unknown op kind");
}

void CpuBackend::backward(const BackwardCall& call) {
  const Op& op = call.op;
  const Tensor& dy = need(call.grad_output, op, "grad_output");
  Tensor* dx = at_or_null(call.grad_inputs, 0);
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose:
      if (cpu::is_own_depthwise_conv(call.graph, op))
        cpu::depthwise_conv_backward(call);
      else
        onednn_->conv_backward(call);
      return;
    case OpKind::batch_norm: cpu::batch_norm_backward(call); return;
    case OpKind::group_norm: {
      const Tensor& x = need(at_or_null(call.inputs, 0), op, "saved input");
      const float* mean = nullptr;
      const float* rstd = nullptr;
      if (call.aux.size() >= 2) {
        mean = call.aux[0]->data<float>();
        rstd = call.aux[1]->data<float>();
      } else {  // GN has no running statistics: the saved input gives the same ones again
        const size_t stats = static_cast<size_t>(x.desc.batch() * op.norm.groups);
        group_stats_.resize(2 * stats);
        cpu::group_norm_stats(x, op.norm.groups, op.norm.eps, group_stats_.data(), group_stats_.data() + stats);
        mean = group_stats_.data();
        rstd = group_stats_.data() + stats;
      }
      cpu::group_norm_backward(x, mean, rstd, *call.params.at(0), dy, dx, *call.grad_params.at(0),
                               *call.grad_params.at(1), op.norm.groups);
      return;
    }
    case OpKind::relu:
      if (dx) cpu::relu_backward(need(call.output, op, "saved output"), dy, *dx);
      return;
    case OpKind::leaky_relu:
      if (dx)
        cpu::leaky_relu_backward(need(at_or_null(call.inputs, 0), op, "saved input"), dy, *dx,
                                 static_cast<float>(op.negative_slope));
      return;
    case OpKind::dropout:
      if (dx)
        cpu::dropout_backward(need(at_or_null(call.aux, 0), op, "saved mask"), dy, *dx,
                              static_cast<float>(op.dropout_p));
      return;
    case OpKind::add:  // normally both gradients are aliases of dy and nothing is passed
      for (Tensor* g : call.grad_inputs)
        if (g) cpu::copy(dy, *g);
      return;
    case OpKind::sub:
      if (dx) cpu::copy(dy, *dx);  // normally an alias of dy
      if (Tensor* db = at_or_null(call.grad_inputs, 1)) cpu::negate(dy, *db);
      return;
    case OpKind::concat: {
      std::vector<int64_t> channels;
      for (int v : op.inputs) channels.push_back(call.graph.desc(v).channels());
      cpu::concat_backward(dy, call.grad_inputs, channels);
      return;
    }
    case OpKind::max_pool:
      if (dx) cpu::max_pool_backward(at_or_null(call.aux, 0), at_or_null(call.inputs, 0), dy, *dx, op.pool);
      return;
    case OpKind::avg_pool:
      if (dx) cpu::avg_pool_backward(dy, *dx, op.pool);
      return;
    case OpKind::upsample:
      if (dx) cpu::upsample_backward(dy, *dx, op.upsample_scale);
      return;
  }
  throw std::invalid_argument(op.name + ": unknown op kind");
}

void CpuBackend::accumulate(Tensor& dst, const Tensor& src) { cpu::accumulate(dst, src); }

void CpuBackend::add(Tensor& out, const Tensor& a, const Tensor& b) { cpu::add(a, b, out); }

void CpuBackend::copy_from_host(Tensor& dst, const void* src) {
  std::memcpy(dst.raw(), src, static_cast<size_t>(dst.desc.bytes()));
}

void CpuBackend::copy_to_host(const Tensor& src, void* dst) {
  std::memcpy(dst, src.raw(), static_cast<size_t>(src.desc.bytes()));
}

}  // namespace convbench
