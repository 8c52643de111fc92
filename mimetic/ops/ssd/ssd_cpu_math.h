// Elementwise helpers of the SSD's fast CPU path (ssd_cpu.cc): f32 exp and softplus through fast_math,
// fixed-order dot products and sums, and the rows of the causal q x q blocks, with AVX-512 versions
// that give the portable loops' bits (ssd_cpu_math_test.cc checks them against each other).
#ifndef MIMETIC_OPS_SSD_SSD_CPU_MATH_H_
#define MIMETIC_OPS_SSD_SSD_CPU_MATH_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "mimetic/ops/cpu/fast_math.h"
#include "mimetic/ops/softplus.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mimetic::ops::ssd_cpu {

// f32: fast_math.h's vectorisable exp, softplus (z itself above 20, as softplus.h) and sigmoid for
// softplus' (1 in f32 above 20, as SoftplusGrad); f64: std::exp and softplus.h.
template <typename T>
inline T Exp(T x) {
  if constexpr (std::is_same_v<T, float>) return fast_math::Exp(x);
  return std::exp(x);
}
template <typename T>
inline T FastSoftplus(T z) {
  if constexpr (std::is_same_v<T, float>) return fast_math::Softplus(z);
  return Softplus<T>(z);
}
template <typename T>
inline T FastSoftplusGrad(T z) {
  if constexpr (std::is_same_v<T, float>) return fast_math::Sigmoid(z);
  return SoftplusGrad<T>(z);
}

// Σ x[i] y[i] with 8 fixed lane-wise partial sums (vectorises; same bits on every run).
template <typename T>
inline T Dot(int64_t n, const T* __restrict x, const T* __restrict y) {
  T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += x[i + j] * y[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] += x[i] * y[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

template <typename T>
inline T Sum(int64_t n, const T* __restrict x) {
  T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += x[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] += x[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// Row l of the intra-chunk weights W = CB ∘ exp(segsum): wl[s] = cbl[s] exp(acum[l] - acum[s]) for
// s <= l, 0 for l < s < q.
template <typename T>
inline void DecayRowPortable(int64_t l, int64_t q, const T* acum, const T* cbl, T* wl) {
  const T al = acum[l];
  for (int64_t s = 0; s <= l; ++s) wl[s] = cbl[s] * Exp<T>(al - acum[s]);
  std::fill(wl + l + 1, wl + q, T(0));
}

// Row l of the backward's diagonal block (see BackwardHeadChunk): W's row as DecayRow, dCB = dW ∘ E
// added into dcb_sum, M = dCB ∘ CB added into colsum; returns Σ_s M[l, s] (Sum's order). mrow: q
// scratch.
template <typename T>
inline T DiagRowPortable(int64_t l, int64_t q, const T* acum, const T* cbl, const T* dwl, T* wl, T* dcb_sum,
                         T* colsum, T* mrow) {
  const T al = acum[l];
  for (int64_t s = 0; s <= l; ++s) {
    const T e = Exp<T>(al - acum[s]);
    wl[s] = cbl[s] * e;
    const T dcb = dwl[s] * e;
    dcb_sum[s] += dcb;
    mrow[s] = dcb * cbl[s];
    colsum[s] += mrow[s];
  }
  std::fill(wl + l + 1, wl + q, T(0));
  return Sum<T>(l + 1, mrow);
}

#if defined(__AVX512F__)
// The f32 rows with AVX-512. GCC vectorises the loops above but runs much of them in scalar tails
// (l + 1 is below one vector for half the rows; the exp is ~25 instructions per lane there). These
// do the same operations per element (fast_math::Exp16 is Exp bit for bit), in masked vectors; the
// lanes past l hold exact zeros, which leave Sum's 8 lane sums, taken in its order, unchanged (a sum
// that starts at +0 is never -0). Same bits as the portable rows.

// The lanes of [sb, sb + 16) below n.
inline __mmask16 LanesBelow(int64_t sb, int64_t n) {
  const int64_t c = n - sb;
  return c >= 16 ? __mmask16(0xFFFF) : c <= 0 ? __mmask16(0) : __mmask16((1u << c) - 1);
}

// exp(al - acum[s]) on the lanes of `causal` (acum is read only there).
inline __m512 DecayVector(__m512 al, const float* acum, __mmask16 causal) {
  return fast_math::Exp16(_mm512_sub_ps(al, _mm512_maskz_loadu_ps(causal, acum)));
}

inline void DecayRowF32(int64_t l, int64_t q, const float* acum, const float* cbl, float* wl) {
  const __m512 al = _mm512_set1_ps(acum[l]);
  for (int64_t sb = 0; sb < q; sb += 16) {
    const __mmask16 causal = LanesBelow(sb, l + 1);
    __m512 w = _mm512_setzero_ps();
    if (causal) {
      w = _mm512_maskz_mul_ps(causal, _mm512_maskz_loadu_ps(causal, cbl + sb),
                              DecayVector(al, acum + sb, causal));
    }
    _mm512_mask_storeu_ps(wl + sb, LanesBelow(sb, q), w);
  }
}

inline float DiagRowF32(int64_t l, int64_t q, const float* acum, const float* cbl, const float* dwl,
                        float* wl, float* dcb_sum, float* colsum) {
  const __m512 al = _mm512_set1_ps(acum[l]);
  __m256 acc = _mm256_setzero_ps();  // Sum's lanes j = s mod 8
  for (int64_t sb = 0; sb < q; sb += 16) {
    const __mmask16 causal = LanesBelow(sb, l + 1);
    if (!causal) {
      _mm512_mask_storeu_ps(wl + sb, LanesBelow(sb, q), _mm512_setzero_ps());
      continue;
    }
    const __m512 e = DecayVector(al, acum + sb, causal);
    const __m512 cb = _mm512_maskz_loadu_ps(causal, cbl + sb);
    _mm512_mask_storeu_ps(wl + sb, LanesBelow(sb, q), _mm512_maskz_mul_ps(causal, cb, e));
    const __m512 dcb = _mm512_maskz_mul_ps(causal, _mm512_maskz_loadu_ps(causal, dwl + sb), e);
    _mm512_mask_storeu_ps(dcb_sum + sb, causal,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(causal, dcb_sum + sb), dcb));
    const __m512 m = _mm512_maskz_mul_ps(causal, dcb, cb);
    _mm512_mask_storeu_ps(colsum + sb, causal, _mm512_add_ps(_mm512_maskz_loadu_ps(causal, colsum + sb), m));
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(m));  // s = sb .. sb + 7, then sb + 8 .. sb + 15
    acc = _mm256_add_ps(acc, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1)));
  }
  // ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7)), as Sum.
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  const __m128 h = _mm_hadd_ps(t, t);
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
#endif

// The rows the kernels call: AVX-512 for f32 where the machine has it, else the portable loops.
template <typename T>
inline void DecayRow(int64_t l, int64_t q, const T* acum, const T* cbl, T* wl) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return DecayRowF32(l, q, acum, cbl, wl);
#endif
  DecayRowPortable<T>(l, q, acum, cbl, wl);
}

template <typename T>
inline T DiagRow(int64_t l, int64_t q, const T* acum, const T* cbl, const T* dwl, T* wl, T* dcb_sum,
                 T* colsum, T* mrow) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return DiagRowF32(l, q, acum, cbl, dwl, wl, dcb_sum, colsum);
#endif
  return DiagRowPortable<T>(l, q, acum, cbl, dwl, wl, dcb_sum, colsum, mrow);
}

}  // namespace mimetic::ops::ssd_cpu

#endif  // MIMETIC_OPS_SSD_SSD_CPU_MATH_H_
