// CUDA kernels of the norm family (RmsNorm, LayerNorm, GatedRmsNorm and their backward ops); the
// launchers are declared in norm_kernels.h. Semantics follow the CPU kernels in norm.cc/norm_cpu.cc.
//
// All three norms normalise "segments": contiguous runs of d elements (a row of x; for GatedRmsNorm
// a group of `group` channels, segs_per_row = e / group per row, the weight offset of segment s
// being (s % segs_per_row) * d). A segment is handled by one warp (d <= kWarpModeMaxD; 4 segments
// per 128-thread block) or by one 256-thread block (longer segments); lanes stride over the
// segment (coalesced) and sums are warp-shuffle butterflies, combined across warps through shared
// memory in warp order. Grid-stride loops over segments; 64-bit element indices.
//
// Backward: a row kernel writes dx (dy, dz) and the per-segment statistics (rstd; mean and rstd for
// LayerNorm) into scratch; a column kernel sums the dweight (dbias) terms of a fixed chunk of rows
// per (32-column tile, chunk) block into partial[chunk][col] (each thread a fixed strided subset of
// the chunk's rows, then the 8 thread rows added in order); a last kernel adds the chunks in order.
// The chunking depends only on the shapes, so results have the same bits on every run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/cuda/cuda_scratch.cuh"
#include "mimetic/ops/norm/norm_kernels.h"

namespace mimetic::ops::cuda_kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpModeBlock = 128;          // threads per block when a warp handles a segment
constexpr int kBlockModeBlock = 256;         // threads per block (= per segment) for long segments
constexpr int64_t kWarpModeMaxD = 512;       // longest segment handled by a single warp
constexpr int64_t kMaxGridBlocks = 1 << 16;  // grid-stride loops cover the rest
// Row chunks of the dweight reduction: at least kMinRowsPerChunk rows each, at most kMaxChunks.
constexpr int64_t kMinRowsPerChunk = 64;
constexpr int64_t kMaxChunks = 1024;
// Column kernel tile: 32 columns (one coalesced warp per row) x 8 row lanes.
constexpr int kColTile = 32;
constexpr int kColRows = 8;
constexpr int kSumBlock = 256;

enum class Kind { kRms, kLayer, kGated };

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RowsPerChunk(int64_t rows) { return std::max(kMinRowsPerChunk, CeilDiv(rows, kMaxChunks)); }
int64_t NumChunks(int64_t rows) { return rows == 0 ? 0 : CeilDiv(rows, RowsPerChunk(rows)); }
unsigned GridBlocks(int64_t work_items, int64_t per_block) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min(CeilDiv(work_items, per_block), kMaxGridBlocks)));
}

using ::mimetic::ops::cuda_internal::Scratch;

// ---- Device math (IEEE division and sqrt: nvcc without --use_fast_math) ----

__device__ __forceinline__ float Sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double Sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float Exp(float v) { return expf(v); }
__device__ __forceinline__ double Exp(double v) { return exp(v); }
// Products that must round on their own (never contracted into an FMA): LayerNorm's g*w - mean(g*w)
// is then exactly 0 for d = 1, as in the reference.
__device__ __forceinline__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

template <typename T>
__device__ __forceinline__ T Sigmoid(T v) {
  return T(1) / (T(1) + Exp(-v));
}

// Butterfly sum over the warp: every lane ends with the same bits (a + b == b + a in IEEE).
template <typename T>
__device__ __forceinline__ T WarpSum(T v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sums a and b over the kGroup threads of a segment (a warp, or the whole block when kGroup > 32);
// every thread of the group gets the totals. smem: 2 * (kGroup / 32) slots. Block mode contains
// __syncthreads, so every thread of the block must call it (segment loops are block-uniform there).
template <int kGroup, typename T>
__device__ __forceinline__ void GroupSum2(T& a, T& b, T* smem) {
  a = WarpSum(a);
  b = WarpSum(b);
  if constexpr (kGroup > kWarp) {
    constexpr int kWarps = kGroup / kWarp;
    const int warp = threadIdx.x / kWarp;
    if (threadIdx.x % kWarp == 0) {
      smem[warp] = a;
      smem[kWarps + warp] = b;
    }
    __syncthreads();
    T ta = 0, tb = 0;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) {
      ta += smem[i];
      tb += smem[kWarps + i];
    }
    __syncthreads();  // smem is reused by the next call
    a = ta;
    b = tb;
  }
}

// Single-value GroupSum2.
template <int kGroup, typename T>
__device__ __forceinline__ T GroupSum(T a, T* smem) {
  a = WarpSum(a);
  if constexpr (kGroup > kWarp) {
    constexpr int kWarps = kGroup / kWarp;
    if (threadIdx.x % kWarp == 0) smem[threadIdx.x / kWarp] = a;
    __syncthreads();
    T total = 0;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) total += smem[i];
    __syncthreads();
    a = total;
  }
  return a;
}

template <typename T>
struct NormArgs {
  const T* x = nullptr;     // x (RmsNorm, LayerNorm) or y (GatedRmsNorm): (segs * d)
  const T* z = nullptr;     // GatedRmsNorm's gate, like x
  const T* w = nullptr;     // (segs_per_row * d)
  const T* b = nullptr;     // LayerNorm's bias (d), forward only
  const T* dout = nullptr;  // backward: like x
  T* out = nullptr;         // forward: y; backward: dx (dy)
  T* out2 = nullptr;        // GatedRmsNorm backward: dz
  T* stats = nullptr;       // backward: rstd per segment (LayerNorm: mean, rstd pairs)
  int64_t segs = 0;
  int64_t d = 0;
  int64_t segs_per_row = 1;
  T eps = 0;
};

// The normalised input: x, or y silu(z) for the gated norm.
template <Kind kKind, typename T>
__device__ __forceinline__ T NormInput(const NormArgs<T>& a, int64_t idx) {
  if constexpr (kKind == Kind::kGated) {
    const T zv = a.z[idx];
    return a.x[idx] * (zv * Sigmoid(zv));
  } else {
    return a.x[idx];
  }
}

template <typename T, Kind kKind, int kGroup, int kBlock>
__global__ void __launch_bounds__(kBlock) NormForwardKernel(const NormArgs<T> a) {
  static_assert(kGroup == kWarp || kGroup == kBlock, "a segment is one warp or one whole block");
  constexpr int kGroupsPerBlock = kBlock / kGroup;
  __shared__ T smem[2 * (kGroup / kWarp)];
  const int lane = threadIdx.x % kGroup;
  const int64_t d = a.d;
  const T inv_d = T(1) / static_cast<T>(d);
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroup; s < a.segs;
       s += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const int64_t base = s * d;
    const T* ws = a.w + (s % a.segs_per_row) * d;
    if constexpr (kKind == Kind::kLayer) {
      T sum = 0;
      for (int64_t i = lane; i < d; i += kGroup) sum += a.x[base + i];
      const T mean = GroupSum<kGroup>(sum, smem) * inv_d;
      T var = 0;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T c = a.x[base + i] - mean;
        var += c * c;
      }
      const T rstd = T(1) / Sqrt(GroupSum<kGroup>(var, smem) * inv_d + a.eps);
      for (int64_t i = lane; i < d; i += kGroup)
        a.out[base + i] = (a.x[base + i] - mean) * rstd * ws[i] + a.b[i];
    } else {
      T ss = 0;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T n = NormInput<kKind>(a, base + i);
        ss += n * n;
      }
      const T rstd = T(1) / Sqrt(GroupSum<kGroup>(ss, smem) * inv_d + a.eps);
      for (int64_t i = lane; i < d; i += kGroup)
        a.out[base + i] = NormInput<kKind>(a, base + i) * rstd * ws[i];
    }
  }
}

// dx (dy, dz) of each segment, and its statistics for the column kernel.
template <typename T, Kind kKind, int kGroup, int kBlock>
__global__ void __launch_bounds__(kBlock) NormBackwardRowKernel(const NormArgs<T> a) {
  static_assert(kGroup == kWarp || kGroup == kBlock, "a segment is one warp or one whole block");
  constexpr int kGroupsPerBlock = kBlock / kGroup;
  __shared__ T smem[2 * (kGroup / kWarp)];
  const int lane = threadIdx.x % kGroup;
  const int64_t d = a.d;
  const T inv_d = T(1) / static_cast<T>(d);
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroup; s < a.segs;
       s += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const int64_t base = s * d;
    const T* ws = a.w + (s % a.segs_per_row) * d;
    if constexpr (kKind == Kind::kLayer) {
      // xhat = (x - mean) rstd; g = dy w: dx = rstd (g - mean(g) - xhat mean(g xhat)).
      T sum = 0;
      for (int64_t i = lane; i < d; i += kGroup) sum += a.x[base + i];
      const T mean = GroupSum<kGroup>(sum, smem) * inv_d;
      T var = 0;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T c = a.x[base + i] - mean;
        var += c * c;
      }
      const T rstd = T(1) / Sqrt(GroupSum<kGroup>(var, smem) * inv_d + a.eps);
      T mg = 0, mgx = 0;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T g = MulRn(a.dout[base + i], ws[i]);
        mg += g;
        mgx += g * (a.x[base + i] - mean);
      }
      GroupSum2<kGroup>(mg, mgx, smem);
      mg *= inv_d;
      mgx *= inv_d * rstd;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T xhat = (a.x[base + i] - mean) * rstd;
        a.out[base + i] = rstd * (MulRn(a.dout[base + i], ws[i]) - mg - xhat * mgx);
      }
      if (lane == 0) {
        a.stats[2 * s] = mean;
        a.stats[2 * s + 1] = rstd;
      }
    } else {
      // n = x (or y silu(z)), r = rstd: dn = r g w - n r^3 / d * sum(g w n).
      T ss = 0, dot = 0;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T n = NormInput<kKind>(a, base + i);
        ss += n * n;
        dot += a.dout[base + i] * ws[i] * n;
      }
      GroupSum2<kGroup>(ss, dot, smem);
      const T rstd = T(1) / Sqrt(ss * inv_d + a.eps);
      const T c = rstd * rstd * rstd * dot * inv_d;
      for (int64_t i = lane; i < d; i += kGroup) {
        const T g = a.dout[base + i];
        if constexpr (kKind == Kind::kGated) {
          // dy = dn silu(z); dz = dn y silu'(z), silu'(z) = sig (1 + z (1 - sig)).
          const T yv = a.x[base + i];
          const T zv = a.z[base + i];
          const T sg = Sigmoid(zv);
          const T n = yv * (zv * sg);
          const T dn = rstd * g * ws[i] - n * c;
          a.out[base + i] = dn * zv * sg;
          a.out2[base + i] = dn * yv * sg * (T(1) + zv * (T(1) - sg));
        } else {
          a.out[base + i] = rstd * g * ws[i] - a.x[base + i] * c;
        }
      }
      if (lane == 0) a.stats[s] = rstd;
    }
  }
}

// partial_w[chunk][col] = sum over the chunk's rows of dout * (normalised input) at col (and
// partial_b[chunk][col] = sum of dout for LayerNorm). grid (ceil(wlen / 32), chunks), block (32, 8).
template <typename T, Kind kKind>
__global__ void __launch_bounds__(kColTile* kColRows)
    NormWeightPartialKernel(const NormArgs<T> a, int64_t rows, int64_t rows_per_chunk, T* partial_w,
                            T* partial_b) {
  __shared__ T sw[kColRows][kColTile + 1];
  __shared__ T sb[kColRows][kColTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t wlen = a.d * a.segs_per_row;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kColTile + tx;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  T acc_w = 0, acc_b = 0;
  if (col < wlen) {
    const int64_t seg_in_row = col / a.d;
    for (int64_t r = r0 + ty; r < r1; r += kColRows) {
      const int64_t idx = r * wlen + col;
      const int64_t s = r * a.segs_per_row + seg_in_row;
      const T g = a.dout[idx];
      if constexpr (kKind == Kind::kLayer) {
        acc_w += g * ((a.x[idx] - a.stats[2 * s]) * a.stats[2 * s + 1]);
        acc_b += g;
      } else {
        acc_w += g * NormInput<kKind>(a, idx) * a.stats[s];
      }
    }
  }
  sw[ty][tx] = acc_w;
  sb[ty][tx] = acc_b;
  __syncthreads();
  if (ty == 0 && col < wlen) {
    T tw = 0, tb = 0;
#pragma unroll
    for (int i = 0; i < kColRows; ++i) {
      tw += sw[i][tx];
      tb += sb[i][tx];
    }
    partial_w[chunk * wlen + col] = tw;
    if constexpr (kKind == Kind::kLayer) partial_b[chunk * wlen + col] = tb;
  }
}

// out[col] = sum_{c < chunks} partial[c][col], in chunk order (0 when there are no chunks).
template <typename T>
__global__ void __launch_bounds__(kSumBlock)
    SumChunksKernel(const T* __restrict__ partial, T* __restrict__ out, int64_t chunks, int64_t wlen) {
  for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < wlen;
       col += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T acc = 0;
    for (int64_t c = 0; c < chunks; ++c) acc += partial[c * wlen + col];
    out[col] = acc;
  }
}

// ---- Host side ----

template <typename T, Kind kKind>
cudaError_t LaunchForward(const NormArgs<T>& a, cudaStream_t stream) {
  if (a.segs == 0) return cudaSuccess;
  if (a.d <= kWarpModeMaxD) {
    NormForwardKernel<T, kKind, kWarp, kWarpModeBlock>
        <<<GridBlocks(a.segs, kWarpModeBlock / kWarp), kWarpModeBlock, 0, stream>>>(a);
  } else {
    NormForwardKernel<T, kKind, kBlockModeBlock, kBlockModeBlock>
        <<<GridBlocks(a.segs, 1), kBlockModeBlock, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

// The backward pipeline; a.stats is set here. dw (and db for LayerNorm) have wlen = d * segs_per_row
// elements.
template <typename T, Kind kKind>
const char* RunBackward(NormArgs<T> a, T* dw, T* db, cudaStream_t stream) {
  const int64_t wlen = a.d * a.segs_per_row;
  const int64_t rows = a.segs / a.segs_per_row;
  const int64_t chunks = NumChunks(rows);
  const int64_t rows_per_chunk = RowsPerChunk(rows);
  const int64_t n_stats = (kKind == Kind::kLayer ? 2 : 1) * a.segs;
  const int64_t n_partial = (kKind == Kind::kLayer ? 2 : 1) * chunks * wlen;
  Scratch scratch(stream);
  LAUNCHER_RETURN_IF_ERROR(scratch.Allocate(static_cast<size_t>(n_stats + n_partial) * sizeof(T)));
  a.stats = scratch.as<T>();
  T* partial_w = a.stats + n_stats;
  T* partial_b = partial_w + chunks * wlen;  // LayerNorm only
  if (rows > 0) {
    if (a.d <= kWarpModeMaxD) {
      NormBackwardRowKernel<T, kKind, kWarp, kWarpModeBlock>
          <<<GridBlocks(a.segs, kWarpModeBlock / kWarp), kWarpModeBlock, 0, stream>>>(a);
    } else {
      NormBackwardRowKernel<T, kKind, kBlockModeBlock, kBlockModeBlock>
          <<<GridBlocks(a.segs, 1), kBlockModeBlock, 0, stream>>>(a);
    }
    LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
    const dim3 grid(static_cast<unsigned>(CeilDiv(wlen, kColTile)), static_cast<unsigned>(chunks));
    NormWeightPartialKernel<T, kKind>
        <<<grid, dim3(kColTile, kColRows), 0, stream>>>(a, rows, rows_per_chunk, partial_w, partial_b);
    LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  }
  SumChunksKernel<T><<<GridBlocks(wlen, kSumBlock), kSumBlock, 0, stream>>>(partial_w, dw, chunks, wlen);
  LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  if constexpr (kKind == Kind::kLayer) {
    SumChunksKernel<T><<<GridBlocks(wlen, kSumBlock), kSumBlock, 0, stream>>>(partial_b, db, chunks, wlen);
    LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  }
  LAUNCHER_RETURN_IF_ERROR(scratch.Release());
  return nullptr;
}

template <typename T>
const char* RmsNormImpl(const T* x, const T* w, T* y, int64_t rows, int64_t d, T eps, void* stream) {
  NormArgs<T> a;
  a.x = x;
  a.w = w;
  a.out = y;
  a.segs = rows;
  a.d = d;
  a.eps = eps;
  LAUNCHER_RETURN_IF_ERROR((LaunchForward<T, Kind::kRms>(a, static_cast<cudaStream_t>(stream))));
  return nullptr;
}

template <typename T>
const char* RmsNormBackwardImpl(const T* x, const T* w, const T* dy, T* dx, T* dw, int64_t rows, int64_t d,
                                T eps, void* stream) {
  NormArgs<T> a;
  a.x = x;
  a.w = w;
  a.dout = dy;
  a.out = dx;
  a.segs = rows;
  a.d = d;
  a.eps = eps;
  return RunBackward<T, Kind::kRms>(a, dw, nullptr, static_cast<cudaStream_t>(stream));
}

template <typename T>
const char* LayerNormImpl(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t d, T eps,
                          void* stream) {
  NormArgs<T> a;
  a.x = x;
  a.w = w;
  a.b = b;
  a.out = y;
  a.segs = rows;
  a.d = d;
  a.eps = eps;
  LAUNCHER_RETURN_IF_ERROR((LaunchForward<T, Kind::kLayer>(a, static_cast<cudaStream_t>(stream))));
  return nullptr;
}

template <typename T>
const char* LayerNormBackwardImpl(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, int64_t rows,
                                  int64_t d, T eps, void* stream) {
  NormArgs<T> a;
  a.x = x;
  a.w = w;
  a.dout = dy;
  a.out = dx;
  a.segs = rows;
  a.d = d;
  a.eps = eps;
  return RunBackward<T, Kind::kLayer>(a, dw, db, static_cast<cudaStream_t>(stream));
}

template <typename T>
const char* GatedRmsNormImpl(const T* y, const T* z, const T* w, T* out, int64_t rows, int64_t e,
                             int64_t group, T eps, void* stream) {
  NormArgs<T> a;
  a.x = y;
  a.z = z;
  a.w = w;
  a.out = out;
  a.segs_per_row = e / group;
  a.segs = rows * a.segs_per_row;
  a.d = group;
  a.eps = eps;
  LAUNCHER_RETURN_IF_ERROR((LaunchForward<T, Kind::kGated>(a, static_cast<cudaStream_t>(stream))));
  return nullptr;
}

template <typename T>
const char* GatedRmsNormBackwardImpl(const T* y, const T* z, const T* w, const T* dout, T* dy, T* dz, T* dw,
                                     int64_t rows, int64_t e, int64_t group, T eps, void* stream) {
  NormArgs<T> a;
  a.x = y;
  a.z = z;
  a.w = w;
  a.dout = dout;
  a.out = dy;
  a.out2 = dz;
  a.segs_per_row = e / group;
  a.segs = rows * a.segs_per_row;
  a.d = group;
  a.eps = eps;
  return RunBackward<T, Kind::kGated>(a, dw, nullptr, static_cast<cudaStream_t>(stream));
}

}  // namespace

const char* LaunchRmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps,
                          void* stream) {
  return RmsNormImpl(x, w, y, rows, d, eps, stream);
}
const char* LaunchRmsNorm(const double* x, const double* w, double* y, int64_t rows, int64_t d, double eps,
                          void* stream) {
  return RmsNormImpl(x, w, y, rows, d, eps, stream);
}

const char* LaunchRmsNormBackward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                                  int64_t rows, int64_t d, float eps, void* stream) {
  return RmsNormBackwardImpl(x, w, dy, dx, dw, rows, d, eps, stream);
}
const char* LaunchRmsNormBackward(const double* x, const double* w, const double* dy, double* dx, double* dw,
                                  int64_t rows, int64_t d, double eps, void* stream) {
  return RmsNormBackwardImpl(x, w, dy, dx, dw, rows, d, eps, stream);
}

const char* LaunchLayerNorm(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t d,
                            float eps, void* stream) {
  return LayerNormImpl(x, w, b, y, rows, d, eps, stream);
}
const char* LaunchLayerNorm(const double* x, const double* w, const double* b, double* y, int64_t rows,
                            int64_t d, double eps, void* stream) {
  return LayerNormImpl(x, w, b, y, rows, d, eps, stream);
}

const char* LaunchLayerNormBackward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                                    float* db, int64_t rows, int64_t d, float eps, void* stream) {
  return LayerNormBackwardImpl(x, w, dy, dx, dw, db, rows, d, eps, stream);
}
const char* LaunchLayerNormBackward(const double* x, const double* w, const double* dy, double* dx,
                                    double* dw, double* db, int64_t rows, int64_t d, double eps,
                                    void* stream) {
  return LayerNormBackwardImpl(x, w, dy, dx, dw, db, rows, d, eps, stream);
}

const char* LaunchGatedRmsNorm(const float* y, const float* z, const float* w, float* out, int64_t rows,
                               int64_t e, int64_t group, float eps, void* stream) {
  return GatedRmsNormImpl(y, z, w, out, rows, e, group, eps, stream);
}
const char* LaunchGatedRmsNorm(const double* y, const double* z, const double* w, double* out, int64_t rows,
                               int64_t e, int64_t group, double eps, void* stream) {
  return GatedRmsNormImpl(y, z, w, out, rows, e, group, eps, stream);
}

const char* LaunchGatedRmsNormBackward(const float* y, const float* z, const float* w, const float* dout,
                                       float* dy, float* dz, float* dw, int64_t rows, int64_t e,
                                       int64_t group, float eps, void* stream) {
  return GatedRmsNormBackwardImpl(y, z, w, dout, dy, dz, dw, rows, e, group, eps, stream);
}
const char* LaunchGatedRmsNormBackward(const double* y, const double* z, const double* w, const double* dout,
                                       double* dy, double* dz, double* dw, int64_t rows, int64_t e,
                                       int64_t group, double eps, void* stream) {
  return GatedRmsNormBackwardImpl(y, z, w, dout, dy, dz, dw, rows, e, group, eps, stream);
}

}  // namespace mimetic::ops::cuda_kernels
