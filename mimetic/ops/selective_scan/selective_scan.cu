// Selective scan (Mamba 1, mamba_ssm: selective_scan_ref, selective_scan_bwd_kernel.cuh) on the GPU: forward
// and chunk-recomputing backward, f32 and f64. See selective_scan_kernels.h for the launchers' contract.
//
// Work decomposition. A block of kThreads threads serves one batch row b and kThreads / kP channels;
// each channel d is served by kP consecutive lanes of one warp, lane q owning the kNPT states
// n = j·kP + q (j < kNPT) in registers (states n >= N are inert padding: A = B = C = 0). The time loop
// runs sequentially in every lane. Per-(t, d) inputs (u, delta, z, dy) are read straight from global
// memory, coalesced across the channels of a warp; the rows B[b, t, :] and C[b, t, :], shared by all
// channels, are staged in shared memory one time tile of kTT steps at a time (lanes of a channel read
// consecutive words: no bank conflicts). Sums over n (y, and du/ddelta in the backward) add the
// lane's states in order, then the kP lanes by a shuffle butterfly.
//
// Forward: tiles of kTT steps; y = (Σ_n C h + D u)·silu(z); last_state = h[L-1].
//
// Backward (as mamba_ssm's selective_scan_bwd_kernel.cuh), per lane:
//   pass 1: the forward recurrence over all chunks but the last, storing the state after each chunk
//           (hbound, (B, n_chunks - 1, kNPT, ep) with ep = threads along the channel axis: coalesced);
//   pass 2: chunks last to first: recompute the chunk's states from its start state (hchunk,
//           (B, K, kNPT, ep)), then the adjoint reverse scan
//             g[t] = C[t]·gy[t] + exp(dt[t+1]A)·g[t+1]   (carried in registers, seeded with dlast_state)
//           producing du, ddelta, dz per (t, d), dA/dD/ddelta_bias accumulated over t in registers, and
//           the dB/dC terms g·dt·u and gy·h, which sum over d: first over the channels of the warp by a
//           recursive-halving shuffle reduction (each lane ends with distinct finished sums), written
//           as per-(b, warp) partials (B, W, L, 2, N); then ReduceBcKernel sums the W warps in order.
//           dA, dD, ddelta_bias are written as per-b partials and summed over b in order. No float
//           atomics (unless the launcher is asked for them): same input, same bits.
// The chunk length on the GPU is K = min(chunk_size, kTT, L), so a chunk is one shared-memory tile.
// The recomputation repeats pass 1's operations exactly (same inline code, explicit fma), so K
// changes no result bit.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/selective_scan/selective_scan_kernels.h"
#include "mimetic/ops/softplus.h"

namespace mimetic::ops::cuda {
namespace {

constexpr int kThreads = 128;  // per block; a multiple of 32
constexpr unsigned kFullMask = 0xffffffffu;
// From this many (b, d) channels on, one thread per channel (kP = 1) gives enough parallelism for
// N <= 16; below it, N is split over several lanes.
constexpr int64_t kManyChannels = 32768;

// Time steps per shared-memory tile of B and C: 2 · kTT · kNPad elements, at most 16 KiB (f32) or
// 32 KiB (f64).
__host__ __device__ constexpr int TileSteps(int n_pad) {
  return 2048 / n_pad < 8 ? 8 : (2048 / n_pad > 128 ? 128 : 2048 / n_pad);
}

// ---- Math shared by the f32 and f64 kernels (same formulas as the CPU ops) ----
__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
__device__ __forceinline__ float Fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double Fma(double a, double b, double c) { return fma(a, b, c); }

template <typename T>
__device__ __forceinline__ T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}
// dt = softplus(v) (identity above 20, as the reference kernels: softplus.h) or v.
template <typename T>
__device__ __forceinline__ T TimeStep(T v, bool softplus) {
  return !softplus ? v : ::mimetic::ops::Softplus(v);
}
template <typename T>
__device__ __forceinline__ T TimeStepGrad(T v, bool softplus) {
  return !softplus ? T(1) : ::mimetic::ops::SoftplusGrad(v);
}
// exp(dt·A): in f32 as 2^(dt · A log2 e) with A log2 e rounded once (the reference kernels' exp2f and
// the CPU fast path's scaling); in f64 plainly.
__device__ __forceinline__ float ScaleA(float a) { return a * 1.44269504088896341f; }
__device__ __forceinline__ double ScaleA(double a) { return a; }
__device__ __forceinline__ float Decay(float dt, float a_scaled) { return exp2f(dt * a_scaled); }
__device__ __forceinline__ double Decay(double dt, double a_scaled) { return exp(dt * a_scaled); }

// One state update h <- exp(dt A) h + dt·u·B, the single definition used by the forward, pass 1 and
// the recomputation (explicit fma: no contraction choice can differ between the three).
template <typename T>
__device__ __forceinline__ T StepState(T h, T dt, T a_scaled, T dtx, T b) {
  return Fma(Decay(dt, a_scaled), h, dtx * b);
}

// Sum over the kP lanes of a channel (butterfly; every lane gets the same bits, IEEE + commutes).
template <int kP, typename T>
__device__ __forceinline__ T SumLanes(T v) {
#pragma unroll
  for (int o = kP / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Sums the kV values of every lane over the channels of a warp (the lane bits >= kP): recursive
// halving while a lane holds more than one value (the lane with the offset bit set keeps the upper
// half, its partner the lower; both add what the other sent), then butterflies. Afterwards the lane
// holds the finished sums of value indices [base, base + FinalCount) of its state group; `writer`
// is false on the lanes that hold a duplicate of another lane's sums.
template <int kCnt, int kOffset, int kP, int kV, typename T>
__device__ __forceinline__ void ReduceChannels(T (&v)[kV], int lane, int& base, bool& writer) {
  if constexpr (kOffset >= kP && kOffset >= 1) {
    if constexpr (kCnt > 1) {
      constexpr int kHalf = kCnt / 2;
      const bool upper = (lane & kOffset) != 0;
#pragma unroll
      for (int i = 0; i < kHalf; ++i) {
        const T send = upper ? v[i] : v[i + kHalf];
        const T keep = upper ? v[i + kHalf] : v[i];
        v[i] = keep + __shfl_xor_sync(kFullMask, send, kOffset);
      }
      if (upper) base += kHalf;
      ReduceChannels<kHalf, kOffset / 2, kP>(v, lane, base, writer);
    } else {
      v[0] += __shfl_xor_sync(kFullMask, v[0], kOffset);
      if (lane & kOffset) writer = false;
      ReduceChannels<1, kOffset / 2, kP>(v, lane, base, writer);
    }
  }
}

// Values per lane left by ReduceChannels<kV, 16, kP>.
__host__ __device__ constexpr int FinalCount(int v, int p) {
  int cnt = v;
  for (int o = 16; o >= p && o >= 1; o /= 2) cnt = cnt > 1 ? cnt / 2 : 1;
  return cnt;
}

template <typename T>
struct Params {
  int64_t B, L, E, N;
  bool softplus;
  const T *u, *delta, *A, *Bm, *Cm, *D, *z, *bias;  // forward inputs; z, bias may be null
  T *y, *last;                                      // forward outputs
  const T *dy, *dlast;                              // backward cotangents
  T *du, *ddelta, *dz;                              // backward per-(t, d) outputs
  T *dB, *dC;                                       // for the atomic dB/dC path
  bool atomic_bc;
  int64_t nbx;            // blocks per batch row
  int64_t ep;             // threads along the channel axis per batch row (nbx · kThreads)
  int64_t W;              // warps per batch row (ep / 32)
  int64_t K, n_chunks;    // backward chunk length and count
  T *hbound, *hchunk;     // scratch: (B, n_chunks - 1, kNPT, ep) and (B, K, kNPT, ep)
  T* part_bc;             // (B, W, L, 2, N)
  T* part_a;              // (B, E, N)
  T *part_d, *part_bias;  // (B, E)
};

// Where a thread sits: batch row b, channel d (active when d < E), state group q, and its index gx
// along the channel axis of its batch row.
template <int kP>
struct Seat {
  int64_t b, d, gx;
  int q;
  bool active;
};

template <int kP>
__device__ __forceinline__ Seat<kP> TakeSeat(int64_t nbx, int64_t E) {
  Seat<kP> s;
  s.b = blockIdx.x / nbx;
  s.gx = (blockIdx.x % nbx) * kThreads + threadIdx.x;
  s.d = s.gx / kP;
  s.q = threadIdx.x % kP;
  s.active = s.d < E;
  return s;
}

// Rows t0 .. t0 + len of B[b] (and C[b] when sC is non-null) into (len, kNPad) tiles, zero-padded
// past N. Called by the whole block between __syncthreads.
template <int kNPad, typename T>
__device__ __forceinline__ void LoadTile(const T* Bm, const T* Cm, int64_t b, int64_t L, int64_t N,
                                         int64_t t0, int len, T* sB, T* sC) {
  for (int i = threadIdx.x; i < len * kNPad; i += kThreads) {
    const int tt = i / kNPad, n = i % kNPad;
    const int64_t row = (b * L + t0 + tt) * N;
    sB[i] = n < N ? Bm[row + n] : T(0);
    if (sC) sC[i] = n < N ? Cm[row + n] : T(0);
  }
}

template <typename T, int kNPT, int kP>
__global__ void __launch_bounds__(kThreads) ForwardKernel(Params<T> p) {
  constexpr int kNPad = kNPT * kP;
  constexpr int kTT = TileSteps(kNPad);
  __shared__ T sB[kTT * kNPad];
  __shared__ T sC[kTT * kNPad];
  const Seat<kP> s = TakeSeat<kP>(p.nbx, p.E);
  const int64_t L = p.L, E = p.E, N = p.N, b = s.b, d = s.d;
  const int q = s.q;

  T a2[kNPT], h[kNPT];
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    a2[j] = s.active && n < N ? ScaleA(p.A[d * N + n]) : T(0);
    h[j] = T(0);
  }
  const T bias = s.active && p.bias ? p.bias[d] : T(0);
  const T Dd = s.active ? p.D[d] : T(0);

  for (int64_t t0 = 0; t0 < L; t0 += kTT) {
    const int len = static_cast<int>(min(static_cast<int64_t>(kTT), L - t0));
    __syncthreads();  // the previous tile is no longer read
    LoadTile<kNPad>(p.Bm, p.Cm, b, L, N, t0, len, sB, sC);
    __syncthreads();
    for (int tt = 0; tt < len; ++tt) {
      const int64_t i = (b * L + t0 + tt) * E + d;
      T x = T(0), dt = T(0);
      if (s.active) {
        x = p.u[i];
        dt = TimeStep(p.delta[i] + bias, p.softplus);
      }
      const T dtx = dt * x;
      T acc = T(0);
#pragma unroll
      for (int j = 0; j < kNPT; ++j) {
        const int o = tt * kNPad + j * kP + q;
        h[j] = StepState(h[j], dt, a2[j], dtx, sB[o]);
        acc = Fma(sC[o], h[j], acc);
      }
      acc = SumLanes<kP>(acc);
      if (s.active && q == 0) {
        T out = acc + Dd * x;
        if (p.z) {
          const T zz = p.z[i];
          out *= zz * Sigmoid(zz);
        }
        p.y[i] = out;
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    if (s.active && n < N) p.last[(b * E + d) * N + n] = h[j];
  }
}

template <typename T, int kNPT, int kP>
__global__ void __launch_bounds__(kThreads) BackwardKernel(Params<T> p) {
  constexpr int kNPad = kNPT * kP;
  constexpr int kTT = TileSteps(kNPad);
  constexpr int kV = 2 * kNPT;  // dB terms of the lane's states, then its dC terms
  constexpr int kCnt = FinalCount(kV, kP);
  __shared__ T sB[kTT * kNPad];
  __shared__ T sC[kTT * kNPad];
  const Seat<kP> s = TakeSeat<kP>(p.nbx, p.E);
  const int64_t L = p.L, E = p.E, N = p.N, b = s.b, d = s.d, gx = s.gx, ep = p.ep;
  const int64_t K = p.K, n_chunks = p.n_chunks, n_bound = n_chunks - 1;
  const int q = s.q, lane = threadIdx.x % 32;
  const int64_t w = gx / 32;  // this warp's index among the W warps of batch row b
  // Element j of the saved state after chunk c (c < n_chunks - 1) / after step k of the chunk.
  auto bound_at = [&](int64_t c, int j) { return ((b * n_bound + c) * kNPT + j) * ep + gx; };
  auto chunk_at = [&](int64_t k, int j) { return ((b * K + k) * kNPT + j) * ep + gx; };

  T a[kNPT], h[kNPT];
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    a[j] = s.active && n < N ? p.A[d * N + n] : T(0);
    h[j] = T(0);
  }
  const T bias = s.active && p.bias ? p.bias[d] : T(0);
  const T Dd = s.active ? p.D[d] : T(0);

  // Pass 1: states after chunks 0 .. n_chunks - 2 (all of full length K).
  for (int64_t c = 0; c < n_bound; ++c) {
    const int64_t ts = c * K;
    __syncthreads();
    LoadTile<kNPad>(p.Bm, p.Cm, b, L, N, ts, static_cast<int>(K), sB, static_cast<T*>(nullptr));
    __syncthreads();
    for (int tt = 0; tt < K; ++tt) {
      const int64_t i = (b * L + ts + tt) * E + d;
      T x = T(0), dt = T(0);
      if (s.active) {
        x = p.u[i];
        dt = TimeStep(p.delta[i] + bias, p.softplus);
      }
      const T dtx = dt * x;
#pragma unroll
      for (int j = 0; j < kNPT; ++j)
        h[j] = StepState(h[j], dt, ScaleA(a[j]), dtx, sB[tt * kNPad + j * kP + q]);
    }
#pragma unroll
    for (int j = 0; j < kNPT; ++j) p.hbound[bound_at(c, j)] = h[j];
  }

  // Pass 2: chunks last to first.
  T carry[kNPT], da[kNPT];  // exp(dt[t+1] A) g[t+1] flowing into step t; this (b, d)'s dA over t
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    carry[j] = s.active && n < N ? p.dlast[(b * E + d) * N + n] : T(0);
    da[j] = T(0);
  }
  T dD_acc = T(0), dbias_acc = T(0);
  for (int64_t c = n_chunks - 1; c >= 0; --c) {
    const int64_t ts = c * K;
    const int len = static_cast<int>(min(K, L - ts));
    __syncthreads();
    LoadTile<kNPad>(p.Bm, p.Cm, b, L, N, ts, len, sB, sC);
    __syncthreads();
    // Recompute the chunk's states from its start state, keeping each in hchunk.
#pragma unroll
    for (int j = 0; j < kNPT; ++j) h[j] = c > 0 ? p.hbound[bound_at(c - 1, j)] : T(0);
    for (int tt = 0; tt < len; ++tt) {
      const int64_t i = (b * L + ts + tt) * E + d;
      T x = T(0), dt = T(0);
      if (s.active) {
        x = p.u[i];
        dt = TimeStep(p.delta[i] + bias, p.softplus);
      }
      const T dtx = dt * x;
#pragma unroll
      for (int j = 0; j < kNPT; ++j) {
        h[j] = StepState(h[j], dt, ScaleA(a[j]), dtx, sB[tt * kNPad + j * kP + q]);
        p.hchunk[chunk_at(tt, j)] = h[j];
      }
    }
    // Adjoint reverse scan; h holds h[t], hp gets h[t-1].
    for (int tt = len - 1; tt >= 0; --tt) {
      const int64_t t = ts + tt, i = (b * L + t) * E + d;
      T x = T(0), raw = T(0), dt = T(0), dyv = T(0), zz = T(0);
      if (s.active) {
        x = p.u[i];
        raw = p.delta[i] + bias;
        dt = TimeStep(raw, p.softplus);
        dyv = p.dy[i];
        if (p.z) zz = p.z[i];
      }
      const T dtx = dt * x;
      const T gy = p.z ? dyv * (zz * Sigmoid(zz)) : dyv;  // dL/d(pre-gate y)
      T hp[kNPT];
#pragma unroll
      for (int j = 0; j < kNPT; ++j) {
        hp[j] = tt > 0 ? p.hchunk[chunk_at(tt - 1, j)] : (c > 0 ? p.hbound[bound_at(c - 1, j)] : T(0));
      }
      T v[kV];
      T sgb = T(0), sga = T(0), ypre = T(0);  // Σ_n g B, Σ_n g A exp(dt A) h[t-1], Σ_n C h
#pragma unroll
      for (int j = 0; j < kNPT; ++j) {
        const int o = tt * kNPad + j * kP + q;
        const T e = Decay(dt, ScaleA(a[j]));
        const T g = Fma(sC[o], gy, carry[j]);
        v[j] = g * dtx;           // dB term: g·dt·u
        v[kNPT + j] = gy * h[j];  // dC term: gy·h
        sgb = Fma(g, sB[o], sgb);
        const T wv = g * e * hp[j];
        sga = Fma(wv, a[j], sga);
        da[j] = Fma(wv, dt, da[j]);
        ypre = Fma(sC[o], h[j], ypre);
        carry[j] = e * g;
        h[j] = hp[j];
      }
      sgb = SumLanes<kP>(sgb);
      sga = SumLanes<kP>(sga);
      if (p.z) ypre = SumLanes<kP>(ypre);
      if (s.active && q == 0) {
        p.du[i] = Dd * gy + dt * sgb;
        const T dd = (x * sgb + sga) * TimeStepGrad(raw, p.softplus);
        p.ddelta[i] = dd;
        dD_acc += gy * x;
        dbias_acc += dd;
        if (p.z) {  // dz = dy · (Σ C h + D u) · silu'(z), silu'(z) = σ(z)(1 + z(1 − σ(z)))
          const T sg = Sigmoid(zz);
          p.dz[i] = dyv * (ypre + Dd * x) * sg * (T(1) + zz * (T(1) - sg));
        }
      }
      // dB/dC terms summed over the warp's channels, then one partial per (b, warp, t).
      int base = 0;
      bool writer = true;
      ReduceChannels<kV, 16, kP>(v, lane, base, writer);
      if (writer) {
#pragma unroll
        for (int k = 0; k < kCnt; ++k) {
          const int idx = base + k;
          const int which = idx >= kNPT ? 1 : 0;  // 0: dB, 1: dC
          const int64_t n = static_cast<int64_t>(idx - which * kNPT) * kP + q;
          if (n < N) {
            if (p.atomic_bc) {
              atomicAdd((which ? p.dC : p.dB) + (b * L + t) * N + n, v[k]);
            } else {
              p.part_bc[(((b * p.W + w) * L + t) * 2 + which) * N + n] = v[k];
            }
          }
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    if (s.active && n < N) p.part_a[(b * E + d) * N + n] = da[j];
  }
  if (s.active && q == 0) {
    p.part_d[b * E + d] = dD_acc;
    if (p.part_bias) p.part_bias[b * E + d] = dbias_acc;
  }
}

// dB[b, t, n] = Σ_w part[b, w, t, 0, n], dC likewise with index 1; w in increasing order.
template <typename T>
__global__ void ReduceBcKernel(const T* part, int64_t B, int64_t W, int64_t L, int64_t N, T* dB, T* dC) {
  const int64_t total = B * L * 2 * N, stride = L * 2 * N;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i % N, r = i / N, which = r % 2, bt = r / 2, b = bt / L, t = bt % L;
    const T* src = part + ((b * W * L + t) * 2 + which) * N + n;
    T sum = T(0);
    for (int64_t w = 0; w < W; ++w) sum += src[w * stride];
    (which ? dC : dB)[bt * N + n] = sum;
  }
}

// out[i] = Σ_b part[b, i] over b in increasing order; part: (B, M).
template <typename T>
__global__ void ReduceBatchKernel(const T* part, int64_t B, int64_t M, T* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < M;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T sum = T(0);
    for (int64_t b = 0; b < B; ++b) sum += part[b * M + i];
    out[i] = sum;
  }
}

// ---- Host side ----

struct Config {
  int npt, p;  // states per lane, lanes per channel
};

Config ChooseConfig(const SelectiveScanShape& s) {
  if (s.N > 16) {
    int p = 2;
    while (16 * p < s.N) p *= 2;
    return {16, p};
  }
  if (s.N <= 4) return {4, 1};
  if (s.B * s.E >= kManyChannels) return {s.N <= 8 ? 8 : 16, 1};
  return {4, s.N <= 8 ? 2 : 4};
}

// Every (kNPT, kP) instantiated; ChooseConfig returns only these.
#define MIMETIC_SELECTIVE_SCAN_CONFIGS(X) \
  X(4, 1) X(8, 1) X(16, 1) X(4, 2) X(4, 4) X(16, 2) X(16, 4) X(16, 8) X(16, 16)

constexpr size_t kAlign = 256;
size_t AlignUp(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Launch geometry and scratch layout of the backward (offsets in bytes into one scratch block).
struct Plan {
  Config config;
  int64_t nbx, ep, W, K, n_chunks;
  size_t hbound, hchunk, part_bc, part_a, part_d, part_bias, total;
};

Plan MakePlan(const SelectiveScanShape& s, size_t elem) {
  Plan pl;
  pl.config = ChooseConfig(s);
  const int64_t channels_per_block = kThreads / pl.config.p;
  pl.nbx = (s.E + channels_per_block - 1) / channels_per_block;
  pl.ep = pl.nbx * kThreads;
  pl.W = pl.ep / 32;
  const int64_t tile = TileSteps(pl.config.npt * pl.config.p);
  pl.K = std::max<int64_t>(1, std::min<int64_t>({s.chunk_size, tile, s.L}));
  pl.n_chunks = (s.L + pl.K - 1) / pl.K;
  const int64_t npt = pl.config.npt;
  size_t off = 0;
  auto take = [&off, elem](int64_t elems) {
    const size_t at = off;
    off += AlignUp(static_cast<size_t>(std::max<int64_t>(elems, 0)) * elem);
    return at;
  };
  pl.hbound = take(s.B * std::max<int64_t>(pl.n_chunks - 1, 0) * npt * pl.ep);
  pl.hchunk = take(s.L > 0 ? s.B * pl.K * npt * pl.ep : 0);
  pl.part_bc = take(s.B * pl.W * s.L * 2 * s.N);
  pl.part_a = take(s.B * s.E * s.N);
  pl.part_d = take(s.B * s.E);
  pl.part_bias = take(s.has_delta_bias ? s.B * s.E : 0);
  pl.total = off;
  return pl;
}

const char* CheckShape(const SelectiveScanShape& s) {
  if (s.B < 0 || s.L < 0 || s.E < 0 || s.N < 0) return "selective_scan: negative dimension";
  if (s.N > kSelectiveScanMaxN) return "selective_scan: N > 256 is not supported by the CUDA kernels";
  if (s.chunk_size < 1) return "selective_scan: chunk_size < 1";
  return nullptr;
}

const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// Grid-stride kernels: enough blocks to cover `n` elements, capped (the loops cover the rest).
unsigned ReduceBlocks(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, int64_t{1} << 16)));
}

template <typename T>
Params<T> MakeParams(const SelectiveScanShape& s, const SelectiveScanInputs<T>& in) {
  Params<T> p{};
  p.B = s.B;
  p.L = s.L;
  p.E = s.E;
  p.N = s.N;
  p.softplus = s.delta_softplus;
  p.u = in.u;
  p.delta = in.delta;
  p.A = in.A;
  p.Bm = in.Bm;
  p.Cm = in.Cm;
  p.D = in.D;
  p.z = s.has_z ? in.z : nullptr;
  p.bias = s.has_delta_bias ? in.delta_bias : nullptr;
  return p;
}

template <typename T>
const char* Forward(const SelectiveScanShape& s, const SelectiveScanInputs<T>& in, T* y, T* last,
                    void* stream_ptr) {
  if (const char* e = CheckShape(s)) return e;
  if (s.B == 0 || s.E == 0) return nullptr;  // y and last_state are empty
  if (s.has_z && !in.z && s.L > 0) return "selective_scan: has_z without z";
  if (s.has_delta_bias && !in.delta_bias) return "selective_scan: has_delta_bias without delta_bias";
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const Plan pl = MakePlan(s, sizeof(T));
  Params<T> p = MakeParams(s, in);
  p.y = y;
  p.last = last;
  p.nbx = pl.nbx;
  p.ep = pl.ep;
  const int64_t blocks = pl.nbx * s.B;
  if (blocks > 0x7fffffff) return "selective_scan: too many blocks (B·E too large)";
  bool launched = false;
#define MIMETIC_SS_FORWARD(NPT_, P_)                                                       \
  if (!launched && pl.config.npt == NPT_ && pl.config.p == P_) {                           \
    ForwardKernel<T, NPT_, P_><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p); \
    launched = true;                                                                       \
  }
  MIMETIC_SELECTIVE_SCAN_CONFIGS(MIMETIC_SS_FORWARD)
#undef MIMETIC_SS_FORWARD
  if (!launched) return "selective_scan: no kernel for this state size";
  return LastError();
}

template <typename T>
const char* Backward(const SelectiveScanShape& s, const SelectiveScanInputs<T>& in, const T* dy,
                     const T* dlast, const SelectiveScanGradients<T>& out, void* scratch,
                     size_t scratch_bytes, void* stream_ptr, bool deterministic) {
  if (const char* e = CheckShape(s)) return e;
  // Null pointers are fine for empty tensors.
  if (s.has_z && (!in.z || !out.dz) && s.B * s.L * s.E > 0) {
    return "selective_scan_backward: has_z without z or dz";
  }
  if (s.has_delta_bias && (!in.delta_bias || !out.ddelta_bias) && s.E > 0) {
    return "selective_scan_backward: has_delta_bias without delta_bias or ddelta_bias";
  }
  const Plan pl = MakePlan(s, sizeof(T));
  if (scratch_bytes < pl.total || (pl.total > 0 && !scratch)) {
    return "selective_scan_backward: scratch smaller than SelectiveScanBackwardScratchBytes";
  }
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  char* base = static_cast<char*>(scratch);
  Params<T> p = MakeParams(s, in);
  p.dy = dy;
  p.dlast = dlast;
  p.du = out.du;
  p.ddelta = out.ddelta;
  p.dz = s.has_z ? out.dz : nullptr;
  p.dB = out.dB;
  p.dC = out.dC;
  p.atomic_bc = !deterministic;
  p.nbx = pl.nbx;
  p.ep = pl.ep;
  p.W = pl.W;
  p.K = pl.K;
  p.n_chunks = pl.n_chunks;
  p.hbound = reinterpret_cast<T*>(base + pl.hbound);
  p.hchunk = reinterpret_cast<T*>(base + pl.hchunk);
  p.part_bc = reinterpret_cast<T*>(base + pl.part_bc);
  p.part_a = reinterpret_cast<T*>(base + pl.part_a);
  p.part_d = reinterpret_cast<T*>(base + pl.part_d);
  p.part_bias = s.has_delta_bias ? reinterpret_cast<T*>(base + pl.part_bias) : nullptr;

  const int64_t bln = s.B * s.L * s.N;
  if (p.atomic_bc && bln > 0) {
    cudaError_t e = cudaMemsetAsync(out.dB, 0, bln * sizeof(T), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(out.dC, 0, bln * sizeof(T), stream);
    if (e != cudaSuccess) return cudaGetErrorString(e);
  }
  const int64_t blocks = pl.nbx * s.B;
  if (blocks > 0x7fffffff) return "selective_scan_backward: too many blocks (B·E too large)";
  if (blocks > 0) {
    bool launched = false;
#define MIMETIC_SS_BACKWARD(NPT_, P_)                                                       \
  if (!launched && pl.config.npt == NPT_ && pl.config.p == P_) {                            \
    BackwardKernel<T, NPT_, P_><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p); \
    launched = true;                                                                        \
  }
    MIMETIC_SELECTIVE_SCAN_CONFIGS(MIMETIC_SS_BACKWARD)
#undef MIMETIC_SS_BACKWARD
    if (!launched) return "selective_scan_backward: no kernel for this state size";
    if (const char* e = LastError()) return e;
  }
  if (!p.atomic_bc && bln > 0) {
    ReduceBcKernel<T>
        <<<ReduceBlocks(2 * bln), 256, 0, stream>>>(p.part_bc, s.B, pl.W, s.L, s.N, out.dB, out.dC);
    if (const char* e = LastError()) return e;
  }
  if (s.E * s.N > 0) {
    ReduceBatchKernel<T><<<ReduceBlocks(s.E * s.N), 256, 0, stream>>>(p.part_a, s.B, s.E * s.N, out.dA);
    if (const char* e = LastError()) return e;
  }
  if (s.E > 0) {
    ReduceBatchKernel<T><<<ReduceBlocks(s.E), 256, 0, stream>>>(p.part_d, s.B, s.E, out.dD);
    if (const char* e = LastError()) return e;
    if (s.has_delta_bias) {
      ReduceBatchKernel<T><<<ReduceBlocks(s.E), 256, 0, stream>>>(p.part_bias, s.B, s.E, out.ddelta_bias);
      if (const char* e = LastError()) return e;
    }
  }
  return nullptr;
}

}  // namespace

const char* LaunchSelectiveScanForward(const SelectiveScanShape& s, const SelectiveScanInputs<float>& in,
                                       float* y, float* last_state, void* stream) {
  return Forward<float>(s, in, y, last_state, stream);
}
const char* LaunchSelectiveScanForward(const SelectiveScanShape& s, const SelectiveScanInputs<double>& in,
                                       double* y, double* last_state, void* stream) {
  return Forward<double>(s, in, y, last_state, stream);
}

size_t SelectiveScanBackwardScratchBytes(const SelectiveScanShape& s, size_t elem_bytes) {
  if (CheckShape(s) != nullptr) return 0;
  return MakePlan(s, elem_bytes).total;
}

const char* LaunchSelectiveScanBackward(const SelectiveScanShape& s, const SelectiveScanInputs<float>& in,
                                        const float* dy, const float* dlast_state,
                                        const SelectiveScanGradients<float>& grads, void* scratch,
                                        size_t scratch_bytes, void* stream, bool deterministic) {
  return Backward<float>(s, in, dy, dlast_state, grads, scratch, scratch_bytes, stream, deterministic);
}
const char* LaunchSelectiveScanBackward(const SelectiveScanShape& s, const SelectiveScanInputs<double>& in,
                                        const double* dy, const double* dlast_state,
                                        const SelectiveScanGradients<double>& grads, void* scratch,
                                        size_t scratch_bytes, void* stream, bool deterministic) {
  return Backward<double>(s, in, dy, dlast_state, grads, scratch, scratch_bytes, stream, deterministic);
}

}  // namespace mimetic::ops::cuda
