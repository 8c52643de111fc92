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
// step sums its dB/dC terms over the block's 16 lanes at once (fixed tree; in registers with
// AVX-512). The per-step kernels, portable and AVX-512, are in selective_scan_cpu_steps.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mimetic/ops/selective_scan/selective_scan.h"
#include "mimetic/ops/selective_scan/selective_scan_cpu_steps.h"

namespace mimetic::ops {
namespace {

using core::DType;
// The block kernels and their f32 / f64 helpers (selective_scan_cpu_steps.h).
using selective_scan_cpu::AdjointStep;
using selective_scan_cpu::AdvanceStep;
using selective_scan_cpu::kBlock;
using selective_scan_cpu::RecomputeStep;
using selective_scan_cpu::ScaleA;
using selective_scan_cpu::ScanStep;
using selective_scan_cpu::Sigmoid;
using selective_scan_cpu::Softplus;
using selective_scan_cpu::SoftplusGrad;

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
      AdjointStep(N, gy, dt, dtx, Bm + t * N, Cm + t * N, s.es.data() + (t - t0) * NB, h_t, h_prev,
                  s.at.data(), s.carry.data(), s.da.data(), s.lane_b.data(), s.lane_c.data(),
                  s.sum_gb.data() + t * kBlock, s.sum_ga.data() + t * kBlock, pb + t * N, pc + t * N);
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
