#include "backends/cpu/widened_calls.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/half_float.hpp"

namespace convbench::cpu {
namespace {

constexpr int64_t kWideningParallelElements = 1 << 15;

bool is_half(const Tensor* t) {
  return t != nullptr && t->defined() && (t->desc.dtype == DType::bfloat16 || t->desc.dtype == DType::float16);
}

void widen_into(const Tensor& half, Tensor& wide) {
  const int64_t n = half.desc.numel();
  const auto* src = half.data<uint16_t>();
  float* dst = wide.data<float>();
  if (half.desc.dtype == DType::bfloat16) {
#pragma omp parallel for simd schedule(static) if (n > kWideningParallelElements)
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i]);
  } else {
#pragma omp parallel for schedule(static) if (n > kWideningParallelElements)
    for (int64_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i]);
  }
}

void round_into(const Tensor& wide, Tensor& half) {
  const int64_t n = half.desc.numel();
  const float* src = wide.data<float>();
  auto* dst = half.data<uint16_t>();
  if (half.desc.dtype == DType::bfloat16) {
#pragma omp parallel for simd schedule(static) if (n > kWideningParallelElements)
    for (int64_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
  } else {
#pragma omp parallel for schedule(static) if (n > kWideningParallelElements)
    for (int64_t i = 0; i < n; ++i) dst[i] = float_to_half(src[i]);
  }
}

// The float32 stand-ins of one call's half-precision tensors; rounds the written ones back when
// the kernel is done. Tensors that are not half precision are passed through untouched.
class Widening {
 public:
  explicit Widening(Allocator& scratch) : scratch_(scratch) {}

  const Tensor* read(const Tensor* t) { return is_half(t) ? &copy_of(*t, true) : t; }
  Tensor* write(Tensor* t) {
    if (!is_half(t)) return t;
    Tensor& wide = copy_of(*t, false);
    written_.emplace_back(t, &wide);
    return &wide;
  }
  Tensor* read_write(Tensor* t) {
    if (!is_half(t)) return t;
    Tensor& wide = copy_of(*t, true);
    written_.emplace_back(t, &wide);
    return &wide;
  }
  // After the kernel: every written stand-in rounded into its tensor.
  void round_back() {
    for (auto& [half, wide] : written_) round_into(*wide, *half);
  }

 private:
  Tensor& copy_of(const Tensor& half, bool with_values) {
    TensorDesc desc = half.desc;
    desc.dtype = DType::float32;
    // Scratch, not a category of the step's memory: the category only labels this allocator's
    // own statistics.
    wide_.push_back(make_tensor(scratch_, desc, MemoryCategory::workspace));
    if (with_values) widen_into(half, wide_.back());
    return wide_.back();
  }

  Allocator& scratch_;
  std::deque<Tensor> wide_;  // stable addresses for the call's pointers
  std::vector<std::pair<Tensor*, Tensor*>> written_;
};

template <class T>
bool any_half(const std::vector<T*>& tensors) {
  return std::any_of(tensors.begin(), tensors.end(), [](const Tensor* t) { return is_half(t); });
}

// Whether any floating-point tensor the call reads or writes is stored in 16 bits.
bool has_half_precision_tensors(const ForwardCall& call) {
  return any_half(call.inputs) || any_half(call.params) || any_half(call.buffers) || is_half(call.output) ||
         any_half(call.aux);
}

bool has_half_precision_tensors(const BackwardCall& call) {
  return any_half(call.inputs) || is_half(call.output) || any_half(call.aux) || any_half(call.params) ||
         is_half(call.grad_output) || any_half(call.grad_inputs) || any_half(call.grad_params) ||
         any_half(call.buffers);
}

}  // namespace

void run_widened(const ForwardCall& call, Allocator& scratch, const std::function<void(const ForwardCall&)>& kernel) {
  if (!has_half_precision_tensors(call)) return kernel(call);
  Widening w(scratch);
  ForwardCall wide = call;
  for (auto& t : wide.inputs) t = w.read(t);
  for (auto& t : wide.params) t = w.read(t);
  for (auto& t : wide.buffers) t = w.read_write(t);  // running statistics: read and updated
  for (auto& t : wide.aux) t = w.write(t);
  wide.output = w.write(wide.output);
  kernel(wide);
  w.round_back();
}

void run_widened(const BackwardCall& call, Allocator& scratch, const std::function<void(const BackwardCall&)>& kernel) {
  if (!has_half_precision_tensors(call)) return kernel(call);
  Widening w(scratch);
  BackwardCall wide = call;
  for (auto& t : wide.inputs) t = w.read(t);
  wide.output = w.read(wide.output);
  for (auto& t : wide.aux) t = w.read(t);
  for (auto& t : wide.params) t = w.read(t);
  for (auto& t : wide.buffers) t = w.read(t);
  wide.grad_output = w.read(wide.grad_output);
  for (auto& t : wide.grad_inputs) t = w.write(t);
  for (auto& t : wide.grad_params) t = w.write(t);
  kernel(wide);
  w.round_back();
}

void widen_half_precision_calls(KernelTable& table, Allocator& scratch, std::initializer_list<OpKind> native) {
  for (OpKind kind : table.kinds()) {
    if (std::find(native.begin(), native.end(), kind) != native.end()) continue;
    const OpKernels inner = *table.find(kind);
    Allocator* s = &scratch;
    table.replace(kind, {[inner, s](const ForwardCall& call) { run_widened(call, *s, inner.forward); },
                         [inner, s](const BackwardCall& call) { run_widened(call, *s, inner.backward); }});
  }
}

}  // namespace convbench::cpu
