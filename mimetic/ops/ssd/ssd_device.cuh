// Device code and host helpers shared by the SSD CUDA launchers: ssd.cu (forward, kernels 1-5) and
// ssd_backward.cu (backward, kernels 6-13, which recompute 1-4). Private to those two files: everything
// is in an unnamed namespace, so each includes its own copy. The algorithm:
//
// CUDA SSD (Mamba 2 scan, mamba_ssm: mamba2.py, ssd_minimal.py): the chunked algorithm of ssd_cpu.cc split
// into kernels the way mamba_ssm's Triton pipeline is (ssd_combined.py), in plain FP32 (or FP64) FMA
// arithmetic.
//
// Notation per (batch b, head h, chunk c of q <= Q steps starting at t0), g = h / (H / G):
//   Δ[l] = softplus(dt + dt_bias) (identity above 20), acum[l] = Σ_{k<=l} Δ[k] A[h] (within the chunk),
//   wend[s] = exp(acum[q-1] - acum[s]), X̃[s] = Δ[s] x[s],  CB[l,s] = C[l]·B[s] (per group),
//   W[l,s] = CB[l,s] exp(acum[l] - acum[s]) for s <= l,  S0 = the state entering the chunk.
//
// Forward (5 launches):
//   1 ChunkCumsum   (thread per b, c, h)        Δ, acum, exp(acum), dtw = Δ wend        -> (B, H, L) scratch
//   2 ChunkCb       (block per b, c, g, 64x64)  CB (lower tiles only)                   -> (B, nc, G, Q, Q)
//   3 ChunkState    (block per b, c, h, 64x64)  S_c[p,n] = Σ_s dtw[s] x[s,p] B[s,n]      -> (B, H, nc, P, N)
//   4 StatePass     (thread per b, h, p, n)     in place: S_c -> S0 of chunk c; the final state
//   5 ChunkScan     (block per b, c, h, 64x64)
//        y[l,p] = Σ_n e^{acum[l]} C[l,n] S0[p,n] + Σ_{s<=l} W[l,s] X̃[s,p] + D x[l,p]
// Backward: recomputes 1-4 (only chunk-boundary states are ever stored: O(B H (L/Q) P N), never
// O(B L H P N)), then
//   6 ChunkDstates  (block per b, c, h, 64x64)  G_c[p,n] = Σ_l e^{acum[l]} dy[l,p] C[l,n]
//   7 StatePassBwd  (thread per b, h, p, n)     in place: G_c -> dS_c, the cotangent of the state
//                                               leaving chunk c (dS_{nc-1} = dlast_state;
//                                               dS_{c-1} = e^{acum_c[q-1]} dS_c + G_c)
//   8 DecayGrad     (block per b, h, c)         <dS_c, state leaving c> (the gradient of acum[q-1])
//   9 ChunkScanBwdDx (block per b, c, h, 64 rows, looping over P)
//        dX̃[s,p] = wend[s] Σ_n B[s,n] dS[p,n] + Σ_{l>=s} W[l,s] dy[l,p];  dx = D dy + Δ dX̃;
//        per position: x·dX̃, dy·x, the end-state term X̃·dX̃_end and the state-to-output term
//        dy[l]·(e^{acum[l]} S0 C[l])
//  10 ChunkDcb      (block per b, c, g, 64x64)  per head dW = dy X̃ᵀ, M = dW ∘ W (row and column
//                                               sums per tile), dCB_g = Σ_heads dW ∘ exp(segsum)
//  11 ChunkDb / ChunkDc (block per b, c, g, 64 rows x 64 of N); the sums over the group's heads are
//                                               the K dimension of one GEMM, so no reduction buffer:
//        dB[s,n] = Σ_{h,p} dtw_h[s] x_h[s,p] dS_h[p,n] + Σ_{l>=s} dCB_g[l,s] C[l,n]
//        dC[l,n] = Σ_{h,p} e^{acum_h[l]} dy_h[l,p] S0_h[p,n] + Σ_{s<=l} dCB_g[l,s] B[s,n]
//  12 ChunkDt       (thread per b, h, c)        dacum -> reverse cumsum -> ddt, per-chunk dA and
//                                               ddt_bias partial sums
//  13 HeadReduce    (block per h)               dA, dD, ddt_bias: fixed-order block reductions
//
// Every GEMM is GemmAccumulate: 64x64 output tiles, 256 threads with 4x4 accumulators each, operands
// staged through shared memory 16 k-steps at a time, k summed in increasing order with FMA. The
// FP32 path never uses tensor cores (no TF32), so results stay close to the CPU reference. All
// reductions have a fixed order and there are no atomics: same input, same bits.
#ifndef MIMETIC_OPS_SSD_SSD_DEVICE_CUH_
#define MIMETIC_OPS_SSD_SSD_DEVICE_CUH_

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/softplus.h"
#include "mimetic/ops/ssd/ssd_kernels.h"

namespace mimetic::ops {
namespace {

constexpr int kThreads = 256;                   // every kernel: 16 x 16 threads
constexpr int kTile = 64;                       // GEMM output tile side
constexpr int kStep = 16;                       // k per shared-memory stage
constexpr int kMicro = 4;                       // accumulators per thread and tile side: kTile / 16
constexpr int64_t kMaxGrid = int64_t{1} << 20;  // larger jobs loop (block-stride)

struct Dims {
  int64_t B, L, H, P, G, N, Q;
  int64_t nc;   // chunks
  int64_t hpg;  // heads per group
  int64_t ntq;  // 64-row tiles of a full chunk
  int64_t ntp;  // 64-wide tiles of P
  int64_t ntn;  // 64-wide tiles of N
  int64_t PN;
  // (B, H, L) scratch: per position and head.
  __host__ __device__ int64_t Pos(int64_t b, int64_t h, int64_t t) const { return (b * H + h) * L + t; }
  // (B, H, nc, P, N) chunk states: offset of the (P, N) matrix of (b, h, c).
  __host__ __device__ int64_t State(int64_t b, int64_t h, int64_t c) const {
    return ((b * H + h) * nc + c) * PN;
  }
  // (B, nc, G, Q, Q) per-group chunk matrices (CB, dCB): offset of the (Q, Q) matrix of (b, c, g).
  __host__ __device__ int64_t Square(int64_t b, int64_t c, int64_t g) const {
    return ((b * nc + c) * G + g) * Q * Q;
  }
  // (B, H, nc, ntq, Q) per-tile partial sums.
  __host__ __device__ int64_t Part(int64_t b, int64_t h, int64_t c, int64_t tile) const {
    return (((b * H + h) * nc + c) * ntq + tile) * Q;
  }
  // Offsets into x / dy / y (B, L, H, P) and Bm / Cm (B, L, G, N) rows.
  __host__ __device__ int64_t XRow(int64_t b, int64_t t, int64_t h) const {
    return ((b * L + t) * H + h) * P;
  }
  __host__ __device__ int64_t BRow(int64_t b, int64_t t, int64_t g) const {
    return ((b * L + t) * G + g) * N;
  }
  __host__ __device__ int64_t ChunkLen(int64_t c) const { return L - c * Q < Q ? L - c * Q : Q; }
};

__host__ __device__ inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
__host__ __device__ inline int64_t MinI(int64_t a, int64_t b) { return a < b ? a : b; }

Dims MakeDims(const SsdKernelDims& k) {
  Dims d;
  d.B = k.batch;
  d.L = k.length;
  d.H = k.heads;
  d.P = k.head_dim;
  d.G = k.groups;
  d.N = k.state;
  d.Q = k.chunk_size;
  d.nc = CeilDiv(d.L, d.Q);
  d.hpg = d.H / d.G;
  d.ntq = CeilDiv(d.Q, kTile);
  d.ntp = CeilDiv(d.P, kTile);
  d.ntn = CeilDiv(d.N, kTile);
  d.PN = d.P * d.N;
  return d;
}

__device__ __forceinline__ float Fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double Fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float Exp(float v) { return expf(v); }
__device__ __forceinline__ double Exp(double v) { return exp(v); }
// softplus with PyTorch's threshold (SsdSoftplus in ssd.h) and its derivative (SsdSoftplusGrad).

// ---------------------------------------------------------------------------------------------------
// Block-level building blocks. Each is called by all kThreads threads of a block with block-uniform
// arguments (they contain __syncthreads), and leaves shared memory free for reuse on return.

template <typename T>
struct GemmSmem {
  T a[kStep][kTile + 1];  // a[k][m]
  T b[kStep][kTile + 1];  // b[k][n]
};

// acc[i][j] += Σ_{k0 <= k < k1} fa(m, k) fb(k, n) with m = ty + 16 i, n = tx + 16 j (tile-local, in
// [0, 64)), k increasing. fa / fb return the operand (0 outside the matrix; k is always in range).
// kAContigK / kBContigK: whether consecutive k (else consecutive m / n) are adjacent in global memory;
// chooses the thread-to-element map of the loads so that a warp reads contiguous addresses.
template <bool kAContigK, bool kBContigK, typename T, typename FA, typename FB>
__device__ __forceinline__ void GemmAccumulate(int64_t k0, int64_t k1, const FA& fa, const FB& fb,
                                               GemmSmem<T>& sm, T (&acc)[kMicro][kMicro]) {
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  for (int64_t kb = k0; kb < k1; kb += kStep) {
#pragma unroll
    for (int r = 0; r < kTile * kStep / kThreads; ++r) {
      const int idx = tid + r * kThreads;  // [0, kTile * kStep)
      const int am = kAContigK ? idx / kStep : idx % kTile;
      const int ak = kAContigK ? idx % kStep : idx / kTile;
      sm.a[ak][am] = kb + ak < k1 ? fa(am, kb + ak) : T(0);
      const int bn = kBContigK ? idx / kStep : idx % kTile;
      const int bk = kBContigK ? idx % kStep : idx / kTile;
      sm.b[bk][bn] = kb + bk < k1 ? fb(kb + bk, bn) : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kStep; ++k) {
      T av[kMicro], bv[kMicro];
#pragma unroll
      for (int i = 0; i < kMicro; ++i) av[i] = sm.a[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < kMicro; ++j) bv[j] = sm.b[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < kMicro; ++i) {
#pragma unroll
        for (int j = 0; j < kMicro; ++j) acc[i][j] = Fma(av[i], bv[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
}

template <typename T>
__device__ __forceinline__ void ZeroAcc(T (&acc)[kMicro][kMicro]) {
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
#pragma unroll
    for (int j = 0; j < kMicro; ++j) acc[i][j] = T(0);
  }
}

// Scratch for the tile row / column sums (kTile x (16 + 1) >= 16 x (kTile + 1)).
template <typename T>
struct ReduceSmem {
  T v[kTile * 17];
};

// Tile row r = ty + 16 i: returns Σ over the 16 threads tx = 0..15 of their part[i] (in tx order) to
// thread r (r < 64); other threads get 0.
template <typename T>
__device__ __forceinline__ T TileRowSum(const T (&part)[kMicro], ReduceSmem<T>& red) {
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
#pragma unroll
  for (int i = 0; i < kMicro; ++i) red.v[(ty + 16 * i) * 17 + tx] = part[i];
  __syncthreads();
  T s = 0;
  if (tid < kTile) {
    for (int k = 0; k < 16; ++k) s += red.v[tid * 17 + k];
  }
  __syncthreads();
  return s;
}

// Tile column n = tx + 16 j: returns Σ over the 16 threads ty = 0..15 of their part[j] (in ty order) to
// thread n (n < 64); other threads get 0.
template <typename T>
__device__ __forceinline__ T TileColSum(const T (&part)[kMicro], ReduceSmem<T>& red) {
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
#pragma unroll
  for (int j = 0; j < kMicro; ++j) red.v[ty * (kTile + 1) + tx + 16 * j] = part[j];
  __syncthreads();
  T s = 0;
  if (tid < kTile) {
    for (int k = 0; k < 16; ++k) s += red.v[k * (kTile + 1) + tid];
  }
  __syncthreads();
  return s;
}

// Σ of every thread's v (fixed tree over kThreads), returned to all threads.
template <typename T>
__device__ __forceinline__ T BlockSum(T v, T* red /* [kThreads] */) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  const T total = red[0];
  __syncthreads();
  return total;
}

// ---------------------------------------------------------------------------------------------------
// 1. Δ, acum, exp(acum), dtw = Δ exp(acum[q-1] - acum) per (b, h, position), (B, H, L) layout.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkCumsumKernel(Dims d, const T* __restrict__ dt, const T* __restrict__ a,
                      const T* __restrict__ dt_bias, T* __restrict__ delta, T* __restrict__ acum,
                      T* __restrict__ eacum, T* __restrict__ dtw) {
  const int64_t total = d.B * d.nc * d.H;
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t h = i % d.H, c = (i / d.H) % d.nc, b = i / (d.H * d.nc);  // h fastest: coalesced dt
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), base = d.Pos(b, h, t0);
    const T ah = a[h], bias = dt_bias[h];
    T run = 0;
    for (int64_t l = 0; l < q; ++l) {
      const T dl = Softplus(dt[(b * d.L + t0 + l) * d.H + h] + bias);
      run += dl * ah;
      delta[base + l] = dl;
      acum[base + l] = run;
      eacum[base + l] = Exp(run);
    }
    for (int64_t l = 0; l < q; ++l) dtw[base + l] = delta[base + l] * Exp(run - acum[base + l]);
  }
}

// 2. CB[l,s] = C[l]·B[s] per (b, c, g) for the tiles with s-tile <= l-tile (others are never read).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkCbKernel(Dims d, const T* __restrict__ bm, const T* __restrict__ cm, T* __restrict__ cb) {
  __shared__ GemmSmem<T> sm;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t GN = d.G * d.N, nblocks = d.B * d.nc * d.G * d.ntq * d.ntq;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    int64_t r = blk;
    const int64_t js = r % d.ntq;
    r /= d.ntq;
    const int64_t il = r % d.ntq;
    r /= d.ntq;
    const int64_t g = r % d.G;
    r /= d.G;
    const int64_t c = r % d.nc, b = r / d.nc;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), l0 = il * kTile, s0 = js * kTile;
    if (js > il || l0 >= q) continue;  // block-uniform
    const T* crow = cm + d.BRow(b, t0 + l0, g);
    const T* brow = bm + d.BRow(b, t0 + s0, g);
    const int64_t lmax = q - l0, smax = q - s0;
    T acc[kMicro][kMicro];
    ZeroAcc(acc);
    GemmAccumulate<true, true>(
        0, d.N, [&](int m, int64_t k) { return m < lmax ? crow[m * GN + k] : T(0); },
        [&](int64_t k, int n) { return n < smax ? brow[n * GN + k] : T(0); }, sm, acc);
    T* out = cb + d.Square(b, c, g);
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t l = l0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t s = s0 + tx + 16 * j;
        if (l < q && s < q) out[l * d.Q + s] = acc[i][j];
      }
    }
  }
}

// 3. Chunk-local final states S_c[p,n] = Σ_s dtw[s] x[s,p] B[s,n] per (b, c, h), (B, H, nc, P, N).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkStateKernel(Dims d, const T* __restrict__ x, const T* __restrict__ bm, const T* __restrict__ dtw,
                     T* __restrict__ states) {
  __shared__ GemmSmem<T> sm;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t HP = d.H * d.P, GN = d.G * d.N, nblocks = d.B * d.nc * d.H * d.ntp * d.ntn;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    int64_t r = blk;
    const int64_t nt = r % d.ntn;
    r /= d.ntn;
    const int64_t pt = r % d.ntp;
    r /= d.ntp;
    const int64_t h = r % d.H;
    r /= d.H;
    const int64_t c = r % d.nc, b = r / d.nc, g = h / d.hpg;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), p0 = pt * kTile, n0 = nt * kTile;
    const int64_t pmax = d.P - p0, nmax = d.N - n0;
    const T* xs = x + d.XRow(b, t0, h) + p0;   // row s: xs[s * HP]
    const T* bs = bm + d.BRow(b, t0, g) + n0;  // row s: bs[s * GN]
    const T* ws = dtw + d.Pos(b, h, t0);
    T acc[kMicro][kMicro];
    ZeroAcc(acc);
    GemmAccumulate<false, false>(
        0, q, [&](int m, int64_t s) { return m < pmax ? ws[s] * xs[s * HP + m] : T(0); },
        [&](int64_t s, int n) { return n < nmax ? bs[s * GN + n] : T(0); }, sm, acc);
    T* out = states + d.State(b, h, c);
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t p = p0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t n = n0 + tx + 16 * j;
        if (p < d.P && n < d.N) out[p * d.N + n] = acc[i][j];
      }
    }
  }
}

// 4. In place per (b, h, p, n): S_c -> the state entering chunk c; the state after the last chunk ->
// final (B, H, P, N) (zeros when L == 0).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    StatePassKernel(Dims d, const T* __restrict__ eacum, T* __restrict__ states,
                    T* __restrict__ final_state) {
  const int64_t total = d.B * d.H * d.PN;
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t e = i % d.PN, bh = i / d.PN;
    T run = 0;
    for (int64_t c = 0; c < d.nc; ++c) {
      const int64_t off = (bh * d.nc + c) * d.PN + e;
      const T local = states[off];
      states[off] = run;
      const T decay = eacum[bh * d.L + c * d.Q + d.ChunkLen(c) - 1];
      run = decay * run + local;
    }
    final_state[i] = run;
  }
}

// 5. y[l,p] = Σ_n e^{acum[l]} C[l,n] S0[p,n] + Σ_{s<=l} W[l,s] Δ[s] x[s,p] + D x[l,p] per (b, c, h).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkScanKernel(Dims d, const T* __restrict__ x, const T* __restrict__ cm, const T* __restrict__ dskip,
                    const T* __restrict__ delta, const T* __restrict__ acum, const T* __restrict__ eacum,
                    const T* __restrict__ cb, const T* __restrict__ states, T* __restrict__ y) {
  __shared__ GemmSmem<T> sm;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t HP = d.H * d.P, GN = d.G * d.N, nblocks = d.B * d.nc * d.H * d.ntq * d.ntp;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    int64_t r = blk;
    const int64_t pt = r % d.ntp;
    r /= d.ntp;
    const int64_t lt = r % d.ntq;
    r /= d.ntq;
    const int64_t h = r % d.H;
    r /= d.H;
    const int64_t c = r % d.nc, b = r / d.nc, g = h / d.hpg;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), l0 = lt * kTile, p0 = pt * kTile;
    if (l0 >= q) continue;  // block-uniform
    const int64_t lmax = q - l0, pmax = d.P - p0;
    const T* ac = acum + d.Pos(b, h, t0);
    const T* ea = eacum + d.Pos(b, h, t0);
    const T* dl = delta + d.Pos(b, h, t0);
    T acc[kMicro][kMicro];
    ZeroAcc(acc);
    if (c > 0) {  // state-to-output; the state entering chunk 0 is zero
      const T* crow = cm + d.BRow(b, t0 + l0, g);
      const T* s0 = states + d.State(b, h, c) + p0 * d.N;
      GemmAccumulate<true, true>(
          0, d.N, [&](int m, int64_t n) { return m < lmax ? ea[l0 + m] * crow[m * GN + n] : T(0); },
          [&](int64_t n, int p) { return p < pmax ? s0[p * d.N + n] : T(0); }, sm, acc);
    }
    // Intra-chunk: s < min(q, l0 + 64); W is zero above the diagonal.
    const T* cbm = cb + d.Square(b, c, g);
    const T* xs = x + d.XRow(b, t0, h) + p0;
    GemmAccumulate<true, false>(
        0, MinI(q, l0 + kTile),
        [&](int m, int64_t s) {
          const int64_t l = l0 + m;
          return l < q && s <= l ? cbm[l * d.Q + s] * Exp(ac[l] - ac[s]) : T(0);
        },
        [&](int64_t s, int p) { return p < pmax ? dl[s] * xs[s * HP + p] : T(0); }, sm, acc);
    const T dh = dskip[h];
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t l = l0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t p = p0 + tx + 16 * j;
        if (l < q && p < d.P) {
          const int64_t off = d.XRow(b, t0 + l, h) + p;
          y[off] = acc[i][j] + dh * x[off];
        }
      }
    }
  }
}


// ---------------------------------------------------------------------------------------------------
// Host side.

// Launches `kernel` with kThreads threads on `blocks` blocks (capped; kernels loop over the rest).
// Nothing is launched for empty work.
template <typename... KernelArgs, typename... Args>
const char* Launch(void (*kernel)(KernelArgs...), int64_t blocks, cudaStream_t stream, Args... args) {
  if (blocks <= 0) return nullptr;
  const unsigned grid = static_cast<unsigned>(std::min(blocks, kMaxGrid));
  kernel<<<grid, kThreads, 0, stream>>>(args...);
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

int64_t ThreadBlocks(int64_t threads) { return CeilDiv(threads, kThreads); }

// Carves the workspace into 256-byte aligned arrays of T.
template <typename T>
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  T* Take(int64_t count) {
    T* p = reinterpret_cast<T*>(base_ == nullptr ? nullptr : base_ + used_);
    used_ += static_cast<size_t>(CeilDiv(count * static_cast<int64_t>(sizeof(T)), 256) * 256);
    return p;
  }
  size_t used() const { return used_; }

 private:
  char* base_;
  size_t used_ = 0;
};

// Scratch shared by forward and backward (the forward part).
template <typename T>
struct ForwardScratch {
  T *delta, *acum, *eacum, *dtw, *cb, *states;
  ForwardScratch(const Dims& d, Carver<T>& c) {
    const int64_t pos = d.B * d.H * d.L;
    delta = c.Take(pos);
    acum = c.Take(pos);
    eacum = c.Take(pos);
    dtw = c.Take(pos);
    cb = c.Take(d.B * d.nc * d.G * d.Q * d.Q);
    states = c.Take(d.B * d.H * d.nc * d.PN);
  }
};

template <typename T>
struct BackwardScratch {
  T *final_state, *dstates, *dcb, *xdx, *ddpos, *endpart, *offpart, *rowpart, *colpart, *dacum_last, *part_a,
      *part_bias;
  BackwardScratch(const Dims& d, Carver<T>& c) {
    const int64_t pos = d.B * d.H * d.L, chunks = d.B * d.H * d.nc;
    final_state = c.Take(d.B * d.H * d.PN);
    dstates = c.Take(chunks * d.PN);
    dcb = c.Take(d.B * d.nc * d.G * d.Q * d.Q);
    xdx = c.Take(pos);
    ddpos = c.Take(pos);
    endpart = c.Take(pos);
    offpart = c.Take(pos);
    rowpart = c.Take(chunks * d.ntq * d.Q);
    colpart = c.Take(chunks * d.ntq * d.Q);
    dacum_last = c.Take(chunks);
    part_a = c.Take(chunks);
    part_bias = c.Take(chunks);
  }
};

#define SSD_LAUNCH(...)                                \
  do {                                                 \
    if (const char* e = Launch(__VA_ARGS__)) return e; \
  } while (false)

// Kernels 1-4: Δ, cumsums, CB, chunk states -> entering states and the final state.
template <typename T>
const char* RecomputeStates(const Dims& d, const T* x, const T* dt, const T* a, const T* bm, const T* cm,
                            const T* dt_bias, const ForwardScratch<T>& s, T* final_state,
                            cudaStream_t stream) {
  SSD_LAUNCH(ChunkCumsumKernel<T>, ThreadBlocks(d.B * d.nc * d.H), stream, d, dt, a, dt_bias, s.delta, s.acum,
             s.eacum, s.dtw);
  SSD_LAUNCH(ChunkCbKernel<T>, d.B * d.nc * d.G * d.ntq * d.ntq, stream, d, bm, cm, s.cb);
  SSD_LAUNCH(ChunkStateKernel<T>, d.B * d.nc * d.H * d.ntp * d.ntn, stream, d, x, bm,
             static_cast<const T*>(s.dtw), s.states);
  SSD_LAUNCH(StatePassKernel<T>, ThreadBlocks(d.B * d.H * d.PN), stream, d, static_cast<const T*>(s.eacum),
             s.states, final_state);
  return nullptr;
}

template <typename T>
size_t ForwardBytes(const SsdKernelDims& kd) {
  const Dims d = MakeDims(kd);
  Carver<T> c(nullptr);
  ForwardScratch<T> s(d, c);
  return c.used();
}

template <typename T>
size_t BackwardBytes(const SsdKernelDims& kd) {
  const Dims d = MakeDims(kd);
  Carver<T> c(nullptr);
  ForwardScratch<T> s(d, c);
  BackwardScratch<T> bs(d, c);
  return c.used();
}

}  // namespace
}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SSD_SSD_DEVICE_CUH_
