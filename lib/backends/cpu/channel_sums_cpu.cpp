// The two passes batch norm and group norm are made of, for both layouts: per (sample, channel)
// sums over positions, and a per (sample, channel) affine map applied to every element. Sums
// run in float within short chunks (which vectorise) and in double across them, as PyTorch's
// CPU kernels accumulate in double: the norms' backward sums cancel, and float sums over
// hundreds of thousands of elements would lose digits that the gradients need. Tensors are float32
// or, under mixed precision, bfloat16 (read as float, results rounded once).
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"
#include "runtime/half_float.hpp"

namespace convbench::cpu {
namespace {

constexpr int64_t kChunk = 1024;  // float partial sums stay accurate over this many terms

template <class T>
void channel_sums_of(const TensorDesc& d, const T* a, const float* sa, const T* b, const float* sb, double* s1,
                     double* s2) {
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  const int64_t planes = batch * channels;
  if (d.layout == Layout::channels_first) {
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const T* ar = a + p * spatial;
      const T* br = b ? b + p * spatial : nullptr;
      const float ka = sa[p], kb = br ? sb[p] : 0.f;
      double t1 = 0.0, t2 = 0.0;
      for (int64_t start = 0; start < spatial; start += kChunk) {
        const int64_t end = std::min(spatial, start + kChunk);
        float f1 = 0.f, f2 = 0.f;
        if (br) {
#pragma omp simd reduction(+ : f1, f2)
          for (int64_t i = start; i < end; ++i) {
            const float w = as_float(ar[i]) - ka;
            f1 += w;
            f2 += w * (as_float(br[i]) - kb);
          }
        } else {
#pragma omp simd reduction(+ : f1)
          for (int64_t i = start; i < end; ++i) f1 += as_float(ar[i]) - ka;
        }
        t1 += f1;
        t2 += f2;
      }
      s1[p] = t1;
      if (s2) s2[p] = t2;
    }
    return;
  }
  // channels_last: rows of C channels; work items are chunks of rows within one sample, summed
  // into per-thread (sample, channel) totals that are merged at the end.
  std::fill(s1, s1 + planes, 0.0);
  if (s2) std::fill(s2, s2 + planes, 0.0);
  const int64_t chunks_per_sample = (spatial + kChunk - 1) / kChunk;
#pragma omp parallel
  {
    std::vector<double> t1(static_cast<size_t>(planes), 0.0), t2(t1.size(), 0.0);
    std::vector<float> f1(static_cast<size_t>(channels)), f2(f1.size());
    float* p1 = f1.data();
    float* p2 = f2.data();
#pragma omp for schedule(static)
    for (int64_t item = 0; item < batch * chunks_per_sample; ++item) {
      const int64_t n = item / chunks_per_sample, start = (item % chunks_per_sample) * kChunk;
      const int64_t end = std::min(spatial, start + kChunk);
      const float* ka = sa + n * channels;
      const float* kb = b ? sb + n * channels : nullptr;
      std::fill(f1.begin(), f1.end(), 0.f);
      std::fill(f2.begin(), f2.end(), 0.f);
      for (int64_t s = start; s < end; ++s) {
        const T* ar = a + (n * spatial + s) * channels;
        if (b) {
          const T* br = b + (n * spatial + s) * channels;
#pragma omp simd
          for (int64_t c = 0; c < channels; ++c) {
            const float w = as_float(ar[c]) - ka[c];
            p1[c] += w;
            p2[c] += w * (as_float(br[c]) - kb[c]);
          }
        } else {
#pragma omp simd
          for (int64_t c = 0; c < channels; ++c) p1[c] += as_float(ar[c]) - ka[c];
        }
      }
      for (int64_t c = 0; c < channels; ++c) {
        t1[static_cast<size_t>(n * channels + c)] += p1[c];
        t2[static_cast<size_t>(n * channels + c)] += p2[c];
      }
    }
#pragma omp critical
    for (int64_t i = 0; i < planes; ++i) {
      s1[i] += t1[static_cast<size_t>(i)];
      if (s2) s2[i] += t2[static_cast<size_t>(i)];
    }
  }
}

template <class T>
void channel_affine_of(const TensorDesc& d, const T* u, const float* p, const T* v, const float* m, const float* q,
                       const float* r, T* out) {
  const int64_t batch = d.batch(), channels = d.channels(), spatial = d.spatial_size();
  if (d.layout == Layout::channels_first) {
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < batch * channels; ++plane) {
      const T* vr = v + plane * spatial;
      T* o = out + plane * spatial;
      const float mk = m[plane], qk = q[plane], rk = r[plane];
      if (u) {
        const T* ur = u + plane * spatial;
        const float pk = p[plane];
#pragma omp simd
        for (int64_t i = 0; i < spatial; ++i)
          store_float(o[i], pk * as_float(ur[i]) + qk * (as_float(vr[i]) - mk) + rk);
      } else {
#pragma omp simd
        for (int64_t i = 0; i < spatial; ++i) store_float(o[i], qk * (as_float(vr[i]) - mk) + rk);
      }
    }
    return;
  }
  const int64_t rows = batch * spatial;
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t k = (row / spatial) * channels;  // this sample's coefficients
    const T* vr = v + row * channels;
    T* o = out + row * channels;
    const float* mk = m + k;
    const float* qk = q + k;
    const float* rk = r + k;
    if (u) {
      const T* ur = u + row * channels;
      const float* pk = p + k;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c)
        store_float(o[c], pk[c] * as_float(ur[c]) + qk[c] * (as_float(vr[c]) - mk[c]) + rk[c]);
    } else {
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) store_float(o[c], qk[c] * (as_float(vr[c]) - mk[c]) + rk[c]);
    }
  }
}

}  // namespace

void channel_sums(const TensorDesc& d, const float* a, const float* sa, const float* b, const float* sb, double* s1,
                  double* s2) {
  channel_sums_of(d, a, sa, b, sb, s1, s2);
}
void channel_sums(const TensorDesc& d, const BFloat16* a, const float* sa, const BFloat16* b, const float* sb,
                  double* s1, double* s2) {
  channel_sums_of(d, a, sa, b, sb, s1, s2);
}
void channel_affine(const TensorDesc& d, const float* u, const float* p, const float* v, const float* m, const float* q,
                    const float* r, float* out) {
  channel_affine_of(d, u, p, v, m, q, r, out);
}
void channel_affine(const TensorDesc& d, const BFloat16* u, const float* p, const BFloat16* v, const float* m,
                    const float* q, const float* r, BFloat16* out) {
  channel_affine_of(d, u, p, v, m, q, r, out);
}

}  // namespace convbench::cpu
