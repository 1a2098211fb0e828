// Concat along channels and slice along channels, forward and backward, in both layouts.
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

// Both layouts store concat's operands as runs: channels_first as one run of C_i * S per sample,
// channels_last as one run of C_i per (sample, position). `outer` runs of each operand alternate
// in the output.
struct Runs {
  int64_t outer = 0;
  std::vector<int64_t> length, offset;  // per operand, within one output run
  int64_t total = 0;
};

Runs concat_runs(const TensorDesc& out, const std::vector<int64_t>& channels) {
  const bool last = out.layout == Layout::channels_last;
  const int64_t s = out.spatial_size();
  Runs r;
  r.outer = last ? out.batch() * s : out.batch();
  for (int64_t c : channels) {
    r.offset.push_back(r.total);
    r.length.push_back(last ? c : c * s);
    r.total += r.length.back();
  }
  return r;
}

// Channels [start, start + part's channels) of `whole`, copied to `part` (to_part) or back into
// `whole`: in both layouts a run per sample (channels_first) or per position (channels_last).
void copy_channel_slice(const Tensor& whole, const Tensor& part, int64_t start, bool to_part) {
  const bool last = whole.desc.layout == Layout::channels_last;
  const int64_t s = whole.desc.spatial_size();
  const int64_t runs = last ? whole.desc.batch() * s : whole.desc.batch();
  const int64_t run = last ? part.desc.channels() : part.desc.channels() * s;
  const int64_t whole_run = last ? whole.desc.channels() : whole.desc.channels() * s;
  const int64_t offset = last ? start : start * s;
  float* wp = whole.data<float>();  // written only when !to_part
  float* pp = part.data<float>();   // written only when to_part
#pragma omp parallel for schedule(static) if (part.desc.numel() > (1 << 15))
  for (int64_t r = 0; r < runs; ++r) {
    float* w = wp + r * whole_run + offset;
    float* p = pp + r * run;
    std::memcpy(to_part ? p : w, to_part ? w : p, static_cast<size_t>(run) * sizeof(float));
  }
}

}  // namespace

void concat_forward(const std::vector<const Tensor*>& xs, Tensor& y) {
  std::vector<int64_t> channels;
  for (const Tensor* x : xs) channels.push_back(x->desc.channels());
  const Runs r = concat_runs(y.desc, channels);
  float* yp = y.data<float>();
#pragma omp parallel for schedule(static) if (y.desc.numel() > (1 << 15))
  for (int64_t o = 0; o < r.outer; ++o)
    for (size_t i = 0; i < xs.size(); ++i)
      std::memcpy(yp + o * r.total + r.offset[i], xs[i]->data<float>() + o * r.length[i],
                  static_cast<size_t>(r.length[i]) * sizeof(float));
}

void concat_backward(const Tensor& dy, const std::vector<Tensor*>& dxs, const std::vector<int64_t>& channels) {
  const Runs r = concat_runs(dy.desc, channels);
  const float* gp = dy.data<float>();
#pragma omp parallel for schedule(static) if (dy.desc.numel() > (1 << 15))
  for (int64_t o = 0; o < r.outer; ++o)
    for (size_t i = 0; i < dxs.size(); ++i)
      if (dxs[i] != nullptr)
        std::memcpy(dxs[i]->data<float>() + o * r.length[i], gp + o * r.total + r.offset[i],
                    static_cast<size_t>(r.length[i]) * sizeof(float));
}

void register_concat_kernels(KernelTable& table) {
  // slice copies its channels; backward zeroes the input's gradient and writes them back.
  table.add(OpKind::slice, {[](const ForwardCall& call) {
                              copy_channel_slice(need(at_or_null(call.inputs, 0), call.op, "input"), *call.output,
                                                 call.op.slice.start, true);
                            },
                            [](const BackwardCall& call) {
                              Tensor* dx = at_or_null(call.grad_inputs, 0);
                              if (dx == nullptr) return;
                              std::memset(dx->raw(), 0, static_cast<size_t>(dx->desc.bytes()));
                              copy_channel_slice(*dx, need(call.grad_output, call.op, "grad_output"),
                                                 call.op.slice.start, false);
                            }});
  table.add(OpKind::concat, {[](const ForwardCall& call) { concat_forward(call.inputs, *call.output); },
                             [](const BackwardCall& call) {
                               std::vector<int64_t> channels;
                               for (int v : call.op.inputs) channels.push_back(call.graph.desc(v).channels());
                               concat_backward(need(call.grad_output, call.op, "grad_output"), call.grad_inputs,
                                               channels);
                             }});
}

}  // namespace convbench::cpu
