// CUDA SSD backward (SsdBackwardOp): recomputes the chunk states with kernels 1-4 of ssd_device.cuh,
// then kernels 6-13 below. The algorithm and the kernel list: ssd_device.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/ssd/ssd_device.cuh"
#include "mimetic/ops/ssd/ssd_kernels.h"

namespace mimetic::ops {
namespace {

// ---------------------------------------------------------------------------------------------------
// Backward.

// 6. G_c[p,n] = Σ_l e^{acum[l]} dy[l,p] C[l,n] per (b, c, h) -> dstates (B, H, nc, P, N).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkDstatesKernel(Dims d, const T* __restrict__ dy, const T* __restrict__ cm,
                       const T* __restrict__ eacum, T* __restrict__ dstates) {
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
    const T* dys = dy + d.XRow(b, t0, h) + p0;
    const T* cs = cm + d.BRow(b, t0, g) + n0;
    const T* ea = eacum + d.Pos(b, h, t0);
    T acc[kMicro][kMicro];
    ZeroAcc(acc);
    GemmAccumulate<false, false>(
        0, q, [&](int m, int64_t l) { return m < pmax ? ea[l] * dys[l * HP + m] : T(0); },
        [&](int64_t l, int n) { return n < nmax ? cs[l * GN + n] : T(0); }, sm, acc);
    T* out = dstates + d.State(b, h, c);
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

// 7. In place per (b, h, p, n), chunks in reverse: G_c -> dS_c, the cotangent of the state leaving
// chunk c. dS_{nc-1} = dlast_state; dS_{c-1} = e^{acum_c[q-1]} dS_c + G_c.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    StatePassBwdKernel(Dims d, const T* __restrict__ eacum, const T* __restrict__ dlast,
                       T* __restrict__ dstates) {
  const int64_t total = d.B * d.H * d.PN;
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t e = i % d.PN, bh = i / d.PN;
    T run = dlast[i];
    for (int64_t c = d.nc - 1; c >= 0; --c) {
      const int64_t off = (bh * d.nc + c) * d.PN + e;
      const T gc = dstates[off];
      dstates[off] = run;
      const T decay = eacum[bh * d.L + c * d.Q + d.ChunkLen(c) - 1];
      run = decay * run + gc;
    }
  }
}

// 8. dacum_last[b, h, c] = <dS_c, state leaving chunk c> (states holds the entering states; the one
// leaving the last chunk is final_state).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    DecayGradKernel(Dims d, const T* __restrict__ states, const T* __restrict__ final_state,
                    const T* __restrict__ dstates, T* __restrict__ dacum_last) {
  __shared__ T red[kThreads];
  const int64_t nblocks = d.B * d.H * d.nc;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    const int64_t c = blk % d.nc, bh = blk / d.nc;
    const T* ds = dstates + blk * d.PN;
    const T* send = c + 1 < d.nc ? states + (blk + 1) * d.PN : final_state + bh * d.PN;
    T s = 0;
    for (int64_t e = threadIdx.x; e < d.PN; e += kThreads) s += ds[e] * send[e];
    s = BlockSum(s, red);
    if (threadIdx.x == 0) dacum_last[blk] = s;
  }
}

// 9. Per (b, c, h, 64 rows s), looping over 64-column tiles of P:
//   dX̃[s,p] = wend[s] Σ_n B[s,n] dS[p,n] + Σ_{l>=s} W[l,s] dy[l,p],  dx = D dy + Δ dX̃,
// and per position (B, H, L): xdx = x·dX̃, ddpos = dy·x, endpart = X̃·dX̃_end (end-state term),
// offpart = dy[l]·(e^{acum[l]} S0 C[l]) (state-to-output term).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkScanBwdDxKernel(Dims d, const T* __restrict__ x, const T* __restrict__ bm, const T* __restrict__ cm,
                         const T* __restrict__ dskip, const T* __restrict__ dy, const T* __restrict__ delta,
                         const T* __restrict__ acum, const T* __restrict__ eacum, const T* __restrict__ cb,
                         const T* __restrict__ states, const T* __restrict__ dstates, T* __restrict__ dx,
                         T* __restrict__ xdx, T* __restrict__ ddpos, T* __restrict__ endpart,
                         T* __restrict__ offpart) {
  __shared__ GemmSmem<T> sm;
  __shared__ ReduceSmem<T> red;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t HP = d.H * d.P, GN = d.G * d.N, nblocks = d.B * d.nc * d.H * d.ntq;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    int64_t r = blk;
    const int64_t st = r % d.ntq;
    r /= d.ntq;
    const int64_t h = r % d.H;
    r /= d.H;
    const int64_t c = r % d.nc, b = r / d.nc, g = h / d.hpg;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), s0 = st * kTile;
    if (s0 >= q) continue;  // block-uniform
    const int64_t smax = q - s0;
    const T* ac = acum + d.Pos(b, h, t0);
    const T* ea = eacum + d.Pos(b, h, t0);
    const T* dl = delta + d.Pos(b, h, t0);
    const T* cbm = cb + d.Square(b, c, g);
    const T* brow = bm + d.BRow(b, t0 + s0, g);
    const T* crow = cm + d.BRow(b, t0 + s0, g);
    const T alast = ac[q - 1], dh = dskip[h];
    // Row sums of this thread's tile row tid (tid < 64), accumulated over the P tiles.
    T sum_end = 0, sum_xdx = 0, sum_dd = 0, sum_off = 0;
    for (int64_t pt = 0; pt < d.ntp; ++pt) {
      const int64_t p0 = pt * kTile, pmax = d.P - p0;
      const T* ds = dstates + d.State(b, h, c) + p0 * d.N;
      const T* dys = dy + d.XRow(b, t0, h) + p0;  // row l: dys[l * HP]
      T acc[kMicro][kMicro], part[kMicro], part2[kMicro];
      ZeroAcc(acc);
      // End-state term: wend[s] Σ_n B[s,n] dS[p,n].
      GemmAccumulate<true, true>(
          0, d.N, [&](int m, int64_t n) { return m < smax ? brow[m * GN + n] : T(0); },
          [&](int64_t n, int p) { return p < pmax ? ds[p * d.N + n] : T(0); }, sm, acc);
#pragma unroll
      for (int i = 0; i < kMicro; ++i) {
        const int64_t s = s0 + ty + 16 * i;
        part[i] = 0;
        if (s < q) {
          const T w = Exp(alast - ac[s]);
          const T* xrow = x + d.XRow(b, t0 + s, h) + p0;
#pragma unroll
          for (int j = 0; j < kMicro; ++j) {
            acc[i][j] *= w;
            const int p = tx + 16 * j;
            if (p < pmax) part[i] += xrow[p] * acc[i][j];
          }
          part[i] *= dl[s];
        }
      }
      sum_end += TileRowSum(part, red);
      // Intra-chunk term: Σ_{l>=s} W[l,s] dy[l,p], l in [s0, q).
      GemmAccumulate<false, false>(
          s0, q,
          [&](int m, int64_t l) {
            const int64_t s = s0 + m;
            return s < q && l >= s ? cbm[l * d.Q + s] * Exp(ac[l] - ac[s]) : T(0);
          },
          [&](int64_t l, int p) { return p < pmax ? dys[l * HP + p] : T(0); }, sm, acc);
#pragma unroll
      for (int i = 0; i < kMicro; ++i) {
        const int64_t s = s0 + ty + 16 * i;
        part[i] = 0;
        part2[i] = 0;
        if (s < q) {
#pragma unroll
          for (int j = 0; j < kMicro; ++j) {
            const int p = tx + 16 * j;
            if (p < pmax) {
              const int64_t off = d.XRow(b, t0 + s, h) + p0 + p;
              const T xv = x[off], dyv = dy[off];
              dx[off] = dh * dyv + dl[s] * acc[i][j];
              part[i] += xv * acc[i][j];
              part2[i] += dyv * xv;
            }
          }
        }
      }
      sum_xdx += TileRowSum(part, red);
      sum_dd += TileRowSum(part2, red);
      // State-to-output term of the rows as outputs l: dy[l]·(e^{acum[l]} Σ_n C[l,n] S0[:,n]).
      if (c > 0) {  // block-uniform; the state entering chunk 0 is zero
        const T* s0m = states + d.State(b, h, c) + p0 * d.N;
        ZeroAcc(acc);
        GemmAccumulate<true, true>(
            0, d.N, [&](int m, int64_t n) { return m < smax ? crow[m * GN + n] : T(0); },
            [&](int64_t n, int p) { return p < pmax ? s0m[p * d.N + n] : T(0); }, sm, acc);
#pragma unroll
        for (int i = 0; i < kMicro; ++i) {
          const int64_t l = s0 + ty + 16 * i;
          part[i] = 0;
          if (l < q) {
#pragma unroll
            for (int j = 0; j < kMicro; ++j) {
              const int p = tx + 16 * j;
              if (p < pmax) part[i] += dys[l * HP + p] * acc[i][j];
            }
            part[i] *= ea[l];
          }
        }
        sum_off += TileRowSum(part, red);
      }
    }
    if (tid < kTile && tid < smax) {
      const int64_t pos = d.Pos(b, h, t0 + s0 + tid);
      xdx[pos] = sum_xdx;
      ddpos[pos] = sum_dd;
      endpart[pos] = sum_end;
      offpart[pos] = sum_off;
    }
  }
}

// 10. Per (b, c, g, l-tile, s-tile <= l-tile), over the group's heads in order:
//   dW_h[l,s] = Σ_p dy_h[l,p] Δ_h[s] x_h[s,p],  E_h = exp(acum_h[l] - acum_h[s]) (s <= l),
//   M_h = dW_h E_h CB: tile row sums -> rowpart[b,h,c][s-tile][l], column sums -> colpart[b,h,c][l-tile][s],
//   dCB_g[l,s] = Σ_h dW_h E_h (zero for s > l) -> dcb (B, nc, G, Q, Q).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkDcbKernel(Dims d, const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ delta,
                   const T* __restrict__ acum, const T* __restrict__ cb, T* __restrict__ dcb,
                   T* __restrict__ rowpart, T* __restrict__ colpart) {
  __shared__ GemmSmem<T> sm;
  __shared__ ReduceSmem<T> red;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t HP = d.H * d.P, nblocks = d.B * d.nc * d.G * d.ntq * d.ntq;
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
    const int64_t lmax = q - l0, smax = q - s0;
    const T* cbm = cb + d.Square(b, c, g);
    T dcb_acc[kMicro][kMicro];
    ZeroAcc(dcb_acc);
    for (int64_t h = g * d.hpg; h < (g + 1) * d.hpg; ++h) {
      const T* dyl = dy + d.XRow(b, t0 + l0, h);  // row l: dyl[l * HP]
      const T* xs = x + d.XRow(b, t0 + s0, h);
      const T* dls = delta + d.Pos(b, h, t0 + s0);
      const T* ac = acum + d.Pos(b, h, t0);
      T acc[kMicro][kMicro], rowp[kMicro], colp[kMicro];
      ZeroAcc(acc);
      GemmAccumulate<true, true>(
          0, d.P, [&](int m, int64_t p) { return m < lmax ? dyl[m * HP + p] : T(0); },
          [&](int64_t p, int n) { return n < smax ? dls[n] * xs[n * HP + p] : T(0); }, sm, acc);
#pragma unroll
      for (int j = 0; j < kMicro; ++j) colp[j] = 0;
#pragma unroll
      for (int i = 0; i < kMicro; ++i) {
        const int64_t l = l0 + ty + 16 * i;
        rowp[i] = 0;
#pragma unroll
        for (int j = 0; j < kMicro; ++j) {
          const int64_t s = s0 + tx + 16 * j;
          if (l < q && s <= l) {  // s <= l < q
            const T dcbv = acc[i][j] * Exp(ac[l] - ac[s]);
            const T m = dcbv * cbm[l * d.Q + s];
            dcb_acc[i][j] += dcbv;
            rowp[i] += m;
            colp[j] += m;
          }
        }
      }
      const T rs = TileRowSum(rowp, red);
      const T cs = TileColSum(colp, red);
      if (tid < kTile) {
        if (tid < lmax) rowpart[d.Part(b, h, c, js) + l0 + tid] = rs;
        if (tid < smax) colpart[d.Part(b, h, c, il) + s0 + tid] = cs;
      }
    }
    T* out = dcb + d.Square(b, c, g);
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t l = l0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t s = s0 + tx + 16 * j;
        if (l < q && s < q) out[l * d.Q + s] = dcb_acc[i][j];
      }
    }
  }
}

// 11a. dB[s,n] = Σ_{h in g, p} dtw_h[s] x_h[s,p] dS_h[p,n] + Σ_{l>=s} dCB_g[l,s] C[l,n] per (b, c, g).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkDbKernel(Dims d, const T* __restrict__ x, const T* __restrict__ cm, const T* __restrict__ dtw,
                  const T* __restrict__ dstates, const T* __restrict__ dcb, T* __restrict__ dbm) {
  __shared__ GemmSmem<T> sm;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t HP = d.H * d.P, GN = d.G * d.N, nblocks = d.B * d.nc * d.G * d.ntq * d.ntn;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    int64_t r = blk;
    const int64_t nt = r % d.ntn;
    r /= d.ntn;
    const int64_t st = r % d.ntq;
    r /= d.ntq;
    const int64_t g = r % d.G;
    r /= d.G;
    const int64_t c = r % d.nc, b = r / d.nc;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), s0 = st * kTile, n0 = nt * kTile;
    if (s0 >= q) continue;  // block-uniform
    const int64_t smax = q - s0, nmax = d.N - n0, h0 = g * d.hpg;
    const T* xs = x + d.XRow(b, t0 + s0, h0);  // k = (h - h0) P + p: row s at xs[s * HP + k]
    T acc[kMicro][kMicro];
    ZeroAcc(acc);
    GemmAccumulate<true, false>(
        0, d.hpg * d.P,
        [&](int m, int64_t k) {
          const int64_t h = h0 + k / d.P;
          return m < smax ? dtw[d.Pos(b, h, t0 + s0 + m)] * xs[m * HP + k] : T(0);
        },
        [&](int64_t k, int n) {
          const int64_t h = h0 + k / d.P, p = k % d.P;
          return n < nmax ? dstates[d.State(b, h, c) + p * d.N + n0 + n] : T(0);
        },
        sm, acc);
    const T* dcbm = dcb + d.Square(b, c, g);
    const T* cs = cm + d.BRow(b, t0, g) + n0;
    GemmAccumulate<false, false>(
        s0, q, [&](int m, int64_t l) { return m < smax ? dcbm[l * d.Q + s0 + m] : T(0); },
        [&](int64_t l, int n) { return n < nmax ? cs[l * GN + n] : T(0); }, sm, acc);
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t s = s0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t n = n0 + tx + 16 * j;
        if (s < q && n < d.N) dbm[d.BRow(b, t0 + s, g) + n] = acc[i][j];
      }
    }
  }
}

// 11b. dC[l,n] = Σ_{h in g, p} e^{acum_h[l]} dy_h[l,p] S0_h[p,n] + Σ_{s<=l} dCB_g[l,s] B[s,n] per (b, c, g).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkDcKernel(Dims d, const T* __restrict__ dy, const T* __restrict__ bm, const T* __restrict__ eacum,
                  const T* __restrict__ states, const T* __restrict__ dcb, T* __restrict__ dcm) {
  __shared__ GemmSmem<T> sm;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t HP = d.H * d.P, GN = d.G * d.N, nblocks = d.B * d.nc * d.G * d.ntq * d.ntn;
  for (int64_t blk = blockIdx.x; blk < nblocks; blk += gridDim.x) {
    int64_t r = blk;
    const int64_t nt = r % d.ntn;
    r /= d.ntn;
    const int64_t lt = r % d.ntq;
    r /= d.ntq;
    const int64_t g = r % d.G;
    r /= d.G;
    const int64_t c = r % d.nc, b = r / d.nc;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), l0 = lt * kTile, n0 = nt * kTile;
    if (l0 >= q) continue;  // block-uniform
    const int64_t lmax = q - l0, nmax = d.N - n0, h0 = g * d.hpg;
    T acc[kMicro][kMicro];
    ZeroAcc(acc);
    if (c > 0) {                                   // the state entering chunk 0 is zero
      const T* dyl = dy + d.XRow(b, t0 + l0, h0);  // k = (h - h0) P + p: row l at dyl[l * HP + k]
      GemmAccumulate<true, false>(
          0, d.hpg * d.P,
          [&](int m, int64_t k) {
            const int64_t h = h0 + k / d.P;
            return m < lmax ? eacum[d.Pos(b, h, t0 + l0 + m)] * dyl[m * HP + k] : T(0);
          },
          [&](int64_t k, int n) {
            const int64_t h = h0 + k / d.P, p = k % d.P;
            return n < nmax ? states[d.State(b, h, c) + p * d.N + n0 + n] : T(0);
          },
          sm, acc);
    }
    const T* dcbm = dcb + d.Square(b, c, g);
    const T* bs = bm + d.BRow(b, t0, g) + n0;
    GemmAccumulate<true, false>(
        0, MinI(q, l0 + kTile), [&](int m, int64_t s) { return m < lmax ? dcbm[(l0 + m) * d.Q + s] : T(0); },
        [&](int64_t s, int n) { return n < nmax ? bs[s * GN + n] : T(0); }, sm, acc);
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t l = l0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t n = n0 + tx + 16 * j;
        if (l < q && n < d.N) dcm[d.BRow(b, t0 + l, g) + n] = acc[i][j];
      }
    }
  }
}

// 12. Per (b, h, c): dacum[l] = offpart - endpart + Σ_s M[l,s] - Σ_{l'} M[l',l] (+ dacum_last at q-1),
// da = reverse cumsum of dacum, dΔ = da A + x·dX̃, ddt = dΔ softplus'(dt + dt_bias); partial sums
// Σ da Δ (for dA) and Σ ddt (for ddt_bias) per (b, h, c).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ChunkDtKernel(Dims d, const T* __restrict__ dt, const T* __restrict__ a, const T* __restrict__ dt_bias,
                  const T* __restrict__ delta, const T* __restrict__ xdx, const T* __restrict__ endpart,
                  const T* __restrict__ offpart, const T* __restrict__ rowpart, const T* __restrict__ colpart,
                  const T* __restrict__ dacum_last, T* __restrict__ ddt, T* __restrict__ part_a,
                  T* __restrict__ part_bias) {
  const int64_t total = d.B * d.H * d.nc;
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t c = i % d.nc, bh = i / d.nc, h = bh % d.H, b = bh / d.H;
    const int64_t t0 = c * d.Q, q = d.ChunkLen(c), ntiles = CeilDiv(q, kTile);
    const T ah = a[h], bias = dt_bias[h];
    const T* rp = rowpart + d.Part(b, h, c, 0);  // [tile][l]
    const T* cp = colpart + d.Part(b, h, c, 0);
    T da_run = 0, sum_a = 0, sum_bias = 0;
    for (int64_t l = q - 1; l >= 0; --l) {
      const int64_t pos = d.Pos(b, h, t0 + l), tile = l / kTile;
      T dac = offpart[pos] - endpart[pos];
      for (int64_t j = 0; j <= tile; ++j) dac += rp[j * d.Q + l];
      for (int64_t k = tile; k < ntiles; ++k) dac -= cp[k * d.Q + l];
      if (l == q - 1) dac += dacum_last[i];
      da_run += dac;
      const int64_t ti = (b * d.L + t0 + l) * d.H + h;
      const T dz = (da_run * ah + xdx[pos]) * SoftplusGrad(dt[ti] + bias);
      ddt[ti] = dz;
      sum_a += da_run * delta[pos];
      sum_bias += dz;
    }
    part_a[i] = sum_a;
    part_bias[i] = sum_bias;
  }
}

// 13. Per head: dA = Σ_{b,c} part_a, ddt_bias = Σ_{b,c} part_bias, dD = Σ_{b,t} ddpos (zeros if empty).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    HeadReduceKernel(Dims d, const T* __restrict__ part_a, const T* __restrict__ part_bias,
                     const T* __restrict__ ddpos, T* __restrict__ da, T* __restrict__ ddt_bias,
                     T* __restrict__ dd) {
  __shared__ T red[kThreads];
  for (int64_t h = blockIdx.x; h < d.H; h += gridDim.x) {
    T sa = 0, sb = 0, sd = 0;
    for (int64_t i = threadIdx.x; i < d.B * d.nc; i += kThreads) {
      const int64_t off = ((i / d.nc) * d.H + h) * d.nc + i % d.nc;
      sa += part_a[off];
      sb += part_bias[off];
    }
    for (int64_t i = threadIdx.x; i < d.B * d.L; i += kThreads) sd += ddpos[d.Pos(i / d.L, h, i % d.L)];
    sa = BlockSum(sa, red);
    sb = BlockSum(sb, red);
    sd = BlockSum(sd, red);
    if (threadIdx.x == 0) {
      da[h] = sa;
      ddt_bias[h] = sb;
      dd[h] = sd;
    }
  }
}


template <typename T>
const char* Backward(const SsdKernelDims& kd, const T* x, const T* dt, const T* a, const T* bm, const T* cm,
                     const T* dskip, const T* dt_bias, const T* dy, const T* dlast, T* dx, T* ddt, T* da,
                     T* dbm, T* dcm, T* dd, T* ddt_bias, void* workspace, void* stream_ptr) {
  const Dims d = MakeDims(kd);
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  Carver<T> carver(workspace);
  const ForwardScratch<T> s(d, carver);
  const BackwardScratch<T> w(d, carver);
  if (const char* e = RecomputeStates<T>(d, x, dt, a, bm, cm, dt_bias, s, w.final_state, stream)) return e;
  const T *delta = s.delta, *acum = s.acum, *eacum = s.eacum, *dtw = s.dtw, *cb = s.cb, *states = s.states;
  SSD_LAUNCH(ChunkDstatesKernel<T>, d.B * d.nc * d.H * d.ntp * d.ntn, stream, d, dy, cm, eacum, w.dstates);
  SSD_LAUNCH(StatePassBwdKernel<T>, ThreadBlocks(d.B * d.H * d.PN), stream, d, eacum, dlast, w.dstates);
  const T *dstates = w.dstates, *final_state = w.final_state;
  SSD_LAUNCH(DecayGradKernel<T>, d.B * d.H * d.nc, stream, d, states, final_state, dstates, w.dacum_last);
  SSD_LAUNCH(ChunkScanBwdDxKernel<T>, d.B * d.nc * d.H * d.ntq, stream, d, x, bm, cm, dskip, dy, delta, acum,
             eacum, cb, states, dstates, dx, w.xdx, w.ddpos, w.endpart, w.offpart);
  SSD_LAUNCH(ChunkDcbKernel<T>, d.B * d.nc * d.G * d.ntq * d.ntq, stream, d, x, dy, delta, acum, cb, w.dcb,
             w.rowpart, w.colpart);
  const T* dcb = w.dcb;
  SSD_LAUNCH(ChunkDbKernel<T>, d.B * d.nc * d.G * d.ntq * d.ntn, stream, d, x, cm, dtw, dstates, dcb, dbm);
  SSD_LAUNCH(ChunkDcKernel<T>, d.B * d.nc * d.G * d.ntq * d.ntn, stream, d, dy, bm, eacum, states, dcb, dcm);
  SSD_LAUNCH(ChunkDtKernel<T>, ThreadBlocks(d.B * d.H * d.nc), stream, d, dt, a, dt_bias, delta,
             static_cast<const T*>(w.xdx), static_cast<const T*>(w.endpart), static_cast<const T*>(w.offpart),
             static_cast<const T*>(w.rowpart), static_cast<const T*>(w.colpart),
             static_cast<const T*>(w.dacum_last), ddt, w.part_a, w.part_bias);
  SSD_LAUNCH(HeadReduceKernel<T>, d.H, stream, d, static_cast<const T*>(w.part_a),
             static_cast<const T*>(w.part_bias), static_cast<const T*>(w.ddpos), da, ddt_bias, dd);
  return nullptr;
}

#undef SSD_LAUNCH

}  // namespace

const char* LaunchSsdBackwardF32(const SsdKernelDims& dims, const float* x, const float* dt, const float* a,
                                 const float* bm, const float* cm, const float* dskip, const float* dt_bias,
                                 const float* dy, const float* dlast_state, float* dx, float* ddt, float* da,
                                 float* dbm, float* dcm, float* dd, float* ddt_bias, void* workspace,
                                 void* stream) {
  return Backward<float>(dims, x, dt, a, bm, cm, dskip, dt_bias, dy, dlast_state, dx, ddt, da, dbm, dcm, dd,
                         ddt_bias, workspace, stream);
}

const char* LaunchSsdBackwardF64(const SsdKernelDims& dims, const double* x, const double* dt,
                                 const double* a, const double* bm, const double* cm, const double* dskip,
                                 const double* dt_bias, const double* dy, const double* dlast_state,
                                 double* dx, double* ddt, double* da, double* dbm, double* dcm, double* dd,
                                 double* ddt_bias, void* workspace, void* stream) {
  return Backward<double>(dims, x, dt, a, bm, cm, dskip, dt_bias, dy, dlast_state, dx, ddt, da, dbm, dcm, dd,
                          ddt_bias, workspace, stream);
}

}  // namespace mimetic::ops
