// The per-time-step kernels of the selective scan's fast CPU path (selective_scan_cpu.cc) on one
// block of kBlock = 16 channels: lane j of every inner loop is channel d0 + j. Per-(t, d) scalars are
// rows of kBlock, per-(d, n) values (N, kBlock) blocks, so every recurrence is a vertical operation
// over channels. Portable loops (f32 and f64), and for f32 with AVX-512 intrinsics versions with the
// same bits (selective_scan_cpu_steps_test.cc checks them against each other).
#ifndef MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_CPU_STEPS_H_
#define MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_CPU_STEPS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "mimetic/ops/cpu/fast_math.h"
#include "mimetic/ops/cpu/lane_sums.h"
#include "mimetic/ops/softplus.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mimetic::ops::selective_scan_cpu {

constexpr int64_t kBlock = 16;  // channels per block: the lanes of every inner loop

// exp(dt·A) in the scans, as the CUDA kernels compute it: 2^(dt · A log2 e), with A log2 e ("scaled
// A") precomputed per channel. The product dt·(A log2 e) is rounded once, as dt·A is for exp, so
// this is as accurate as exp(dt·A) in f32 (fast_math::Exp2 saturates, see there). f64 keeps exp(dt·A).
inline float ScaleA(float a) { return a * 1.44269504088896341f; }
inline double ScaleA(double a) { return a; }
inline float ExpScaled(float u) { return fast_math::Exp2(u); }
inline double ExpScaled(double u) { return std::exp(u); }
// f32 sigmoid / softplus (x itself above the kernels' threshold 20) from fast_math.h, vectorisable;
// f64 takes softplus.h's Softplus / SoftplusGrad, the reference's formulas.
inline float Sigmoid(float x) { return fast_math::Sigmoid(x); }
inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline float Softplus(float v) { return fast_math::Softplus(v); }
inline double Softplus(double v) { return ops::Softplus<double>(v); }
// d softplus / dv: sigmoid(v), which is 1 in f32 above the threshold 20 anyway.
inline float SoftplusGrad(float v) { return Sigmoid(v); }
inline double SoftplusGrad(double v) { return ops::SoftplusGrad<double>(v); }

static_assert(kBlock == cpu::kLanes, "the dB/dC reductions sum 16 lanes");

// One step of the block's recurrence in place: h = exp(dt A) h + dt x B_t (as: scaled A, (N, kBlock));
// returns y = sum_n C_t h into y (kBlock).
template <typename T>
inline void ScanStep(int64_t N, const T* __restrict dt, const T* __restrict dtx, const T* __restrict as,
                     const T* __restrict B_t, const T* __restrict C_t, T* __restrict h, T* __restrict y) {
  T acc[kBlock] = {};
  for (int64_t n = 0; n < N; ++n) {
    const T bn = B_t[n], cn = C_t[n];
    const T* __restrict as_n = as + n * kBlock;
    T* __restrict h_n = h + n * kBlock;
#pragma omp simd
    for (int j = 0; j < kBlock; ++j) {
      const T hn = ExpScaled(dt[j] * as_n[j]) * h_n[j] + dtx[j] * bn;
      h_n[j] = hn;
      acc[j] += cn * hn;
    }
  }
  std::copy(acc, acc + kBlock, y);
}

// The state update alone (the backward's pass to the chunk starts).
template <typename T>
inline void AdvanceStep(int64_t N, const T* __restrict dt, const T* __restrict dtx, const T* __restrict as,
                        const T* __restrict B_t, T* __restrict h) {
  for (int64_t n = 0; n < N; ++n) {
    const T bn = B_t[n];
    const T* __restrict as_n = as + n * kBlock;
    T* __restrict h_n = h + n * kBlock;
#pragma omp simd
    for (int j = 0; j < kBlock; ++j) h_n[j] = ExpScaled(dt[j] * as_n[j]) * h_n[j] + dtx[j] * bn;
  }
}

// The full step from `prev`, keeping exp(dt A) in e_out and the new state in h_out (recomputation).
template <typename T>
inline void RecomputeStep(int64_t N, const T* __restrict dt, const T* __restrict dtx, const T* __restrict as,
                          const T* __restrict B_t, const T* __restrict C_t, const T* __restrict prev,
                          T* __restrict h_out, T* __restrict e_out, T* __restrict y) {
  T acc[kBlock] = {};
  for (int64_t n = 0; n < N; ++n) {
    const T bn = B_t[n], cn = C_t[n];
    const int64_t o = n * kBlock;
#pragma omp simd
    for (int j = 0; j < kBlock; ++j) {
      const T en = ExpScaled(dt[j] * as[o + j]);
      const T hn = en * prev[o + j] + dtx[j] * bn;
      e_out[o + j] = en;
      h_out[o + j] = hn;
      acc[j] += cn * hn;
    }
  }
  std::copy(acc, acc + kBlock, y);
}

#if defined(__AVX512F__)
// With AVX-512, ScanStep and RecomputeStep for f32 in intrinsics, the same operations in the same
// order as the portable loops above compile to (the same bits: selective_scan_cpu_steps_test), with
// exp(dt A) from fast_math::Exp2Product16, whose vscalefps replaces Exp2's clamp
// selects: the forward scan 1.4x faster.

// The step of a 16-channel block from `prev` over the N states: h_n = exp(dt A_n) prev_n + dt x B_t[n]
// into h_out (which may be prev: the forward updates in place), exp(dt A_n) into e_out unless null
// (the backward's recomputation keeps it), y = Σ_n C_t[n] h_n.
inline void Step16(int64_t N, const float* dt, const float* dtx, const float* as, const float* B_t,
                   const float* C_t, const float* prev, float* h_out, float* e_out, float* y) {
  const __m512 vdt = _mm512_loadu_ps(dt), vdtx = _mm512_loadu_ps(dtx);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t n = 0; n < N; ++n) {
    const int64_t o = n * kBlock;
    const __m512 e = fast_math::Exp2Product16(vdt, _mm512_loadu_ps(as + o));
    const __m512 hn =
        _mm512_fmadd_ps(e, _mm512_loadu_ps(prev + o), _mm512_mul_ps(vdtx, _mm512_set1_ps(B_t[n])));
    if (e_out != nullptr) _mm512_storeu_ps(e_out + o, e);
    _mm512_storeu_ps(h_out + o, hn);
    acc = _mm512_fmadd_ps(_mm512_set1_ps(C_t[n]), hn, acc);
  }
  _mm512_storeu_ps(y, acc);
}

inline void ScanStep(int64_t N, const float* dt, const float* dtx, const float* as, const float* B_t,
                     const float* C_t, float* h, float* y) {
  Step16(N, dt, dtx, as, B_t, C_t, h, h, nullptr, y);
}

inline void RecomputeStep(int64_t N, const float* dt, const float* dtx, const float* as, const float* B_t,
                          const float* C_t, const float* prev, float* h_out, float* e_out, float* y) {
  Step16(N, dt, dtx, as, B_t, C_t, prev, h_out, e_out, y);
}
#endif

// One step of the adjoint reverse scan of a block at time t over the N states:
//   g = C_t[n] gy + carry_n, carry_n <- exp(dt A_n) g, da_n += g exp(dt A_n) h_prev,n dt,
// the sums over n of g B_t[n] and of g exp(dt A_n) h_prev,n A_n into sum_gb / sum_ga (kBlock each),
// and the dB / dC terms g dt x, gy h_n summed over the lanes into pb_t[n] / pc_t[n] (rows of N).
template <typename T>
inline void AdjointStep(int64_t N, const T* __restrict gy, const T* __restrict dt, const T* __restrict dtx,
                        const T* __restrict B_t, const T* __restrict C_t, const T* __restrict es,
                        const T* __restrict h_t, const T* __restrict h_prev, const T* __restrict ats,
                        T* __restrict carrys, T* __restrict das, T* __restrict lane_b, T* __restrict lane_c,
                        T* __restrict sum_gb, T* __restrict sum_ga, T* __restrict pb_t, T* __restrict pc_t) {
  T sgb[kBlock] = {}, sga[kBlock] = {};
  for (int64_t n = 0; n < N; ++n) {
    const T bn = B_t[n], cn = C_t[n];
    const int64_t o = n * kBlock;
    const T* __restrict e = es + o;
    const T* __restrict hn = h_t + o;
    const T* __restrict hp = h_prev + o;
    const T* __restrict at = ats + o;
    T* __restrict carry = carrys + o;
    T* __restrict da = das + o;
    T* __restrict lb = lane_b + o;
    T* __restrict lc = lane_c + o;
#pragma omp simd
    for (int j = 0; j < kBlock; ++j) {
      const T g = cn * gy[j] + carry[j];
      const T wv = g * e[j] * hp[j];  // g dA h[t-1]
      lb[j] = g * dtx[j];             // dB term: g Δ x
      lc[j] = gy[j] * hn[j];          // dC term: gy h
      sgb[j] += g * bn;
      sga[j] += wv * at[j];
      da[j] += wv * dt[j];
      carry[j] = e[j] * g;
    }
  }
  std::copy(sgb, sgb + kBlock, sum_gb);
  std::copy(sga, sga + kBlock, sum_ga);
  // The step's dB/dC terms summed over the block's channels while they are in L1 (one add per
  // (t, n) and block, so the order over t does not matter).
  cpu::AddLaneSums(N, lane_b, pb_t);
  cpu::AddLaneSums(N, lane_c, pc_t);
}

#if defined(__AVX512F__)
// AdjointStep for f32 with AVX-512 when N is a multiple of 16: the same operations in the same order
// (the multiply-adds GCC contracts the loop above into), with the dB / dC terms summed in registers
// as they are made (cpu::SumsOf16Rows: the same tree, so the same bits) instead of stored and
// reloaded.
inline void AdjointStep16(int64_t N, const float* gy_t, const float* dt_t, const float* dtx_t,
                          const float* B_t, const float* C_t, const float* es, const float* h_t,
                          const float* h_prev, const float* ats, float* carrys, float* das, float* sum_gb,
                          float* sum_ga, float* pb_t, float* pc_t) {
  const __m512 gy = _mm512_loadu_ps(gy_t), dt = _mm512_loadu_ps(dt_t), dtx = _mm512_loadu_ps(dtx_t);
  __m512 sgb = _mm512_setzero_ps(), sga = _mm512_setzero_ps();
  // State n: its dB and dC terms, with sgb, sga, carry_n and da_n updated.
  auto state = [&](int64_t n, __m512& lb, __m512& lc) {
    const int64_t o = n * kBlock;
    const __m512 g = _mm512_fmadd_ps(_mm512_set1_ps(C_t[n]), gy, _mm512_loadu_ps(carrys + o));
    const __m512 ge = _mm512_mul_ps(g, _mm512_loadu_ps(es + o));
    const __m512 wv = _mm512_mul_ps(ge, _mm512_loadu_ps(h_prev + o));
    lb = _mm512_mul_ps(g, dtx);
    lc = _mm512_mul_ps(gy, _mm512_loadu_ps(h_t + o));
    sgb = _mm512_fmadd_ps(g, _mm512_set1_ps(B_t[n]), sgb);
    sga = _mm512_fmadd_ps(wv, _mm512_loadu_ps(ats + o), sga);
    _mm512_storeu_ps(das + o, _mm512_fmadd_ps(wv, dt, _mm512_loadu_ps(das + o)));
    _mm512_storeu_ps(carrys + o, ge);
  };
  for (int64_t n0 = 0; n0 < N; n0 += 16) {
    __m512 sums[2];  // dB, dC terms of states n0 .. n0 + 15
    cpu::SumsOf16Rows<2>([&](int n, __m512* rows) { state(n0 + n, rows[0], rows[1]); }, sums);
    _mm512_storeu_ps(pb_t + n0, _mm512_add_ps(_mm512_loadu_ps(pb_t + n0), sums[0]));
    _mm512_storeu_ps(pc_t + n0, _mm512_add_ps(_mm512_loadu_ps(pc_t + n0), sums[1]));
  }
  _mm512_storeu_ps(sum_gb, sgb);
  _mm512_storeu_ps(sum_ga, sga);
}

inline void AdjointStep(int64_t N, const float* gy, const float* dt, const float* dtx, const float* B_t,
                        const float* C_t, const float* es, const float* h_t, const float* h_prev,
                        const float* ats, float* carrys, float* das, float* lane_b, float* lane_c,
                        float* sum_gb, float* sum_ga, float* pb_t, float* pc_t) {
  if (N % 16 == 0) {
    AdjointStep16(N, gy, dt, dtx, B_t, C_t, es, h_t, h_prev, ats, carrys, das, sum_gb, sum_ga, pb_t, pc_t);
  } else {
    AdjointStep<float>(N, gy, dt, dtx, B_t, C_t, es, h_t, h_prev, ats, carrys, das, lane_b, lane_c, sum_gb,
                       sum_ga, pb_t, pc_t);
  }
}
#endif

}  // namespace mimetic::ops::selective_scan_cpu

#endif  // MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_CPU_STEPS_H_
