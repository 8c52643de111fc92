// Selective scan, fast CPU path (f32 and f64; f64 shares the code with libm's exp/log1p).
//
// Channels are processed in blocks of kBlock = 16: the inner loop of every kernel runs over the 16
// channels of a block (the lanes), with per-(t, d) scalars in t-major (L, 16) buffers and the state
// and A as (N, 16). Every recurrence is then a vertical vector operation; vectorising over N instead
// needs a horizontal sum per (t, d) for y (and three in the backward), which GCC compiles into 16
// serial scalar adds, 1.6-2.5x slower in our measurements. Each work item owns the full time
// recurrence of its channels.
//
// Forward: OpenMP over (b, block). Backward (as mamba_ssm's selective_scan_bwd_kernel.cuh): work items (b,
// group of blocks) with a fixed, shape-only partition, so the reductions over d (dB, dC) and over b (dA, dD,
// ddelta_bias) go through partial buffers combined in a fixed order: same bits for any thread count. Per
// block: one pass keeps the states at chunk starts (O(L/chunk · N · 16)), then chunks are walked last to
// first, each recomputing its states (O(chunk · N · 16) scratch) and running the adjoint reverse scan.
// Chunking never changes the result: the states are recomputed by the same operations. Each reverse
// step sums its dB/dC terms over the block's 16 lanes at once (cpu::AddLaneSums, fixed tree), while
// they are in L1. With AVX-512 the f32 forward and recomputation steps are intrinsics with the same
// bits as the portable loops (see ScanStep below).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mimetic/ops/cpu/fast_math.h"
#include "mimetic/ops/cpu/lane_sums.h"
#include "mimetic/ops/selective_scan/selective_scan.h"
#include "mimetic/ops/softplus.h"

namespace mimetic::ops {
namespace {

using core::DType;

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

template <typename T>
struct View {
  int64_t B, L, E, N;
  const T *u, *delta, *A, *Bm, *Cm, *D, *z, *bias;
};

template <typename T>
View<T> MakeView(const SelectiveScanAttrs& a, absl::Span<const core::Tensor> in) {
  return View<T>{in[0].dim(0),
                 in[0].dim(1),
                 in[0].dim(2),
                 in[2].dim(1),
                 in[0].data<T>(),
                 in[1].data<T>(),
                 in[2].data<T>(),
                 in[3].data<T>(),
                 in[4].data<T>(),
                 in[5].data<T>(),
                 a.has_z ? in[a.z_index()].data<T>() : nullptr,
                 a.has_delta_bias ? in[a.delta_bias_index()].data<T>() : nullptr};
}

// ---- Block kernels: lane j of every inner loop is channel d0 + j of a block of kBlock channels. ----
// Per-(t, d) scalars live in t-major (L, kBlock) buffers, per-(d, n) values in (N, kBlock) ones, so
// every inner loop is a vertical operation over channels (no horizontal sums in the recurrences).
// Lanes past the block's width w hold zeros (dt = dt·u = gy = A = 0), which keep their states,
// adjoints and contributions exactly zero.
static_assert(kBlock == cpu::kLanes, "the dB/dC reductions sum 16 lanes");
using cpu::AddLaneSums;

// dt = softplus(delta + bias) (or delta + bias), dtx = dt·u and dt_grad = d dt / d delta (if asked)
// of channels [d0, d0 + w) of batch b.
template <typename T>
void TimeSteps(const View<T>& v, bool softplus, int64_t b, int64_t d0, int64_t w, T* __restrict dt,
               T* __restrict dtx, T* __restrict dt_grad) {
  std::fill(dt, dt + v.L * kBlock, T(0));
  std::fill(dtx, dtx + v.L * kBlock, T(0));
  for (int64_t t = 0; t < v.L; ++t) {
    const int64_t row = (b * v.L + t) * v.E + d0;
    const T* __restrict delta = v.delta + row;
    const T* __restrict u = v.u + row;
    T* __restrict dt_t = dt + t * kBlock;
    if (v.bias) {
      const T* __restrict bias = v.bias + d0;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) dt_t[j] = delta[j] + bias[j];
    } else {
      std::copy(delta, delta + w, dt_t);
    }
    if (softplus) {
      if (dt_grad) {
        T* __restrict grad_t = dt_grad + t * kBlock;
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) grad_t[j] = SoftplusGrad(dt_t[j]);
      }
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) dt_t[j] = Softplus(dt_t[j]);
    } else if (dt_grad) {
      std::fill(dt_grad + t * kBlock, dt_grad + t * kBlock + w, T(1));
    }
    T* __restrict dtx_t = dtx + t * kBlock;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) dtx_t[j] = dt_t[j] * u[j];
  }
}

// (N, kBlock) transpose of A rows [d0, d0 + w), ScaleA'd if `scaled`, zero-padded.
template <typename T>
void LoadA(const View<T>& v, int64_t d0, int64_t w, bool scaled, T* out) {
  std::fill(out, out + v.N * kBlock, T(0));
  for (int64_t j = 0; j < w; ++j) {
    for (int64_t n = 0; n < v.N; ++n) {
      const T a = v.A[(d0 + j) * v.N + n];
      out[n * kBlock + j] = scaled ? ScaleA(a) : a;
    }
  }
}

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
// order as the portable loops above compile to (the bits are equal: checkpoints of a Mamba 1 run are
// byte-identical), with exp(dt A) from fast_math::Exp2Product16, whose vscalefps replaces Exp2's clamp
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

template <typename T>
void Forward(const SelectiveScanAttrs& a, absl::Span<const core::Tensor> in,
             absl::Span<const core::Tensor> out) {
  const View<T> v = MakeView<T>(a, in);
  const int64_t B = v.B, L = v.L, E = v.E, N = v.N;
  T* y = out[0].mutable_data<T>();     // (B, L, E)
  T* last = out[1].mutable_data<T>();  // (B, E, N)
  const int64_t n_blocks = (E + kBlock - 1) / kBlock;
#pragma omp parallel
  {
    std::vector<T> dt(L * kBlock), dtx(L * kBlock), acc(L * kBlock), as(N * kBlock), h(N * kBlock);
#pragma omp for schedule(static)
    for (int64_t item = 0; item < B * n_blocks; ++item) {
      const int64_t b = item / n_blocks, d0 = (item % n_blocks) * kBlock, w = std::min(kBlock, E - d0);
      TimeSteps(v, a.delta_softplus, b, d0, w, dt.data(), dtx.data(), static_cast<T*>(nullptr));
      LoadA(v, d0, w, /*scaled=*/true, as.data());
      std::fill(h.begin(), h.end(), T(0));
      for (int64_t t = 0; t < L; ++t) {
        const int64_t k = t * kBlock, i = b * L + t;
        ScanStep(N, dt.data() + k, dtx.data() + k, as.data(), v.Bm + i * N, v.Cm + i * N, h.data(),
                 acc.data() + k);
      }
      for (int64_t j = 0; j < w; ++j) {
        for (int64_t n = 0; n < N; ++n) last[(b * E + d0 + j) * N + n] = h[n * kBlock + j];
      }
      for (int64_t t = 0; t < L; ++t) {
        const int64_t row = (b * L + t) * E + d0;
        const T* __restrict acc_t = acc.data() + t * kBlock;
        const T* __restrict u = v.u + row;
        const T* __restrict D = v.D + d0;
        T* __restrict y_t = y + row;
        if (v.z) {
          const T* __restrict z = v.z + row;
#pragma omp simd
          for (int64_t j = 0; j < w; ++j) y_t[j] = (acc_t[j] + D[j] * u[j]) * (z[j] * Sigmoid(z[j]));
        } else {
#pragma omp simd
          for (int64_t j = 0; j < w; ++j) y_t[j] = acc_t[j] + D[j] * u[j];
        }
      }
    }
  }
}

// Per-thread scratch of the backward pass.
template <typename T>
struct BackwardScratch {
  BackwardScratch(int64_t L, int64_t N, int64_t K, int64_t n_chunks)
      : dt(L * kBlock),
        dtx(L * kBlock),
        dt_grad(L * kBlock),
        gy(L * kBlock),
        ypre(L * kBlock),
        sum_gb(L * kBlock),
        sum_ga(L * kBlock),
        as(N * kBlock),
        at(N * kBlock),
        carry(N * kBlock),
        da(N * kBlock),
        h0(n_chunks * N * kBlock),
        hs(K * N * kBlock),
        es(K * N * kBlock),
        lane_b(N * kBlock),
        lane_c(N * kBlock) {}
  std::vector<T> dt, dtx, dt_grad, gy, ypre, sum_gb, sum_ga;  // (L, kBlock)
  std::vector<T> as, at;                                      // (N, kBlock): scaled and plain A
  std::vector<T> carry;           // (N, kBlock): dA[t+1] g[t+1], the adjoint flowing into step t
  std::vector<T> da;              // (N, kBlock): the block's dA
  std::vector<T> h0;              // (n_chunks, N, kBlock): state before each chunk
  std::vector<T> hs, es;          // (K, N, kBlock): states and exp(dt A) inside the current chunk
  std::vector<T> lane_b, lane_c;  // (N, kBlock): one step's per-channel dB, dC terms (stay in L1)
};

// The block's backward (as mamba_ssm's selective_scan_bwd_kernel.cuh) for batch b: a pass keeping the states
// at chunk starts, then chunks last to first, each recomputing its states and running the adjoint reverse
// scan
//   g[t] = C[t] gy[t] + dA[t+1] g[t+1]   (carry = dA[t+1] g[t+1]; seeded with dlast_state).
// Chunks are aligned to the end (only chunk 0 may be short), so the first pass covers L − K steps.
// Adds the block's dB/dC terms to the (L, N) partials pb/pc in a fixed order.
template <typename T>
void BlockBackward(const View<T>& v, int64_t b, int64_t K, int64_t n_chunks, BackwardScratch<T>& s, T* pb,
                   T* pc) {
  const int64_t L = v.L, N = v.N, NB = N * kBlock;
  const T* Bm = v.Bm + b * L * N;
  const T* Cm = v.Cm + b * L * N;
  auto start = [&](int64_t c) { return c == 0 ? int64_t{0} : L - (n_chunks - c) * K; };
  T* h = s.hs.data();  // the first pass runs its state in the chunk buffer's first row
  std::fill(h, h + NB, T(0));
  for (int64_t c = 0; c < n_chunks; ++c) {
    std::copy(h, h + NB, s.h0.data() + c * NB);
    if (c == n_chunks - 1) break;
    for (int64_t t = start(c); t < start(c + 1); ++t) {
      AdvanceStep(N, s.dt.data() + t * kBlock, s.dtx.data() + t * kBlock, s.as.data(), Bm + t * N, h);
    }
  }
  std::fill(s.da.begin(), s.da.end(), T(0));
  for (int64_t c = n_chunks - 1; c >= 0; --c) {
    const int64_t t0 = start(c), t1 = c == n_chunks - 1 ? L : start(c + 1);
    for (int64_t t = t0; t < t1; ++t) {  // recompute exp(dt A) and the states of the chunk
      const T* prev = t > t0 ? s.hs.data() + (t - t0 - 1) * NB : s.h0.data() + c * NB;
      RecomputeStep(N, s.dt.data() + t * kBlock, s.dtx.data() + t * kBlock, s.as.data(), Bm + t * N,
                    Cm + t * N, prev, s.hs.data() + (t - t0) * NB, s.es.data() + (t - t0) * NB,
                    s.ypre.data() + t * kBlock);
    }
    for (int64_t t = t1 - 1; t >= t0; --t) {  // adjoint reverse scan
      const T* __restrict gy = s.gy.data() + t * kBlock;
      const T* __restrict dt = s.dt.data() + t * kBlock;
      const T* __restrict dtx = s.dtx.data() + t * kBlock;
      const T* h_t = s.hs.data() + (t - t0) * NB;
      const T* h_prev = t > t0 ? h_t - NB : s.h0.data() + c * NB;
      T sgb[kBlock] = {}, sga[kBlock] = {};
      for (int64_t n = 0; n < N; ++n) {
        const T bn = Bm[t * N + n], cn = Cm[t * N + n];
        const int64_t o = n * kBlock, to = (t - t0) * NB + o;
        const T* __restrict e = s.es.data() + to;
        const T* __restrict hn = h_t + o;
        const T* __restrict hp = h_prev + o;
        const T* __restrict at = s.at.data() + o;
        T* __restrict carry = s.carry.data() + o;
        T* __restrict da = s.da.data() + o;
        T* __restrict lb = s.lane_b.data() + o;
        T* __restrict lc = s.lane_c.data() + o;
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
      std::copy(sgb, sgb + kBlock, s.sum_gb.data() + t * kBlock);
      std::copy(sga, sga + kBlock, s.sum_ga.data() + t * kBlock);
      // The step's dB/dC terms summed over the block's channels while they are in L1 (one add per
      // (t, n) and block, so the order over t does not matter).
      AddLaneSums(N, s.lane_b.data(), pb + t * N);
      AddLaneSums(N, s.lane_c.data(), pc + t * N);
    }
  }
}

// The backward's outputs (dz and ddelta_bias null when the op has no z / delta_bias).
template <typename T>
struct BackwardOutputs {
  T *du, *ddelta, *dA, *dB, *dC, *dD, *dz, *dbias;
};

// gy = dout · silu(z) (or dout) for the channel block [d0, d0 + w) of batch b, and the adjoint carry
// seeded with dlast_state (B, E, N).
template <typename T>
void SeedBlockAdjoint(const View<T>& v, const T* dy, const T* dlast, int64_t b, int64_t d0, int64_t w,
                      BackwardScratch<T>& s) {
  const int64_t L = v.L, E = v.E, N = v.N;
  std::fill(s.gy.begin(), s.gy.end(), T(0));
  std::fill(s.carry.begin(), s.carry.end(), T(0));
  for (int64_t t = 0; t < L; ++t) {
    const int64_t row = (b * L + t) * E + d0;
    T* __restrict gy_t = s.gy.data() + t * kBlock;
    const T* __restrict dy_t = dy + row;
    if (v.z) {
      const T* __restrict z = v.z + row;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) gy_t[j] = dy_t[j] * (z[j] * Sigmoid(z[j]));
    } else {
      std::copy(dy_t, dy_t + w, gy_t);
    }
  }
  for (int64_t j = 0; j < w; ++j) {
    for (int64_t n = 0; n < N; ++n) s.carry[n * kBlock + j] = dlast[(b * E + d0 + j) * N + n];
  }
}

// Row-wise finish of the block after BlockBackward: du, ddelta, dz, and this block's dD and
// ddelta_bias partials pd/pbias (w entries each, overwritten).
template <typename T>
void FinishBlockRows(const View<T>& v, const T* dy, int64_t b, int64_t d0, int64_t w,
                     const BackwardScratch<T>& s, const BackwardOutputs<T>& o, T* __restrict pd,
                     T* __restrict pbias) {
  const int64_t L = v.L, E = v.E;
  std::fill(pd, pd + w, T(0));
  std::fill(pbias, pbias + w, T(0));
  const T* __restrict D = v.D + d0;
  for (int64_t t = 0; t < L; ++t) {
    const int64_t row = (b * L + t) * E + d0, k = t * kBlock;
    const T* __restrict u = v.u + row;
    const T* __restrict gy = s.gy.data() + k;
    const T* __restrict sgb = s.sum_gb.data() + k;
    const T* __restrict sga = s.sum_ga.data() + k;
    const T* __restrict dt = s.dt.data() + k;
    const T* __restrict dt_grad = s.dt_grad.data() + k;
    T* __restrict du_t = o.du + row;
    T* __restrict ddelta_t = o.ddelta + row;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) {
      du_t[j] = D[j] * gy[j] + dt[j] * sgb[j];
      const T dd = (u[j] * sgb[j] + sga[j]) * dt_grad[j];
      ddelta_t[j] = dd;
      pd[j] += gy[j] * u[j];
      pbias[j] += dd;
    }
    if (o.dz) {  // dz = dout · (ypre + D u) · silu'(z), silu'(z) = σ(z)(1 + z(1 − σ(z)))
      const T* __restrict z = v.z + row;
      const T* __restrict dy_t = dy + row;
      const T* __restrict ypre = s.ypre.data() + k;
      T* __restrict dz_t = o.dz + row;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) {
        const T sg = Sigmoid(z[j]);
        dz_t[j] = dy_t[j] * (ypre[j] + D[j] * u[j]) * sg * (T(1) + z[j] * (T(1) - sg));
      }
    }
  }
}

// The per-work-item partial sums of the backward, combined in a fixed order at the end.
template <typename T>
struct BackwardPartials {
  int64_t groups;             // channel-block groups per batch row (work items: B * groups)
  std::vector<T> b, c;        // (groups, B, L, N) dB / dC partials (empty when groups == 1)
  std::vector<T> a, d, bias;  // (B, E, N) dA, (B, E) dD and ddelta_bias partials
};

// Fixed-order reductions: dB/dC over groups, dA/dD/ddelta_bias over b. Orphaned `omp for`s: called
// inside the backward's parallel region, each loop split statically over its threads.
template <typename T>
void ReducePartials(const View<T>& v, const BackwardPartials<T>& p, const BackwardOutputs<T>& o) {
  const int64_t B = v.B, L = v.L, E = v.E, N = v.N;
  if (p.groups > 1) {
#pragma omp for schedule(static)
    for (int64_t i = 0; i < B * L * N; ++i) {
      T sb = 0, sc = 0;
      for (int64_t g = 0; g < p.groups; ++g) {
        sb += p.b[g * B * L * N + i];
        sc += p.c[g * B * L * N + i];
      }
      o.dB[i] = sb;
      o.dC[i] = sc;
    }
  }
#pragma omp for schedule(static)
  for (int64_t i = 0; i < E * N; ++i) {
    T sa = 0;
    for (int64_t b = 0; b < B; ++b) sa += p.a[b * E * N + i];
    o.dA[i] = sa;
  }
#pragma omp for schedule(static)
  for (int64_t d = 0; d < E; ++d) {
    T sd = 0, sbias = 0;
    for (int64_t b = 0; b < B; ++b) {
      sd += p.d[b * E + d];
      sbias += p.bias[b * E + d];
    }
    o.dD[d] = sd;
    if (o.dbias) o.dbias[d] = sbias;
  }
}

// The backward: work items (b, group of channel blocks), each block seeded, run through
// BlockBackward and finished row-wise, then the partials reduced in a fixed order.
template <typename T>
void Backward(const SelectiveScanAttrs& a, absl::Span<const core::Tensor> in,
              absl::Span<const core::Tensor> out) {
  const View<T> v = MakeView<T>(a, in);
  const int64_t B = v.B, L = v.L, E = v.E, N = v.N;
  const int nf = a.num_forward_inputs();
  const T* dy = in[nf].data<T>();         // (B, L, E)
  const T* dlast = in[nf + 1].data<T>();  // (B, E, N)
  const BackwardOutputs<T> o{out[0].mutable_data<T>(),
                             out[1].mutable_data<T>(),
                             out[2].mutable_data<T>(),
                             out[3].mutable_data<T>(),
                             out[4].mutable_data<T>(),
                             out[5].mutable_data<T>(),
                             a.has_z ? out[a.z_index()].mutable_data<T>() : nullptr,
                             a.has_delta_bias ? out[a.delta_bias_index()].mutable_data<T>() : nullptr};

  const int64_t K = std::max<int64_t>(1, std::min(a.chunk_size, L));
  const int64_t n_chunks = (L + K - 1) / K;
  // Work items (b, group of channel blocks): a function of the shapes only (>= 16 items where the
  // channels allow), never of the thread count, so the partial sums below are combined identically.
  const int64_t n_blocks = (E + kBlock - 1) / kBlock;
  BackwardPartials<T> p;
  p.groups = std::max<int64_t>(1, std::min<int64_t>(n_blocks, (16 + B - 1) / std::max<int64_t>(B, 1)));
  // Partial sums: dB/dC per group (the output itself when there is one group), dA/dD/dbias per b.
  p.b.resize(p.groups > 1 ? p.groups * B * L * N : 0);
  p.c.resize(p.b.size());
  p.a.resize(B * E * N);
  p.d.resize(B * E);
  p.bias.resize(B * E);
  T* pb = p.groups > 1 ? p.b.data() : o.dB;
  T* pc = p.groups > 1 ? p.c.data() : o.dC;

#pragma omp parallel
  {
    BackwardScratch<T> s(L, N, K, n_chunks);
#pragma omp for schedule(static)
    for (int64_t item = 0; item < B * p.groups; ++item) {
      const int64_t b = item / p.groups, g = item % p.groups;
      T* pb_bg = pb + (g * B + b) * L * N;  // (L, N) partial of dB for (group, b)
      T* pc_bg = pc + (g * B + b) * L * N;
      std::fill(pb_bg, pb_bg + L * N, T(0));
      std::fill(pc_bg, pc_bg + L * N, T(0));
      for (int64_t blk = g * n_blocks / p.groups; blk < (g + 1) * n_blocks / p.groups; ++blk) {
        const int64_t d0 = blk * kBlock, w = std::min(kBlock, E - d0);
        TimeSteps(v, a.delta_softplus, b, d0, w, s.dt.data(), s.dtx.data(), s.dt_grad.data());
        LoadA(v, d0, w, /*scaled=*/true, s.as.data());
        LoadA(v, d0, w, /*scaled=*/false, s.at.data());
        SeedBlockAdjoint(v, dy, dlast, b, d0, w, s);
        BlockBackward(v, b, K, n_chunks, s, pb_bg, pc_bg);
        for (int64_t j = 0; j < w; ++j) {
          for (int64_t n = 0; n < N; ++n) p.a[(b * E + d0 + j) * N + n] = s.da[n * kBlock + j];
        }
        FinishBlockRows(v, dy, b, d0, w, s, o, p.d.data() + b * E + d0, p.bias.data() + b * E + d0);
      }
    }
    ReducePartials(v, p, o);
  }
}

}  // namespace

absl::Status SelectiveScanOp::ComputeCpu(absl::Span<const core::Tensor> in,
                                         absl::Span<const core::Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    Forward<double>(attrs_, in, out);
  } else {
    Forward<float>(attrs_, in, out);
  }
  return absl::OkStatus();
}

absl::Status SelectiveScanBackwardOp::ComputeCpu(absl::Span<const core::Tensor> in,
                                                 absl::Span<const core::Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    Backward<double>(attrs_, in, out);
  } else {
    Backward<float>(attrs_, in, out);
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops
