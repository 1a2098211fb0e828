// Batch norm in our own loops: the forward for channels_first tensors, where oneDNN 2.6's only
// plain nchw/ncdhw implementation (ncsp_bnorm) measured 200-500 ms per training forward on the
// seed block's 6x32x32^3 tensor and 25-40 ms per inference forward on ResNet's 8x256x56^2 (these
// loops: a few ms), and the backward for both layouts, which must sum dy and dy * (x - mean) over
// N and space accurately: oneDNN's backward sums in float and lost 1% of grad-beta to
// cancellation in a bottleneck block. Like PyTorch's CPU kernels (double accumulation), we sum in
// float within short chunks, which vectorise, and in double across them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

constexpr int64_t kChunk = 1024;  // float partial sums stay accurate over this many terms

double sum(const float* x, int64_t n) {
  double total = 0.0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    float acc = 0.f;
#pragma omp simd reduction(+ : acc)
    for (int64_t i = start; i < end; ++i) acc += x[i];
    total += acc;
  }
  return total;
}

double squared_deviation(const float* x, int64_t n, float mean) {
  double total = 0.0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    float acc = 0.f;
#pragma omp simd reduction(+ : acc)
    for (int64_t i = start; i < end; ++i) acc += (x[i] - mean) * (x[i] - mean);
    total += acc;
  }
  return total;
}

// Adds sum(dy) and sum(dy * (x - mean)) over one contiguous row to s1, s2.
void add_grad_sums(const float* x, const float* dy, int64_t n, float mean, double& s1, double& s2) {
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    float a1 = 0.f, a2 = 0.f;
#pragma omp simd reduction(+ : a1, a2)
    for (int64_t i = start; i < end; ++i) {
      a1 += dy[i];
      a2 += dy[i] * (x[i] - mean);
    }
    s1 += a1;
    s2 += a2;
  }
}

// Per-channel sum(dy) and sum(dy * (x - mean)) over N and spatial, both layouts.
void channel_grad_sums(const TensorDesc& d, const float* x, const float* dy, const float* mean,
                       std::vector<double>& s1, std::vector<double>& s2) {
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  s1.assign(static_cast<size_t>(channels), 0.0);
  s2.assign(static_cast<size_t>(channels), 0.0);
  if (d.layout == Layout::channels_first) {
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < channels; ++c) {
      double a = 0.0, b = 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t row = (n * channels + c) * spatial;
        add_grad_sums(x + row, dy + row, spatial, mean[c], a, b);
      }
      s1[static_cast<size_t>(c)] = a;
      s2[static_cast<size_t>(c)] = b;
    }
    return;
  }
  // channels_last: rows of C; each thread sums chunks of rows in float, then in double.
  const int64_t rows = batch * spatial;
#pragma omp parallel
  {
    std::vector<double> t1(static_cast<size_t>(channels), 0.0), t2(t1.size(), 0.0);
    std::vector<float> f1(t1.size()), f2(t1.size());
#pragma omp for schedule(static)
    for (int64_t r0 = 0; r0 < rows; r0 += kChunk) {
      std::fill(f1.begin(), f1.end(), 0.f);
      std::fill(f2.begin(), f2.end(), 0.f);
      for (int64_t r = r0; r < std::min(rows, r0 + kChunk); ++r) {
        const float* xr = x + r * channels;
        const float* gr = dy + r * channels;
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) {
          f1[static_cast<size_t>(c)] += gr[c];
          f2[static_cast<size_t>(c)] += gr[c] * (xr[c] - mean[c]);
        }
      }
      for (size_t c = 0; c < t1.size(); ++c) {
        t1[c] += f1[c];
        t2[c] += f2[c];
      }
    }
#pragma omp critical
    for (size_t c = 0; c < t1.size(); ++c) {
      s1[c] += t1[c];
      s2[c] += t2[c];
    }
  }
}

}  // namespace

namespace {

void forward_channels_first(const TensorDesc& d, const float* x, const float* gamma, const float* beta,
                            double eps, float* y, float* mean, double* variance) {
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  const double count = static_cast<double>(batch * spatial);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < channels; ++c) {
    double s = 0.0;
    for (int64_t n = 0; n < batch; ++n) s += sum(x + (n * channels + c) * spatial, spatial);
    const auto m = static_cast<float>(s / count);
    double sq = 0.0;
    for (int64_t n = 0; n < batch; ++n) sq += squared_deviation(x + (n * channels + c) * spatial, spatial, m);
    const double var = sq / count;
    mean[c] = m;
    variance[c] = var;
    // y = (x - mean) * invstd * gamma + beta
    const auto scale = static_cast<float>(gamma[c] / std::sqrt(var + eps));
    const float shift = beta[c];
    for (int64_t n = 0; n < batch; ++n) {
      const float* xr = x + (n * channels + c) * spatial;
      float* yr = y + (n * channels + c) * spatial;
#pragma omp simd
      for (int64_t i = 0; i < spatial; ++i) yr[i] = (xr[i] - m) * scale + shift;
    }
  }
}

void backward(const TensorDesc& d, const float* x, const float* dy, const float* mean,
              const float* invstd, const float* gamma, float* dx, float* dgamma, float* dbeta) {
  std::vector<double> s1, s2;
  channel_grad_sums(d, x, dy, mean, s1, s2);
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  for (size_t c = 0; c < s1.size(); ++c) {
    dgamma[c] = static_cast<float>(s2[c] * invstd[c]);
    dbeta[c] = static_cast<float>(s1[c]);
  }
  if (dx == nullptr) return;
  // PyTorch's formula: dx = gamma * invstd * (dy - mean(dy) - (x - mean) * invstd^2 * mean(dy * (x - mean)))
  const double count = static_cast<double>(batch * spatial);
  if (d.layout != Layout::channels_first) {
    std::vector<float> a(s1.size()), b(s1.size()), mdy(s1.size());
    for (size_t c = 0; c < s1.size(); ++c) {
      const double is = invstd[c];
      a[c] = static_cast<float>(gamma[c] * is);
      b[c] = static_cast<float>(gamma[c] * is * is * is * (s2[c] / count));
      mdy[c] = static_cast<float>(s1[c] / count);
    }
    const int64_t rows = batch * spatial;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * channels;
      const float* gr = dy + r * channels;
      float* dr = dx + r * channels;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) dr[c] = a[c] * (gr[c] - mdy[c]) - b[c] * (xr[c] - mean[c]);
    }
    return;
  }
#pragma omp parallel for schedule(static) collapse(2)
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const double is = invstd[c];
      const auto a = static_cast<float>(gamma[c] * is);
      const auto b = static_cast<float>(gamma[c] * is * is * is * (s2[static_cast<size_t>(c)] / count));
      const auto mdy = static_cast<float>(s1[static_cast<size_t>(c)] / count);
      const float m = mean[c];
      const int64_t row = (n * channels + c) * spatial;
      const float* xr = x + row;
      const float* gr = dy + row;
      float* dr = dx + row;
#pragma omp simd
      for (int64_t i = 0; i < spatial; ++i) dr[i] = a * (gr[i] - mdy) - b * (xr[i] - m);
    }
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

void batch_norm_forward_inference(const ForwardCall& call) {
  const TensorDesc& d = call.inputs.at(0)->desc;
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  const float* x = call.inputs[0]->data<float>();
  const float* gamma = call.params.at(0)->data<float>();
  const float* beta = call.params.at(1)->data<float>();
  const float* running_mean = call.buffers.at(0)->data<float>();
  const float* running_var = call.buffers.at(1)->data<float>();
  float* y = call.output->data<float>();
#pragma omp parallel for schedule(static) collapse(2)
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const auto scale = static_cast<float>(gamma[c] / std::sqrt(static_cast<double>(running_var[c]) + call.op.norm.eps));
      const float shift = beta[c], m = running_mean[c];
      const float* xr = x + (n * channels + c) * spatial;
      float* yr = y + (n * channels + c) * spatial;
#pragma omp simd
      for (int64_t i = 0; i < spatial; ++i) yr[i] = (xr[i] - m) * scale + shift;
    }
}

void batch_norm_forward_training(const ForwardCall& call) {
  const TensorDesc& d = call.inputs.at(0)->desc;
  std::vector<double> variance(static_cast<size_t>(d.channels()));
  forward_channels_first(d, call.inputs[0]->data<float>(), call.params.at(0)->data<float>(),
                         call.params.at(1)->data<float>(), call.op.norm.eps, call.output->data<float>(),
                         call.aux.at(0)->data<float>(), variance.data());
  finish_batch_norm_statistics(call, variance);
}

void batch_norm_backward(const BackwardCall& call) {
  const Tensor* dx = call.grad_inputs.at(0);
  backward(call.inputs.at(0)->desc, call.inputs[0]->data<float>(), call.grad_output->data<float>(),
           call.aux.at(0)->data<float>(), call.aux.at(1)->data<float>(), call.params.at(0)->data<float>(),
           dx ? dx->data<float>() : nullptr, call.grad_params.at(0)->data<float>(),
           call.grad_params.at(1)->data<float>());
}

}  // namespace convbench::cpu
