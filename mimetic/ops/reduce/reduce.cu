// CUDA kernels of the reductions (reduce.h): sums over any set of dims (Sum, Mean, SumTo) and
// Max / ArgMax / MaxBackward over one axis.
//
// One thread block reduces `items` independent outputs (a tile of `bx` adjacent outputs each):
//   block = (bx, by, items): tx picks the output column i (coalesced when the innermost dim is
//   kept), ty strides over the reduced range in steps of by (coalesced when the innermost dim is
//   reduced, bx = 1), tz picks the item. Each thread accumulates its strided subsequence in
//   increasing order, then the by partials of a column are combined by xor-shuffles inside each
//   warp and, across the item's warps, sequentially from shared memory.
// The launch shape depends only on the tensor shapes, so the order of every floating-point
// addition, and with it every bit of the result, is the same on every run; there are no atomics.
// Few outputs with very long reductions (SumAll(Square(g)) of a large leaf in gradient clipping)
// are split into a shape-determined number of chunks: stage 1 writes one partial per (output,
// chunk) to a fixed per-stream scratch buffer, stage 2 adds each output's partials in chunk order.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "mimetic/ops/cuda/cuda_scratch.cuh"
#include "mimetic/ops/reduce/reduce_kernels.h"

namespace mimetic::ops::cuda_kernels {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int64_t kMaxGrid = 65535;
constexpr unsigned kFullMask = 0xffffffffu;
// Split reductions: at most this many chunks per output, each at least kMinChunk long, and the
// partials of one call within the scratch buffer.
constexpr int64_t kMaxSplits = 256;
constexpr int64_t kMinChunk = 16384;
constexpr size_t kScratchBytes = size_t{1} << 20;

// Partial sums of split reductions: one fixed-size StreamBuffer per stream (cuda_scratch.cuh).
cudaError_t ScratchFor(cudaStream_t stream, void** scratch) {
  return ::mimetic::ops::cuda_internal::StreamBuffer(stream, "reduce", kScratchBytes, scratch);
}

const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

int Pow2Ceil(int64_t v) {
  int p = 1;
  while (p < v && p < kMaxThreads) p *= 2;
  return p;
}

// Block shape for `outputs` lines of `reduce` elements each, `inner` of them adjacent in memory.
struct LaunchShape {
  int bx = 1, by = 256, items = 1;
  int64_t tiles_per_outer = 1;  // column tiles of bx per kept index
  int64_t num_items = 1;        // outer * tiles_per_outer
  int64_t groups = 1;           // blocks' worth of items
  int grid = 1;
};

LaunchShape ChooseShape(int64_t outer, int64_t reduce, int64_t inner) {
  LaunchShape s;
  s.bx = inner <= 1 ? 1 : std::min(32, Pow2Ceil(inner));
  // Few column tiles and a long reduction: narrower tiles (32-byte sectors are still fully used)
  // give more blocks.
  if (s.bx > 8 && outer * ((inner + s.bx - 1) / s.bx) < 128 && reduce >= 256) s.bx = 8;
  // At least one warp per item, at most 256 threads, no more rows than the reduction has.
  s.by = std::max(32 / s.bx, std::min(256 / s.bx, Pow2Ceil(reduce)));
  s.items = 256 / (s.bx * s.by);
  s.tiles_per_outer = (inner + s.bx - 1) / s.bx;
  s.num_items = outer * s.tiles_per_outer;
  // Not many items, each a long reduction: 1024-thread blocks for more loads in flight.
  if (s.items == 1 && s.num_items < 1024 && reduce >= 4096) s.by = kMaxThreads / s.bx;
  s.groups = (s.num_items + s.items - 1) / s.items;
  s.grid = static_cast<int>(std::max<int64_t>(1, std::min(s.groups, kMaxGrid)));
  return s;
}

// Offsets in x and y of kept index o (decomposed innermost first; static indices after unrolling
// so the plan is read from the parameter bank).
__device__ __forceinline__ void KeptOffsets(const SumPlan& p, int64_t o, int64_t* xo, int64_t* yo) {
  int64_t ox = 0, oy = 0;
#pragma unroll
  for (int d = kMaxReduceDims - 1; d >= 0; --d) {
    if (d < p.kept_ndim) {
      const int64_t q = o / p.kept_dims[d];
      const int64_t c = o - q * p.kept_dims[d];
      ox += c * p.kept_x_strides[d];
      oy += c * p.kept_y_strides[d];
      o = q;
    }
  }
  *xo = ox;
  *yo = oy;
}

__device__ __forceinline__ int64_t SummedOffset(const SumPlan& p, int64_t r) {
  int64_t off = 0;
#pragma unroll
  for (int d = kMaxReduceDims - 1; d >= 1; --d) {
    if (d < p.summed_ndim) {
      const int64_t q = r / p.summed_dims[d];
      off += (r - q * p.summed_dims[d]) * p.summed_x_strides[d];
      r = q;
    }
  }
  return off + r * p.summed_x_strides[0];
}

// ---- sum ----

// f32: two 1024-thread blocks per SM fit in the register file (<= 32 registers); f64 would spill.
template <typename T>
__global__ void __launch_bounds__(kMaxThreads, sizeof(T) == 4 ? 2 : 1)
    SumKernel(const T* __restrict__ x, T* __restrict__ y, const SumPlan p, int64_t reduce_count,
              int64_t tiles_per_outer, int64_t num_items, int64_t groups, T scale, int64_t chunk,
              T* __restrict__ partials) {
  __shared__ T partial[kMaxThreads];
  const int bx = blockDim.x, by = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = (tz * by + ty) * bx + tx;
  const int lane = tid & 31;
  const int warps_per_item = (bx * by) >> 5;
  const int warp_in_item = (tid >> 5) - tz * warps_per_item;
  // Lanes 0..bx-1 of each warp hold one column each after the shuffles.
  const bool column_leader = lane < bx;
  // This block's chunk of the reduced range (the whole range unless split).
  const int64_t r_begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r_end = min(reduce_count, r_begin + chunk);
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const int64_t item = g * blockDim.z + tz;
    int64_t i = 0, yo = 0;
    bool active = false;
    T acc = T(0);
    if (item < num_items) {
      const int64_t o = item / tiles_per_outer;
      i = (item - o * tiles_per_outer) * bx + tx;
      active = i < p.inner;
      if (active) {
        int64_t xo;
        KeptOffsets(p, o, &xo, &yo);
        const T* xp = x + xo + i;
        int64_t r = r_begin + ty;
        if (p.summed_ndim <= 1) {
          const int64_t s = p.summed_x_strides[0];
          // Four loads in flight per iteration; the additions stay in increasing r.
          for (; r + 3 * by < r_end; r += 4 * by) {
            const T v0 = xp[r * s], v1 = xp[(r + by) * s], v2 = xp[(r + 2 * by) * s],
                    v3 = xp[(r + 3 * by) * s];
            acc += v0;
            acc += v1;
            acc += v2;
            acc += v3;
          }
          for (; r < r_end; r += by) acc += xp[r * s];
        } else {
          for (; r < r_end; r += by) acc += xp[SummedOffset(p, r)];
        }
      }
    }
    // Combine the rows of each column inside the warp (lanes differing in ty only).
    for (int off = 16; off >= bx; off >>= 1) acc += __shfl_xor_sync(kFullMask, acc, off);
    if (warps_per_item > 1) {
      if (column_leader) partial[(tz * warps_per_item + warp_in_item) * bx + tx] = acc;
      __syncthreads();
      if (warp_in_item == 0 && column_leader) {
        const T* col = partial + tz * warps_per_item * bx + tx;
        acc = col[0];
        for (int w = 1; w < warps_per_item; ++w) acc += col[w * bx];
      }
      __syncthreads();
    }
    if (active && warp_in_item == 0 && column_leader) {
      if (partials == nullptr) {
        y[yo + i] = acc * scale;
      } else {
        partials[(yo + i) * gridDim.y + blockIdx.y] = acc;
      }
    }
  }
}

// Stage 2 of a split sum: y[j] = scale * (partials[j, 0] + ... + partials[j, splits - 1]) in order.
template <typename T>
__global__ void FinishSplitSumKernel(const T* __restrict__ partials, T* __restrict__ y, int64_t outputs,
                                     int64_t splits, T scale) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < outputs; j += stride) {
    const T* pj = partials + j * splits;
    T acc = pj[0];
    for (int64_t c = 1; c < splits; ++c) acc += pj[c];
    y[j] = acc * scale;
  }
}

template <typename T>
const char* SumTyped(const SumPlan& plan, const void* x, void* y, double scale, cudaStream_t stream) {
  int64_t outer = 1, reduce = 1;
  for (int d = 0; d < plan.kept_ndim; ++d) outer *= plan.kept_dims[d];
  for (int d = 0; d < plan.summed_ndim; ++d) reduce *= plan.summed_dims[d];
  if (outer == 0 || plan.inner == 0) return nullptr;
  const LaunchShape s = ChooseShape(outer, reduce, plan.inner);
  const int64_t outputs = outer * plan.inner;
  // Split when the blocks would be too few to fill the GPU and each still gets >= kMinChunk.
  int64_t splits = 1;
  if (s.groups < 128 && reduce >= 4 * kMinChunk) {
    splits = std::min({kMaxSplits, (512 + s.groups - 1) / s.groups, reduce / kMinChunk,
                       static_cast<int64_t>(kScratchBytes / sizeof(T)) / outputs});
  }
  T* partials = nullptr;
  int64_t chunk = reduce;
  if (splits >= 2) {
    chunk = (reduce + splits - 1) / splits;
    splits = (reduce + chunk - 1) / chunk;  // no empty chunk
    void* scratch = nullptr;
    const cudaError_t e = ScratchFor(stream, &scratch);
    if (e != cudaSuccess) return cudaGetErrorString(e);
    partials = static_cast<T*>(scratch);
  } else {
    splits = 1;
  }
  const dim3 grid(s.grid, static_cast<unsigned>(splits));
  SumKernel<T><<<grid, dim3(s.bx, s.by, s.items), 0, stream>>>(
      static_cast<const T*>(x), static_cast<T*>(y), plan, reduce, s.tiles_per_outer, s.num_items, s.groups,
      static_cast<T>(scale), chunk, partials);
  if (partials != nullptr) {
    const int64_t blocks = std::min<int64_t>((outputs + 255) / 256, kMaxGrid);
    FinishSplitSumKernel<T><<<static_cast<int>(blocks), 256, 0, stream>>>(
        partials, static_cast<T*>(y), outputs, splits, static_cast<T>(scale));
  }
  return LastError();
}

// ---- max / argmax / max backward ----

// (value, index) of the first maximum; index < 0: nothing seen yet (NaNs are skipped). A total
// order on the candidates, so the combination order cannot change the result.
template <typename T>
__device__ __forceinline__ void Combine(T& bv, int& bi, T ov, int oi) {
  if (oi >= 0 && (bi < 0 || ov > bv || (ov == bv && oi < bi))) {
    bv = ov;
    bi = oi;
  }
}

template <int kMode, typename T>
__global__ void __launch_bounds__(kMaxThreads, 1)
    MaxKernel(const T* __restrict__ x, const T* __restrict__ g, void* __restrict__ out, int64_t n,
              int64_t inner, int64_t tiles_per_outer, int64_t num_items, int64_t groups) {
  __shared__ T partial_v[kMaxThreads];
  __shared__ int partial_i[kMaxThreads];
  __shared__ int line_index[kMaxThreads];
  const int bx = blockDim.x, by = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = (tz * by + ty) * bx + tx;
  const int lane = tid & 31;
  const int warps_per_item = (bx * by) >> 5;
  const int warp_in_item = (tid >> 5) - tz * warps_per_item;
  const bool column_leader = lane < bx;
  for (int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int64_t item = grp * blockDim.z + tz;
    int64_t o = 0, i = 0;
    bool active = false;
    T bv = T(0);
    int bi = -1;
    if (item < num_items) {
      o = item / tiles_per_outer;
      i = (item - o * tiles_per_outer) * bx + tx;
      active = i < inner;
      if (active) {
        const T* xp = x + o * n * inner + i;
        for (int64_t k = ty; k < n; k += by) {
          const T v = xp[k * inner];
          if (v == v && (bi < 0 || v > bv)) {
            bv = v;
            bi = static_cast<int>(k);
          }
        }
      }
    }
    for (int off = 16; off >= bx; off >>= 1) {
      const T ov = __shfl_xor_sync(kFullMask, bv, off);
      const int oi = __shfl_xor_sync(kFullMask, bi, off);
      Combine(bv, bi, ov, oi);
    }
    if (warps_per_item > 1) {
      if (column_leader) {
        partial_v[(tz * warps_per_item + warp_in_item) * bx + tx] = bv;
        partial_i[(tz * warps_per_item + warp_in_item) * bx + tx] = bi;
      }
      __syncthreads();
      if (warp_in_item == 0 && column_leader) {
        const int base = tz * warps_per_item * bx + tx;
        for (int w = 1; w < warps_per_item; ++w)
          Combine(bv, bi, partial_v[base + w * bx], partial_i[base + w * bx]);
      }
      __syncthreads();
    }
    if (active && warp_in_item == 0 && column_leader) {
      // The reference scans from element 0 with `>`: a NaN there is never replaced.
      const T x0 = x[o * n * inner + i];
      if (x0 != x0) {
        bv = x0;
        bi = 0;
      }
      if constexpr (kMode == kMaxValues) {
        static_cast<T*>(out)[o * inner + i] = bv;
      } else if constexpr (kMode == kMaxIndices) {
        static_cast<int32_t*>(out)[o * inner + i] = bi;
      } else {
        line_index[tz * bx + tx] = bi;
      }
    }
    if constexpr (kMode == kMaxBackward) {
      __syncthreads();
      if (active) {
        const int index = line_index[tz * bx + tx];
        const T gv = g[o * inner + i];
        T* yp = static_cast<T*>(out) + o * n * inner + i;
        for (int64_t k = ty; k < n; k += by) yp[k * inner] = k == index ? gv : T(0);
      }
      __syncthreads();
    }
  }
}

template <typename T>
const char* MaxTyped(int mode, const void* x, const void* g, void* y, int64_t outer, int64_t n, int64_t inner,
                     cudaStream_t stream) {
  if (outer == 0 || inner == 0) return nullptr;
  if (n <= 0) return "max over an empty axis";
  const LaunchShape s = ChooseShape(outer, n, inner);
  const dim3 block(s.bx, s.by, s.items);
  const T* px = static_cast<const T*>(x);
  const T* pg = static_cast<const T*>(g);
  switch (mode) {
    case kMaxValues:
      MaxKernel<kMaxValues, T>
          <<<s.grid, block, 0, stream>>>(px, pg, y, n, inner, s.tiles_per_outer, s.num_items, s.groups);
      break;
    case kMaxIndices:
      MaxKernel<kMaxIndices, T>
          <<<s.grid, block, 0, stream>>>(px, pg, y, n, inner, s.tiles_per_outer, s.num_items, s.groups);
      break;
    case kMaxBackward:
      MaxKernel<kMaxBackward, T>
          <<<s.grid, block, 0, stream>>>(px, pg, y, n, inner, s.tiles_per_outer, s.num_items, s.groups);
      break;
    default:
      return "unknown max mode";
  }
  return LastError();
}

}  // namespace

const char* LaunchSum(int dtype, const SumPlan& plan, const void* x, void* y, double scale, void* stream) {
  if (plan.kept_ndim < 0 || plan.kept_ndim > kMaxReduceDims || plan.summed_ndim < 0 ||
      plan.summed_ndim > kMaxReduceDims) {
    return "reduction plan rank out of range";
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kReduceF32:
      return SumTyped<float>(plan, x, y, scale, s);
    case kReduceF64:
      return SumTyped<double>(plan, x, y, scale, s);
    default:
      return "unsupported reduction dtype";
  }
}

const char* LaunchMax(int mode, int dtype, const void* x, const void* g, void* y, int64_t outer, int64_t n,
                      int64_t inner, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kReduceF32:
      return MaxTyped<float>(mode, x, g, y, outer, n, inner, s);
    case kReduceF64:
      return MaxTyped<double>(mode, x, g, y, outer, n, inner, s);
    default:
      return "unsupported max dtype";
  }
}

}  // namespace mimetic::ops::cuda_kernels
