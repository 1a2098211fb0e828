// Batch norm in our own loops (on channel_sums / channel_affine): the forward for channels_first
// tensors, where oneDNN 2.6's only plain nchw/ncdhw implementation (ncsp_bnorm) measured
// 200-500 ms per training forward on the seed block's 6x32x32^3 tensor and 25-40 ms per
// inference forward on ResNet's 8x256x56^2 (these loops: a few ms), and the backward for both
// layouts, whose sums of dy and dy * (x - mean) must be accurate: oneDNN's backward sums in
// float and lost 1% of grad-beta to cancellation in a bottleneck block, where PyTorch (double
// accumulation, as here) agrees with float64 to 1e-6. batch_norm's loops also take bfloat16
// activations (mixed precision), with float32 parameters and statistics; batch_norm_act's
// reach it widened (widened_calls.hpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"

namespace convbench::cpu {
namespace {

// Per-channel values repeated for every sample: channel_affine takes (n, c) coefficients.
std::vector<float> per_sample(const std::vector<float>& per_channel, int64_t batch) {
  std::vector<float> out;
  out.reserve(per_channel.size() * static_cast<size_t>(batch));
  for (int64_t n = 0; n < batch; ++n) out.insert(out.end(), per_channel.begin(), per_channel.end());
  return out;
}

// Sums over samples of per (sample, channel) sums.
std::vector<double> over_batch(const std::vector<double>& per_plane, int64_t batch, int64_t channels) {
  std::vector<double> out(static_cast<size_t>(channels), 0.0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      out[static_cast<size_t>(c)] += per_plane[static_cast<size_t>(n * channels + c)];
  return out;
}

}  // namespace

void finish_batch_norm_statistics(const ForwardCall& call, const std::vector<double>& variance) {
  const TensorDesc& in = call.inputs.at(0)->desc;
  const float* mean = call.aux.at(0)->data<float>();
  float* invstd = call.aux.at(1)->data<float>();
  float* running_mean = call.buffers.at(0)->data<float>();
  float* running_var = call.buffers.at(1)->data<float>();
  const double m = call.op.norm.momentum;
  const double count = static_cast<double>(in.batch() * in.spatial_size());
  const double unbias = count > 1 ? count / (count - 1) : 1.0;
  for (size_t c = 0; c < variance.size(); ++c) {
    invstd[c] = static_cast<float>(1.0 / std::sqrt(variance[c] + call.op.norm.eps));
    running_mean[c] = static_cast<float>((1 - m) * running_mean[c] + m * mean[c]);
    running_var[c] = static_cast<float>((1 - m) * running_var[c] + m * variance[c] * unbias);
  }
}

namespace {

// The storage a batch norm's activations have: float32 (tf32 is float32 here) or, under mixed
// precision, bfloat16; its parameters, statistics and their gradients are float32 in both.
template <class F>
void with_activation_storage(const Op& op, DType dtype, F f) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: f(float{}); return;
    case DType::bfloat16: f(BFloat16{}); return;
    default: throw std::logic_error(op.name + ": cpu batch norm has no " + std::string(to_string(dtype)) + " kernel");
  }
}

template <class T>
void batch_norm_forward_training_of(const ForwardCall& call) {
  const TensorDesc& d = call.inputs.at(0)->desc;
  const int64_t batch = d.batch(), channels = d.channels();
  const auto planes = static_cast<size_t>(batch * channels);
  const double count = static_cast<double>(batch * d.spatial_size());
  const T* x = call.inputs[0]->data<T>();
  const float* gamma = call.params.at(0)->data<float>();
  const float* beta = call.params.at(1)->data<float>();
  float* mean = call.aux.at(0)->data<float>();
  // mean, then the variance as the mean square deviation from it (two passes, as PyTorch)
  std::vector<double> s1(planes), s2(planes);
  const std::vector<float> zeros(planes, 0.f);
  channel_sums(d, x, zeros.data(), nullptr, nullptr, s1.data(), nullptr);
  std::vector<double> sums = over_batch(s1, batch, channels);
  std::vector<float> mean_c(static_cast<size_t>(channels));
  for (size_t c = 0; c < mean_c.size(); ++c) mean[c] = mean_c[c] = static_cast<float>(sums[c] / count);
  const std::vector<float> shift = per_sample(mean_c, batch);
  channel_sums(d, x, shift.data(), x, shift.data(), s1.data(), s2.data());
  std::vector<double> variance = over_batch(s2, batch, channels);
  for (double& v : variance) v /= count;
  // y = (x - mean) * gamma * invstd + beta
  std::vector<float> scale(static_cast<size_t>(channels)), bias(beta, beta + channels);
  for (size_t c = 0; c < scale.size(); ++c)
    scale[c] = static_cast<float>(gamma[c] / std::sqrt(variance[c] + call.op.norm.eps));
  channel_affine(d, nullptr, nullptr, x, shift.data(), per_sample(scale, batch).data(), per_sample(bias, batch).data(),
                 call.output->data<T>());
  finish_batch_norm_statistics(call, variance);
}

template <class T>
void batch_norm_forward_inference_of(const ForwardCall& call) {
  const TensorDesc& d = call.inputs.at(0)->desc;
  const int64_t batch = d.batch(), channels = d.channels();
  const float* gamma = call.params.at(0)->data<float>();
  const float* beta = call.params.at(1)->data<float>();
  const float* running_mean = call.buffers.at(0)->data<float>();
  const float* running_var = call.buffers.at(1)->data<float>();
  std::vector<float> scale(static_cast<size_t>(channels)), bias(beta, beta + channels);
  for (size_t c = 0; c < scale.size(); ++c)
    scale[c] = static_cast<float>(gamma[c] / std::sqrt(static_cast<double>(running_var[c]) + call.op.norm.eps));
  channel_affine(d, nullptr, nullptr, call.inputs[0]->data<T>(),
                 per_sample(std::vector<float>(running_mean, running_mean + channels), batch).data(),
                 per_sample(scale, batch).data(), per_sample(bias, batch).data(), call.output->data<T>());
}

template <class T>
void batch_norm_backward_of(const BackwardCall& call) {
  const TensorDesc& d = call.inputs.at(0)->desc;
  const int64_t batch = d.batch(), channels = d.channels();
  const auto planes = static_cast<size_t>(batch * channels);
  const double count = static_cast<double>(batch * d.spatial_size());
  const T* x = call.inputs[0]->data<T>();
  const T* dy = call.grad_output->data<T>();
  const float* mean = call.aux.at(0)->data<float>();
  const float* invstd = call.aux.at(1)->data<float>();
  const float* gamma = call.params.at(0)->data<float>();
  // sum(dy) and sum(dy * (x - mean)) per channel
  const std::vector<float> zeros(planes, 0.f), shift = per_sample(std::vector<float>(mean, mean + channels), batch);
  std::vector<double> s1(planes), s2(planes);
  channel_sums(d, dy, zeros.data(), x, shift.data(), s1.data(), s2.data());
  const std::vector<double> sum_dy = over_batch(s1, batch, channels), sum_dy_xmu = over_batch(s2, batch, channels);
  float* dgamma = call.grad_params.at(0)->data<float>();
  float* dbeta = call.grad_params.at(1)->data<float>();
  for (size_t c = 0; c < sum_dy.size(); ++c) {
    dgamma[c] = static_cast<float>(sum_dy_xmu[c] * invstd[c]);
    dbeta[c] = static_cast<float>(sum_dy[c]);
  }
  Tensor* dx = call.grad_inputs.at(0);
  if (dx == nullptr) return;
  // PyTorch's formula: dx = gamma * invstd * (dy - mean(dy) - (x - mean) * invstd^2 * mean(dy * (x - mean)))
  //                       = a * dy - b * (x - mean) - a * mean(dy)
  std::vector<float> a(static_cast<size_t>(channels)), minus_b(a.size()), offset(a.size());
  for (size_t c = 0; c < a.size(); ++c) {
    const double is = invstd[c], ac = gamma[c] * is;
    a[c] = static_cast<float>(ac);
    minus_b[c] = static_cast<float>(-ac * is * is * (sum_dy_xmu[c] / count));
    offset[c] = static_cast<float>(-ac * (sum_dy[c] / count));
  }
  channel_affine(d, dy, per_sample(a, batch).data(), x, shift.data(), per_sample(minus_b, batch).data(),
                 per_sample(offset, batch).data(), dx->data<T>());
}

}  // namespace

void batch_norm_forward_training(const ForwardCall& call) {
  with_activation_storage(call.op, call.inputs.at(0)->desc.dtype,
                          [&](auto t) { batch_norm_forward_training_of<decltype(t)>(call); });
}

void batch_norm_forward_inference(const ForwardCall& call) {
  with_activation_storage(call.op, call.inputs.at(0)->desc.dtype,
                          [&](auto t) { batch_norm_forward_inference_of<decltype(t)>(call); });
}

void batch_norm_backward(const BackwardCall& call) {
  with_activation_storage(call.op, call.inputs.at(0)->desc.dtype,
                          [&](auto t) { batch_norm_backward_of<decltype(t)>(call); });
}

namespace {

// batch_norm_act's backward works from the saved output y: per element z = y (y > 0) or
// y / slope, xhat = (z - beta) / gamma and dz = dy (y > 0) or dy * slope, computed on the fly in
// both passes (no tensor-sized scratch).
struct AbnElement {
  float slope, inv_slope;
  // With a 0/1 factor instead of selects, which GCC keeps as branches (-ftrapping-math): the
  // signs of y are random, and a mispredicted branch per element cost 20x the loop's time.
  void operator()(float y, float g, float beta, float inv_gamma, float& xhat, float& dz) const {
    const float positive = static_cast<float>(y > 0.f);
    xhat = (y * (positive + (1.f - positive) * inv_slope) - beta) * inv_gamma;
    dz = g * (positive + (1.f - positive) * slope);
  }
};

}  // namespace

void batch_norm_act_forward(const ForwardCall& call) {  // the output may be the input's tensor
  if (call.training)
    batch_norm_forward_training(call);
  else
    batch_norm_forward_inference(call);
  leaky_relu_forward(*call.output, *call.output, static_cast<float>(call.op.negative_slope));
}

void batch_norm_act_backward(const BackwardCall& call) {
  const Tensor& yt = need(call.output, call.op, "saved output");
  const TensorDesc& d = yt.desc;
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  const int64_t planes = batch * channels;
  const bool last = d.layout == Layout::channels_last;
  const double count = static_cast<double>(batch * spatial);
  const float* y = yt.data<float>();
  const float* dy = need(call.grad_output, call.op, "grad_output").data<float>();
  const float* invstd = need(at_or_null(call.aux, 1), call.op, "saved invstd").data<float>();
  const float* gamma = need(at_or_null(call.params, 0), call.op, "weight").data<float>();
  const float* beta = need(at_or_null(call.params, 1), call.op, "bias").data<float>();
  const AbnElement element{static_cast<float>(call.op.negative_slope),
                           static_cast<float>(1.0 / call.op.negative_slope)};
  std::vector<float> inv_gamma(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) inv_gamma[static_cast<size_t>(c)] = 1.f / gamma[c];
  // Per (sample, channel) plane: sum(dz) and sum(dz * xhat), in float over runs of 1024 positions
  // and in double across them (as channel_sums, for the same cancellation). channels_first planes
  // are contiguous; channels_last rows of C channels are summed per thread and merged.
  std::vector<double> s1(static_cast<size_t>(planes), 0.0), s2(s1.size(), 0.0);
  if (!last) {
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t c = p % channels;
      const float b = beta[c], ig = inv_gamma[static_cast<size_t>(c)];
      const float* yp = y + p * spatial;
      const float* gp = dy + p * spatial;
      double t1 = 0.0, t2 = 0.0;
      for (int64_t start = 0; start < spatial; start += 1024) {
        const int64_t end = std::min(spatial, start + 1024);
        float f1 = 0.f, f2 = 0.f;
#pragma omp simd reduction(+ : f1, f2)
        for (int64_t sp = start; sp < end; ++sp) {
          float xhat, dz;
          element(yp[sp], gp[sp], b, ig, xhat, dz);
          f1 += dz;
          f2 += dz * xhat;
        }
        t1 += f1;
        t2 += f2;
      }
      s1[static_cast<size_t>(p)] = t1;
      s2[static_cast<size_t>(p)] = t2;
    }
  } else {
#pragma omp parallel
    {
      std::vector<double> t1(s1.size(), 0.0), t2(s2.size(), 0.0);
#pragma omp for schedule(static)
      for (int64_t row = 0; row < batch * spatial; ++row) {
        const int64_t k = (row / spatial) * channels;
        for (int64_t c = 0; c < channels; ++c) {
          float xhat, dz;
          element(y[row * channels + c], dy[row * channels + c], beta[c], inv_gamma[static_cast<size_t>(c)], xhat, dz);
          t1[static_cast<size_t>(k + c)] += dz;
          t2[static_cast<size_t>(k + c)] += static_cast<double>(dz) * xhat;
        }
      }
#pragma omp critical
      for (size_t i = 0; i < s1.size(); ++i) {
        s1[i] += t1[i];
        s2[i] += t2[i];
      }
    }
  }
  std::vector<double> sum_dz(static_cast<size_t>(channels), 0.0), sum_dz_xhat(sum_dz.size(), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    sum_dz[static_cast<size_t>(p % channels)] += s1[static_cast<size_t>(p)];
    sum_dz_xhat[static_cast<size_t>(p % channels)] += s2[static_cast<size_t>(p)];
  }
  if (Tensor* dgamma = at_or_null(call.grad_params, 0))
    for (int64_t c = 0; c < channels; ++c) dgamma->data<float>()[c] = static_cast<float>(sum_dz_xhat[c]);
  if (Tensor* dbeta = at_or_null(call.grad_params, 1))
    for (int64_t c = 0; c < channels; ++c) dbeta->data<float>()[c] = static_cast<float>(sum_dz[c]);
  Tensor* dx = at_or_null(call.grad_inputs, 0);
  if (dx == nullptr) return;
  // dx = gamma * invstd * (dz - mean(dz) - xhat * mean(dz * xhat)) = a * dz - b * xhat - o
  std::vector<float> a(static_cast<size_t>(channels)), b(a.size()), o(a.size());
  for (int64_t c = 0; c < channels; ++c) {
    const double ac = static_cast<double>(gamma[c]) * invstd[c];
    a[static_cast<size_t>(c)] = static_cast<float>(ac);
    b[static_cast<size_t>(c)] = static_cast<float>(ac * sum_dz_xhat[c] / count);
    o[static_cast<size_t>(c)] = static_cast<float>(ac * sum_dz[c] / count);
  }
  float* out = dx->data<float>();
  if (!last) {
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const auto c = static_cast<size_t>(p % channels);
      const float ac = a[c], bc = b[c], oc = o[c], be = beta[c], ig = inv_gamma[c];
      const float* yp = y + p * spatial;
      const float* gp = dy + p * spatial;
      float* op = out + p * spatial;
#pragma omp simd
      for (int64_t sp = 0; sp < spatial; ++sp) {
        float xhat, dz;
        element(yp[sp], gp[sp], be, ig, xhat, dz);
        op[sp] = ac * dz - bc * xhat - oc;
      }
    }
  } else {
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < batch * spatial; ++row) {
      const int64_t base = row * channels;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        float xhat, dz;
        element(y[base + c], dy[base + c], beta[c], inv_gamma[static_cast<size_t>(c)], xhat, dz);
        out[base + c] = a[static_cast<size_t>(c)] * dz - b[static_cast<size_t>(c)] * xhat - o[static_cast<size_t>(c)];
      }
    }
  }
}

void register_batch_norm_kernels(KernelTable& table, CpuKernelContext context) {
  OneDnnOps& onednn = context.onednn;
  table.add(OpKind::batch_norm, {[&onednn](const ForwardCall& call) {
                                   const Tensor& x = need(at_or_null(call.inputs, 0), call.op, "input");
                                   if (batch_norm_on_onednn(x.desc, Phase::forward))
                                     onednn.batch_norm_forward(call);
                                   else if (call.training)
                                     batch_norm_forward_training(call);
                                   else
                                     batch_norm_forward_inference(call);
                                 },
                                 [](const BackwardCall& call) { batch_norm_backward(call); }});
  table.add(OpKind::batch_norm_act, {batch_norm_act_forward, batch_norm_act_backward});
}

}  // namespace convbench::cpu
