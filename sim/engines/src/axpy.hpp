// Internal: the innermost loop of the spiking engine's synapses, a spike's
// weights (float) times its value added to the targets' currents (double;
// float for the fast kernel, the *_f functions).
#pragma once
#include <cstddef>

#include "ctmc/sim/engines/simd.hpp"
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ctmc::sim::detail {

// cur[r] += c * w[r] for r < n, each product and sum rounded in double as
// the scalar loop rounds them (no fused multiply-add: the build forbids
// contraction), two targets per SSE2 instruction.
inline void add_scaled(double* cur, const float* w, std::ptrdiff_t n, double c) {
  std::ptrdiff_t r = 0;
#if defined(__SSE2__)
  const __m128d cc = _mm_set1_pd(c);
  for (; r + 4 <= n; r += 4) {
    const __m128 f = _mm_loadu_ps(w + r);
    const __m128d lo = _mm_cvtps_pd(f), hi = _mm_cvtps_pd(_mm_movehl_ps(f, f));
    _mm_storeu_pd(cur + r, _mm_add_pd(_mm_loadu_pd(cur + r), _mm_mul_pd(cc, lo)));
    _mm_storeu_pd(cur + r + 2, _mm_add_pd(_mm_loadu_pd(cur + r + 2), _mm_mul_pd(cc, hi)));
  }
#endif
  for (; r < n; ++r) cur[r] += c * w[r];
}

// cur[r] += c[0] * w[0][r], then += c[1] * w[1][r], ... for k < m: m runs
// added one after the other to each target, as m add_scaled calls would add
// them (the same bits), with each target's partial sum held in a register
// between the runs instead of stored and reloaded.
inline void add_scaled_runs(double* cur, const float* const* w, const double* c, int m, std::ptrdiff_t n) {
  std::ptrdiff_t r = 0;
#if defined(__SSE2__)
  for (; r + 4 <= n; r += 4) {
    __m128d a = _mm_loadu_pd(cur + r), b = _mm_loadu_pd(cur + r + 2);
    for (int k = 0; k < m; ++k) {
      const __m128d cc = _mm_set1_pd(c[k]);
      const __m128 f = _mm_loadu_ps(w[k] + r);
      a = _mm_add_pd(a, _mm_mul_pd(cc, _mm_cvtps_pd(f)));
      b = _mm_add_pd(b, _mm_mul_pd(cc, _mm_cvtps_pd(_mm_movehl_ps(f, f))));
    }
    _mm_storeu_pd(cur + r, a);
    _mm_storeu_pd(cur + r + 2, b);
  }
#endif
  for (; r < n; ++r) {
    double a = cur[r];
    for (int k = 0; k < m; ++k) a += c[k] * w[k][r];
    cur[r] = a;
  }
}

// The fast kernel's float currents: cur[r] += c * w[r] with the product and
// the sum rounded to float as the scalar loop rounds them, four targets per
// SSE2 instruction.
inline void add_scaled_f(float* cur, const float* w, std::ptrdiff_t n, float c) {
  std::ptrdiff_t r = 0;
#if defined(__SSE2__)
  const __m128 cc = _mm_set1_ps(c);
  for (; r + 4 <= n; r += 4)
    _mm_storeu_ps(cur + r, _mm_add_ps(_mm_loadu_ps(cur + r), _mm_mul_ps(cc, _mm_loadu_ps(w + r))));
#endif
  for (; r < n; ++r) cur[r] += c * w[r];
}

// add_scaled_runs in float: m runs added to each target in order, as m
// add_scaled_f calls would add them.
inline void add_scaled_runs_f(float* cur, const float* const* w, const float* c, int m, std::ptrdiff_t n) {
  std::ptrdiff_t r = 0;
#if defined(__SSE2__)
  for (; r + 4 <= n; r += 4) {
    __m128 a = _mm_loadu_ps(cur + r);
    for (int k = 0; k < m; ++k) a = _mm_add_ps(a, _mm_mul_ps(_mm_set1_ps(c[k]), _mm_loadu_ps(w[k] + r)));
    _mm_storeu_ps(cur + r, a);
  }
#endif
  for (; r < n; ++r) {
    float a = cur[r];
    for (int k = 0; k < m; ++k) a += c[k] * w[k][r];
    cur[r] = a;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define CTMC_SIM_AVX_DISPATCH 1
// The same with four targets per AVX instruction, for code compiled for AVX
// by the target attribute and called only where the CPU has it (has_avx):
// AVX's products and sums round as SSE2's and the scalar ones do, so the
// bits do not depend on which of them runs (the baseline build stays
// x86-64 without -march, CMakeLists.txt).
__attribute__((target("avx"))) inline void add_scaled_avx(double* cur, const float* w, std::ptrdiff_t n, double c) {
  std::ptrdiff_t r = 0;
  const __m256d cc = _mm256_set1_pd(c);
  for (; r + 8 <= n; r += 8) {
    const __m256d lo = _mm256_cvtps_pd(_mm_loadu_ps(w + r)), hi = _mm256_cvtps_pd(_mm_loadu_ps(w + r + 4));
    _mm256_storeu_pd(cur + r, _mm256_add_pd(_mm256_loadu_pd(cur + r), _mm256_mul_pd(cc, lo)));
    _mm256_storeu_pd(cur + r + 4, _mm256_add_pd(_mm256_loadu_pd(cur + r + 4), _mm256_mul_pd(cc, hi)));
  }
  for (; r + 4 <= n; r += 4) {
    const __m256d lo = _mm256_cvtps_pd(_mm_loadu_ps(w + r));
    _mm256_storeu_pd(cur + r, _mm256_add_pd(_mm256_loadu_pd(cur + r), _mm256_mul_pd(cc, lo)));
  }
  for (; r < n; ++r) cur[r] += c * w[r];
}

__attribute__((target("avx"))) inline void add_scaled_runs_avx(double* cur, const float* const* w, const double* c,
                                                                int m, std::ptrdiff_t n) {
  std::ptrdiff_t r = 0;
  for (; r + 8 <= n; r += 8) {
    __m256d a = _mm256_loadu_pd(cur + r), b = _mm256_loadu_pd(cur + r + 4);
    for (int k = 0; k < m; ++k) {
      const __m256d cc = _mm256_set1_pd(c[k]);
      a = _mm256_add_pd(a, _mm256_mul_pd(cc, _mm256_cvtps_pd(_mm_loadu_ps(w[k] + r))));
      b = _mm256_add_pd(b, _mm256_mul_pd(cc, _mm256_cvtps_pd(_mm_loadu_ps(w[k] + r + 4))));
    }
    _mm256_storeu_pd(cur + r, a);
    _mm256_storeu_pd(cur + r + 4, b);
  }
  for (; r < n; ++r) {
    double a = cur[r];
    for (int k = 0; k < m; ++k) a += c[k] * w[k][r];
    cur[r] = a;
  }
}

__attribute__((target("avx"))) inline void add_scaled_f_avx(float* cur, const float* w, std::ptrdiff_t n, float c) {
  std::ptrdiff_t r = 0;
  const __m256 cc = _mm256_set1_ps(c);
  for (; r + 8 <= n; r += 8)
    _mm256_storeu_ps(cur + r, _mm256_add_ps(_mm256_loadu_ps(cur + r), _mm256_mul_ps(cc, _mm256_loadu_ps(w + r))));
  for (; r + 4 <= n; r += 4)
    _mm_storeu_ps(cur + r, _mm_add_ps(_mm_loadu_ps(cur + r), _mm_mul_ps(_mm_set1_ps(c), _mm_loadu_ps(w + r))));
  for (; r < n; ++r) cur[r] += c * w[r];
}

__attribute__((target("avx"))) inline void add_scaled_runs_f_avx(float* cur, const float* const* w, const float* c,
                                                                  int m, std::ptrdiff_t n) {
  std::ptrdiff_t r = 0;
  for (; r + 8 <= n; r += 8) {
    __m256 a = _mm256_loadu_ps(cur + r);
    for (int k = 0; k < m; ++k) a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_set1_ps(c[k]), _mm256_loadu_ps(w[k] + r)));
    _mm256_storeu_ps(cur + r, a);
  }
  for (; r < n; ++r) {
    float a = cur[r];
    for (int k = 0; k < m; ++k) a += c[k] * w[k][r];
    cur[r] = a;
  }
}

// The CPU has AVX and allow_avx (simd.hpp) has not ruled it out.
inline bool has_avx() {
  static const bool yes = __builtin_cpu_supports("avx");
  return yes && avx_allowed.load(std::memory_order_relaxed);
}
// The CPU has AVX-512F (libgcc's test includes the OS's support of its
// registers) and neither allow_avx nor allow_avx512 has ruled it out.
inline bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes && has_avx() && avx512_allowed.load(std::memory_order_relaxed);
}
#endif

}  // namespace ctmc::sim::detail
