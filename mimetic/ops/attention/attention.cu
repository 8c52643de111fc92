// Causal softmax / linear attention on the GPU: tiled kernels in the style of FlashAttention.
//
// Every kernel runs blocks of 32 x 8 threads on one (b, h) head (blockIdx.x) and one 32-row tile
// (blockIdx.y): warp w owns the tile's rows w, w + 8, w + 16, w + 24, lane x its column x. A
// (32, 32) tile of dot products a_r · b_c is built in registers from 32-wide slices of the head
// dimension staged in shared memory (DotTile); head dimensions of any size are looped over, and
// the (rows, P) accumulators of a block cover one 128-wide slice of P (blockIdx.z), so registers
// stay bounded for wide heads (the paper's P 1024 ablation recomputes the scores per slice).
//
//   forward   per query tile, key tiles 0..diagonal: S = scale Q Kᵀ masked, online softmax
//             (running row max m and sum l, rescaling the output accumulator), O += P V.
//   backward  (softmax) RowStats per query tile: m, 1/l and delta_t = rowsum(W ∘ dW) (with
//             dW = dO Vᵀ, or the given dweights), into scratch; then
//             dQ per query tile: dS = W ∘ (dW - delta) (or dW for linear), dQ = scale dS K;
//             dK, dV per key tile over query tiles diagonal..L: dV = Wᵀ dO, dK = scale dSᵀ Q.
//             Each output row is written by exactly one block: no atomics, deterministic.
//   weights   per query tile: the row statistics (softmax), then every (t, s) of the rows, zeros
//             above the diagonal.
// Masking: key s of query t counts when s <= t and s < L. Padding rows t >= L of the last tile
// see s = 0 (valid), so the running max is finite for every row that is processed.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "mimetic/ops/attention/attention_kernels.h"

namespace mimetic::ops::cuda {
namespace {

constexpr int kTile = 32;                 // rows and columns of a tile; the warp size
constexpr int kWarps = 8;                 // blockDim (32, 8)
constexpr int kRows = kTile / kWarps;     // rows per warp: 4
constexpr int kChunks = 4;                // 32-wide head-dimension chunks a block accumulates
constexpr int kSlice = kTile * kChunks;   // head-dimension slice per block (blockIdx.z): 128
constexpr int kThreads = kTile * kWarps;  // 256
constexpr int64_t kMaxTiles = 65535;      // gridDim.y limit

template <typename T>
using Tile = T[kTile][kTile + 1];  // +1: column reads tile[x][p] hit 32 distinct banks

struct Dims {
  int64_t L, H, Pk, Pv;
};

// Offsets of head bh = b * H + h: first row in a (B, L, H, Pk) / (B, L, H, Pv) tensor, its
// (L, L) map in a (B, H, L, L) tensor, and its L row statistics.
struct HeadOffsets {
  int64_t key, value, map, stat;
};
__device__ HeadOffsets Offsets(const Dims& d, int64_t bh) {
  const int64_t b = bh / d.H, h = bh % d.H;
  return {b * d.L * d.H * d.Pk + h * d.Pk, b * d.L * d.H * d.Pv + h * d.Pv, bh * d.L * d.L, bh * d.L};
}

__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return exp(x); }

template <typename T>
__device__ T NegInf() {
  return -std::numeric_limits<T>::infinity();
}

// Butterfly reductions: every lane ends with the same bits (a + b == b + a in floating point).
template <typename T>
__device__ T WarpMax(T x) {
#pragma unroll
  for (int o = kTile / 2; o > 0; o >>= 1) {
    const T y = __shfl_xor_sync(0xffffffffu, x, o);
    x = y > x ? y : x;
  }
  return x;
}
template <typename T>
__device__ T WarpSum(T x) {
#pragma unroll
  for (int o = kTile / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// dst[r][c] = src[(row0 + r) * ld + col0 + c], 0 outside rows < rows and columns < cols. Coalesced:
// consecutive threads read consecutive columns.
template <typename T>
__device__ void LoadTile(Tile<T>& dst, const T* src, int64_t ld, int64_t row0, int64_t rows, int64_t col0,
                         int64_t cols) {
  const int tid = threadIdx.y * kTile + threadIdx.x;
#pragma unroll
  for (int e = tid; e < kTile * kTile; e += kThreads) {
    const int r = e / kTile, c = e % kTile;
    const int64_t row = row0 + r, col = col0 + c;
    dst[r][c] = (row < rows && col < cols) ? src[row * ld + col] : T(0);
  }
}

// s[i] = a_{a0 + ty + 8i} · b_{b0 + tx}: rows of the (L, P) slices a and b (row strides lda, ldb;
// rows >= L read as 0). Uses (and overwrites) the shared tiles as and bs; starts with a barrier so
// earlier readers of as and bs are done. Every thread of the block must call it.
template <typename T>
__device__ void DotTile(const T* a, int64_t lda, int64_t a0, const T* b, int64_t ldb, int64_t b0, int64_t L,
                        int64_t P, Tile<T>& as, Tile<T>& bs, T (&s)[kRows]) {
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int i = 0; i < kRows; ++i) s[i] = T(0);
  for (int64_t p0 = 0; p0 < P; p0 += kTile) {
    __syncthreads();
    LoadTile(as, a, lda, a0, L, p0, P);
    LoadTile(bs, b, ldb, b0, L, p0, P);
    __syncthreads();
    const int n = P - p0 < kTile ? static_cast<int>(P - p0) : kTile;
    for (int p = 0; p < n; ++p) {
      const T bv = bs[tx][p];
#pragma unroll
      for (int i = 0; i < kRows; ++i) s[i] += as[ty + kWarps * i][p] * bv;
    }
  }
}

// acc[i][c] += sum_r w[ty + 8i][r] x_{row0 + r, j0 + 32c + tx} for the chunks of [j0, j0 + 128)
// below P: the (32, 32) weight tile w (shared, written before the call) times rows row0.. of the
// (L, P) slice x. Uses bs; barriers before each chunk's load protect earlier readers of bs.
template <typename T>
__device__ void AccumulateTile(const Tile<T>& w, const T* x, int64_t ldx, int64_t row0, int64_t L, int64_t j0,
                               int64_t P, Tile<T>& bs, T (&acc)[kRows][kChunks]) {
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int64_t j = j0 + c * kTile;
    if (j >= P) break;  // uniform across the block
    __syncthreads();
    LoadTile(bs, x, ldx, row0, L, j, P);
    __syncthreads();
    for (int r = 0; r < kTile; ++r) {
      const T xv = bs[r][tx];
#pragma unroll
      for (int i = 0; i < kRows; ++i) acc[i][c] += w[ty + kWarps * i][r] * xv;
    }
  }
}

// y[(row0 + ty + 8i) * ldy + j0 + 32c + tx] = alpha acc[i][c] for rows < L and columns < P.
template <typename T>
__device__ void StoreRows(T* y, int64_t ldy, int64_t row0, int64_t L, int64_t j0, int64_t P, T alpha,
                          const T (&acc)[kRows][kChunks]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int64_t row = row0 + threadIdx.y + kWarps * i;
    if (row >= L) continue;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int64_t j = j0 + c * kTile + threadIdx.x;
      if (j < P) y[row * ldy + j] = alpha * acc[i][c];
    }
  }
}

// Online softmax update of one row with this tile's score x (-inf where masked): returns the
// tile's unnormalised probability exp(x - m_new) and rescales by alpha = exp(m_old - m_new).
template <typename T>
__device__ T OnlineSoftmax(T x, bool valid, T& m, T& alpha) {
  const T tile_max = WarpMax(x);
  const T m_new = tile_max > m ? tile_max : m;
  alpha = Exp(m - m_new);  // m = -inf before the first tile: alpha = 0
  m = m_new;
  return valid ? Exp(x - m_new) : T(0);
}

// ---- Forward: grid (B*H, query tiles, value slices).
template <typename T, bool kSoftmax>
__global__ void __launch_bounds__(kThreads)
    ForwardKernel(const T* q, const T* k, const T* v, T* out, Dims d, T scale) {
  __shared__ Tile<T> as, bs, ps;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const HeadOffsets o = Offsets(d, blockIdx.x);
  const int64_t ldk = d.H * d.Pk, ldv = d.H * d.Pv;
  const T *qh = q + o.key, *kh = k + o.key, *vh = v + o.value;
  const int64_t q0 = int64_t(blockIdx.y) * kTile, j0 = int64_t(blockIdx.z) * kSlice;
  const int64_t k_end = q0 + kTile < d.L ? q0 + kTile : d.L;
  T m[kRows], l[kRows], acc[kRows][kChunks];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    m[i] = NegInf<T>();
    l[i] = T(0);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) acc[i][c] = T(0);
  }
  for (int64_t k0 = 0; k0 < k_end; k0 += kTile) {
    T s[kRows];
    DotTile(qh, ldk, q0, kh, ldk, k0, d.L, d.Pk, as, bs, s);
    __syncthreads();  // the previous tile's readers of ps are done (also when Pk == 0)
    const int64_t key = k0 + tx;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t t = q0 + ty + kWarps * i;
      const bool valid = key <= t && key < d.L;
      const T x = scale * s[i];
      if (kSoftmax) {
        T alpha;
        const T p = OnlineSoftmax(valid ? x : NegInf<T>(), valid, m[i], alpha);
        l[i] = l[i] * alpha + WarpSum(p);
#pragma unroll
        for (int c = 0; c < kChunks; ++c) acc[i][c] *= alpha;
        ps[ty + kWarps * i][tx] = p;
      } else {
        ps[ty + kWarps * i][tx] = valid ? x : T(0);
      }
    }
    AccumulateTile(ps, vh, ldv, k0, d.L, j0, d.Pv, bs, acc);
  }
  if (kSoftmax) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const T inv = T(1) / l[i];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) acc[i][c] *= inv;
    }
  }
  StoreRows(out + o.value, ldv, q0, d.L, j0, d.Pv, T(1), acc);
}

// dp[i] = dW[t, s] for the block's rows t and lane's key s (0 where masked): dout_t · v_s, or the
// given dweights. Every thread must call it (DotTile has barriers).
template <typename T, bool kFromWeights>
__device__ void ScoreGradTile(const T* douth, const T* vh, const T* dwh, const Dims& d, int64_t q0,
                              int64_t k0, Tile<T>& as, Tile<T>& bs, T (&dp)[kRows]) {
  if (!kFromWeights) {
    DotTile(douth, d.H * d.Pv, q0, vh, d.H * d.Pv, k0, d.L, d.Pv, as, bs, dp);
  } else {
    const int64_t key = k0 + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t t = q0 + threadIdx.y + kWarps * i;
      dp[i] = (key <= t && t < d.L) ? dwh[t * d.L + key] : T(0);
    }
  }
}

// ---- Softmax row statistics for the backward passes: grid (B*H, query tiles).
// row_max[t], inv_sum[t] (so w_ts = exp(scale q_t·k_s - row_max) inv_sum) and delta[t] = sum_s w_ts dW_ts.
template <typename T, bool kFromWeights>
__global__ void __launch_bounds__(kThreads)
    RowStatsKernel(const T* q, const T* k, const T* v, const T* dout, const T* dweights, T* row_max,
                   T* inv_sum, T* delta, Dims d, T scale) {
  __shared__ Tile<T> as, bs;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const HeadOffsets o = Offsets(d, blockIdx.x);
  const int64_t ldk = d.H * d.Pk;
  const int64_t q0 = int64_t(blockIdx.y) * kTile;
  const int64_t k_end = q0 + kTile < d.L ? q0 + kTile : d.L;
  T m[kRows], l[kRows], dot[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    m[i] = NegInf<T>();
    l[i] = dot[i] = T(0);
  }
  for (int64_t k0 = 0; k0 < k_end; k0 += kTile) {
    T s[kRows], dp[kRows];
    DotTile(q + o.key, ldk, q0, k + o.key, ldk, k0, d.L, d.Pk, as, bs, s);
    ScoreGradTile<T, kFromWeights>(kFromWeights ? nullptr : dout + o.value,
                                   kFromWeights ? nullptr : v + o.value,
                                   kFromWeights ? dweights + o.map : nullptr, d, q0, k0, as, bs, dp);
    const int64_t key = k0 + tx;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t t = q0 + ty + kWarps * i;
      const bool valid = key <= t && key < d.L;
      T alpha;
      const T p = OnlineSoftmax(valid ? scale * s[i] : NegInf<T>(), valid, m[i], alpha);
      l[i] = l[i] * alpha + WarpSum(p);
      dot[i] = dot[i] * alpha + WarpSum(valid ? p * dp[i] : T(0));
    }
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int64_t t = q0 + ty + kWarps * i;
    if (tx == 0 && t < d.L) {
      row_max[o.stat + t] = m[i];
      inv_sum[o.stat + t] = T(1) / l[i];
      delta[o.stat + t] = dot[i] / l[i];
    }
  }
}

// ---- dQ: grid (B*H, query tiles, key-dimension slices). dq_t = scale sum_{s<=t} dS_ts k_s with
// dS = W ∘ (dW - delta) (softmax) or dW (linear).
template <typename T, bool kSoftmax, bool kFromWeights>
__global__ void __launch_bounds__(kThreads)
    DqKernel(const T* q, const T* k, const T* v, const T* dout, const T* dweights, const T* row_max,
             const T* inv_sum, const T* delta, T* dq, Dims d, T scale) {
  __shared__ Tile<T> as, bs, ds;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const HeadOffsets o = Offsets(d, blockIdx.x);
  const int64_t ldk = d.H * d.Pk;
  const T *qh = q + o.key, *kh = k + o.key;
  const int64_t q0 = int64_t(blockIdx.y) * kTile, j0 = int64_t(blockIdx.z) * kSlice;
  const int64_t k_end = q0 + kTile < d.L ? q0 + kTile : d.L;
  T rm[kRows], rinv[kRows], rdelta[kRows], acc[kRows][kChunks];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int64_t t = q0 + ty + kWarps * i;
    const bool in_range = kSoftmax && t < d.L;
    rm[i] = in_range ? row_max[o.stat + t] : T(0);
    rinv[i] = in_range ? inv_sum[o.stat + t] : T(0);
    rdelta[i] = in_range ? delta[o.stat + t] : T(0);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) acc[i][c] = T(0);
  }
  for (int64_t k0 = 0; k0 < k_end; k0 += kTile) {
    T s[kRows], dp[kRows];
    if (kSoftmax) DotTile(qh, ldk, q0, kh, ldk, k0, d.L, d.Pk, as, bs, s);
    ScoreGradTile<T, kFromWeights>(kFromWeights ? nullptr : dout + o.value,
                                   kFromWeights ? nullptr : v + o.value,
                                   kFromWeights ? dweights + o.map : nullptr, d, q0, k0, as, bs, dp);
    __syncthreads();  // the previous tile's readers of ds are done
    const int64_t key = k0 + tx;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t t = q0 + ty + kWarps * i;
      const bool valid = key <= t && key < d.L;
      T g = T(0);
      if (valid) g = kSoftmax ? Exp(scale * s[i] - rm[i]) * rinv[i] * (dp[i] - rdelta[i]) : dp[i];
      ds[ty + kWarps * i][tx] = g;
    }
    AccumulateTile(ds, kh, ldk, k0, d.L, j0, d.Pk, bs, acc);
  }
  StoreRows(dq + o.key, ldk, q0, d.L, j0, d.Pk, scale, acc);
}

// ---- dK and dV: grid (B*H, key tiles, slices of max(Pk, Pv)). Warps own keys c, lanes queries t:
// dv_c = sum_{t>=c} w_tc dout_t, dk_c = scale sum_{t>=c} dS_tc q_t. dV only when kHasV.
template <typename T, bool kSoftmax, bool kFromWeights>
__global__ void __launch_bounds__(kThreads)
    DkDvKernel(const T* q, const T* k, const T* v, const T* dout, const T* dweights, const T* row_max,
               const T* inv_sum, const T* delta, T* dk, T* dv, Dims d, T scale) {
  constexpr bool kHasV = !kFromWeights;
  __shared__ Tile<T> as, bs, ps, ds;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const HeadOffsets o = Offsets(d, blockIdx.x);
  const int64_t ldk = d.H * d.Pk, ldv = d.H * d.Pv;
  const T *qh = q + o.key, *kh = k + o.key;
  const T* vh = kHasV ? v + o.value : nullptr;
  const T* douth = kHasV ? dout + o.value : nullptr;
  const int64_t k0 = int64_t(blockIdx.y) * kTile, j0 = int64_t(blockIdx.z) * kSlice;
  const bool do_k = j0 < d.Pk, do_v = kHasV && j0 < d.Pv;  // uniform across the block
  const bool need_w = kSoftmax || do_v;                    // linear dK needs only dW
  T acc_k[kRows][kChunks], acc_v[kRows][kChunks];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) acc_k[i][c] = acc_v[i][c] = T(0);
  }
  for (int64_t q0 = k0; q0 < d.L; q0 += kTile) {
    const int64_t t = q0 + tx;  // this lane's query
    T s[kRows], dp[kRows];
    if (need_w) DotTile(kh, ldk, k0, qh, ldk, q0, d.L, d.Pk, as, bs, s);  // k_c · q_t
    if (do_k) {
      if (kHasV) {
        DotTile(vh, ldv, k0, douth, ldv, q0, d.L, d.Pv, as, bs, dp);  // v_c · dout_t
      } else {
        __syncthreads();
        LoadTile(bs, dweights + o.map, d.L, q0, d.L, k0, d.L);  // bs[t - q0][c - k0], coalesced over c
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kRows; ++i) dp[i] = bs[tx][ty + kWarps * i];
      }
    }
    T tm = T(0), tinv = T(0), tdelta = T(0);
    if (kSoftmax && t < d.L) {
      tm = row_max[o.stat + t];
      tinv = inv_sum[o.stat + t];
      tdelta = delta[o.stat + t];
    }
    __syncthreads();  // the previous tile's readers of ps, ds (and of bs above) are done
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t c = k0 + ty + kWarps * i;
      const bool valid = c <= t && t < d.L;
      T w = T(0), g = T(0);
      if (valid) {
        if (need_w) w = kSoftmax ? Exp(scale * s[i] - tm) * tinv : scale * s[i];
        if (do_k) g = kSoftmax ? w * (dp[i] - tdelta) : dp[i];
      }
      ps[ty + kWarps * i][tx] = w;
      ds[ty + kWarps * i][tx] = g;
    }
    if (do_v) AccumulateTile(ps, douth, ldv, q0, d.L, j0, d.Pv, bs, acc_v);
    if (do_k) AccumulateTile(ds, qh, ldk, q0, d.L, j0, d.Pk, bs, acc_k);
  }
  if (do_k) StoreRows(dk + o.key, ldk, k0, d.L, j0, d.Pk, scale, acc_k);
  if (do_v) StoreRows(dv + o.value, ldv, k0, d.L, j0, d.Pv, T(1), acc_v);
}

// ---- Weights: grid (B*H, query tiles). Rows q0..q0+31 of the (L, L) map, every column.
template <typename T, bool kSoftmax>
__global__ void __launch_bounds__(kThreads)
    WeightsKernel(const T* q, const T* k, T* weights, Dims d, T scale) {
  __shared__ Tile<T> as, bs;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const HeadOffsets o = Offsets(d, blockIdx.x);
  const int64_t ldk = d.H * d.Pk;
  const T *qh = q + o.key, *kh = k + o.key;
  T* wh = weights + o.map;
  const int64_t q0 = int64_t(blockIdx.y) * kTile;
  const int64_t k_end = q0 + kTile < d.L ? q0 + kTile : d.L;
  T m[kRows], inv[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    m[i] = NegInf<T>();
    inv[i] = T(0);
  }
  if (kSoftmax) {  // pass 1: row max and sum
    for (int64_t k0 = 0; k0 < k_end; k0 += kTile) {
      T s[kRows];
      DotTile(qh, ldk, q0, kh, ldk, k0, d.L, d.Pk, as, bs, s);
      const int64_t key = k0 + tx;
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const int64_t t = q0 + ty + kWarps * i;
        const bool valid = key <= t && key < d.L;
        T alpha;
        const T p = OnlineSoftmax(valid ? scale * s[i] : NegInf<T>(), valid, m[i], alpha);
        inv[i] = inv[i] * alpha + WarpSum(p);  // the running sum until the loop ends
      }
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) inv[i] = T(1) / inv[i];
  }
  for (int64_t k0 = 0; k0 < d.L; k0 += kTile) {  // pass 2: the values, zeros above the diagonal
    T s[kRows];
    const bool compute = k0 < k_end;  // uniform across the block
    if (compute) DotTile(qh, ldk, q0, kh, ldk, k0, d.L, d.Pk, as, bs, s);
    const int64_t key = k0 + tx;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t t = q0 + ty + kWarps * i;
      if (t >= d.L || key >= d.L) continue;
      T w = T(0);
      if (compute && key <= t) w = kSoftmax ? Exp(scale * s[i] - m[i]) * inv[i] : scale * s[i];
      wh[t * d.L + key] = w;
    }
  }
}

const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
unsigned Dim(int64_t n) { return static_cast<unsigned>(n); }  // after CheckSizes

// The launch geometry shared by every kernel; nullptr or why these sizes cannot run.
const char* CheckSizes(int64_t B, int64_t L, int64_t H) {
  if (CeilDiv(L, kTile) > kMaxTiles) return "causal attention on CUDA: L exceeds 65535 * 32";
  if (B * H > int64_t{0x7fffffff}) return "causal attention on CUDA: B * H exceeds 2^31 - 1";
  return nullptr;
}

template <typename T>
const char* Forward(bool softmax, T scale, const T* q, const T* k, const T* v, T* out, int64_t B, int64_t L,
                    int64_t H, int64_t Pk, int64_t Pv, void* stream) {
  if (B * H * L == 0 || Pv == 0) return nullptr;  // no output element
  if (const char* e = CheckSizes(B, L, H)) return e;
  const dim3 grid(Dim(B * H), Dim(CeilDiv(L, kTile)), Dim(CeilDiv(Pv, kSlice))), block(kTile, kWarps);
  const Dims d{L, H, Pk, Pv};
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (softmax) {
    ForwardKernel<T, true><<<grid, block, 0, s>>>(q, k, v, out, d, scale);
  } else {
    ForwardKernel<T, false><<<grid, block, 0, s>>>(q, k, v, out, d, scale);
  }
  return LastError();
}

// Shared by both backward ops: kFromWeights takes dW from dweights instead of dout Vᵀ.
template <typename T, bool kFromWeights>
const char* Backward(bool softmax, T scale, const T* q, const T* k, const T* v, const T* dout,
                     const T* dweights, T* dq, T* dk, T* dv, int64_t B, int64_t L, int64_t H, int64_t Pk,
                     int64_t Pv, T* scratch, void* stream) {
  if (B * H * L == 0) return nullptr;
  if (const char* e = CheckSizes(B, L, H)) return e;
  const Dims d{L, H, Pk, Pv};
  const int64_t n = B * H * L;
  T *row_max = softmax ? scratch : nullptr, *inv_sum = softmax ? scratch + n : nullptr,
    *delta = softmax ? scratch + 2 * n : nullptr;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const dim3 block(kTile, kWarps);
  const int64_t tiles = CeilDiv(L, kTile);
  const int64_t slices = CeilDiv(Pk > Pv ? Pk : Pv, kSlice);
  if (softmax) {
    RowStatsKernel<T, kFromWeights><<<dim3(Dim(B * H), Dim(tiles)), block, 0, s>>>(
        q, k, v, dout, dweights, row_max, inv_sum, delta, d, scale);
    if (const char* e = LastError()) return e;
  }
  if (Pk > 0) {
    const dim3 grid(Dim(B * H), Dim(tiles), Dim(CeilDiv(Pk, kSlice)));
    if (softmax) {
      DqKernel<T, true, kFromWeights>
          <<<grid, block, 0, s>>>(q, k, v, dout, dweights, row_max, inv_sum, delta, dq, d, scale);
    } else {
      DqKernel<T, false, kFromWeights>
          <<<grid, block, 0, s>>>(q, k, v, dout, dweights, row_max, inv_sum, delta, dq, d, scale);
    }
    if (const char* e = LastError()) return e;
  }
  if (slices > 0) {
    const dim3 grid(Dim(B * H), Dim(tiles), Dim(slices));
    if (softmax) {
      DkDvKernel<T, true, kFromWeights>
          <<<grid, block, 0, s>>>(q, k, v, dout, dweights, row_max, inv_sum, delta, dk, dv, d, scale);
    } else {
      DkDvKernel<T, false, kFromWeights>
          <<<grid, block, 0, s>>>(q, k, v, dout, dweights, row_max, inv_sum, delta, dk, dv, d, scale);
    }
    if (const char* e = LastError()) return e;
  }
  return nullptr;
}

template <typename T>
const char* Weights(bool softmax, T scale, const T* q, const T* k, T* weights, int64_t B, int64_t L,
                    int64_t H, int64_t Pk, void* stream) {
  if (B * H * L == 0) return nullptr;
  if (const char* e = CheckSizes(B, L, H)) return e;
  const dim3 grid(Dim(B * H), Dim(CeilDiv(L, kTile))), block(kTile, kWarps);
  const Dims d{L, H, Pk, 0};
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (softmax) {
    WeightsKernel<T, true><<<grid, block, 0, s>>>(q, k, weights, d, scale);
  } else {
    WeightsKernel<T, false><<<grid, block, 0, s>>>(q, k, weights, d, scale);
  }
  return LastError();
}

}  // namespace

const char* LaunchCausalAttentionForward(bool softmax, float scale, const float* q, const float* k,
                                         const float* v, float* out, int64_t B, int64_t L, int64_t H,
                                         int64_t Pk, int64_t Pv, void* stream) {
  return Forward(softmax, scale, q, k, v, out, B, L, H, Pk, Pv, stream);
}
const char* LaunchCausalAttentionForward(bool softmax, double scale, const double* q, const double* k,
                                         const double* v, double* out, int64_t B, int64_t L, int64_t H,
                                         int64_t Pk, int64_t Pv, void* stream) {
  return Forward(softmax, scale, q, k, v, out, B, L, H, Pk, Pv, stream);
}

const char* LaunchCausalAttentionBackward(bool softmax, float scale, const float* q, const float* k,
                                          const float* v, const float* dout, float* dq, float* dk, float* dv,
                                          int64_t B, int64_t L, int64_t H, int64_t Pk, int64_t Pv,
                                          float* scratch, void* stream) {
  return Backward<float, false>(softmax, scale, q, k, v, dout, nullptr, dq, dk, dv, B, L, H, Pk, Pv, scratch,
                                stream);
}
const char* LaunchCausalAttentionBackward(bool softmax, double scale, const double* q, const double* k,
                                          const double* v, const double* dout, double* dq, double* dk,
                                          double* dv, int64_t B, int64_t L, int64_t H, int64_t Pk, int64_t Pv,
                                          double* scratch, void* stream) {
  return Backward<double, false>(softmax, scale, q, k, v, dout, nullptr, dq, dk, dv, B, L, H, Pk, Pv, scratch,
                                 stream);
}

const char* LaunchCausalAttentionWeights(bool softmax, float scale, const float* q, const float* k,
                                         float* weights, int64_t B, int64_t L, int64_t H, int64_t Pk,
                                         void* stream) {
  return Weights(softmax, scale, q, k, weights, B, L, H, Pk, stream);
}
const char* LaunchCausalAttentionWeights(bool softmax, double scale, const double* q, const double* k,
                                         double* weights, int64_t B, int64_t L, int64_t H, int64_t Pk,
                                         void* stream) {
  return Weights(softmax, scale, q, k, weights, B, L, H, Pk, stream);
}

const char* LaunchCausalAttentionWeightsBackward(bool softmax, float scale, const float* q, const float* k,
                                                 const float* dweights, float* dq, float* dk, int64_t B,
                                                 int64_t L, int64_t H, int64_t Pk, float* scratch,
                                                 void* stream) {
  return Backward<float, true>(softmax, scale, q, k, nullptr, nullptr, dweights, dq, dk, nullptr, B, L, H, Pk,
                               0, scratch, stream);
}
const char* LaunchCausalAttentionWeightsBackward(bool softmax, double scale, const double* q, const double* k,
                                                 const double* dweights, double* dq, double* dk, int64_t B,
                                                 int64_t L, int64_t H, int64_t Pk, double* scratch,
                                                 void* stream) {
  return Backward<double, true>(softmax, scale, q, k, nullptr, nullptr, dweights, dq, dk, nullptr, B, L, H,
                                Pk, 0, scratch, stream);
}

}  // namespace mimetic::ops::cuda
