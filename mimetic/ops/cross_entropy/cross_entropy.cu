// CUDA masked cross-entropy: a fused, max-subtracted log-softmax per row, reduced to the scalar
// loss in two deterministic stages, and its backward.
//
// Rows are handled by one warp each when V <= kWarpRowMaxV (the synthetic tasks' vocabularies)
// and by one block each otherwise. Forward stage 1 runs a fixed number of blocks G, a function of
// (rows, V) only; block b handles rows b, b + G, ... (warp w of block b: rows b*8 + w + 8G*k) and
// writes one (sum mask*CE, sum mask) pair in double. Stage 2, a single block, sums the G pairs in
// a fixed tree. No atomics touch floating-point values, so the loss has the same bits every run.
// The per-row arithmetic follows the CPU's fast path (cross_entropy.cc): f32 max and sum of exp,
// the row's loss term and the totals in double; the backward writes exp(x - max) * (c / sum) and
// subtracts c at the target, c = g * mask_r / sum(mask).
//
// Targets under a nonzero mask are validated on the device (first bad row by integer atomicMin) and
// read back after a stream synchronisation, unless the stream is being captured into a CUDA graph.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "mimetic/ops/cross_entropy/cross_entropy_kernels.h"
#include "mimetic/ops/cuda/cuda_scratch.cuh"

namespace mimetic::ops::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int64_t kWarpRowMaxV = 1024;
constexpr int64_t kMaxPartials = 1024;  // forward stage-1 blocks
constexpr int64_t kMaxGrid = 65535;
constexpr unsigned long long kNoBadRow = ULLONG_MAX;
// Per-stream scratch, in doubles: the stage-1 pairs, then the backward's scale, then the bad-row flag.
constexpr int64_t kScaleSlot = 2 * kMaxPartials;
constexpr int64_t kFlagSlot = kScaleSlot + 1;
constexpr size_t kScratchBytes = (kFlagSlot + 1) * sizeof(double);

// The stage-1 pairs, the backward's scale and the bad-row flag: one fixed-size StreamBuffer per
// stream (cuda_scratch.cuh), which a captured CUDA graph keeps pointing at.
cudaError_t ScratchFor(cudaStream_t stream, double** scratch) {
  return ::mimetic::ops::cuda_internal::StreamBuffer(stream, "cross_entropy", kScratchBytes,
                                                     reinterpret_cast<void**>(scratch));
}

// ---- Math helpers: f32 math in f32, f64 in f64. ----

__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
// fmax ignores a NaN operand, like the CPU's std::max(mx, x) starting from -inf; it is also
// symmetric, so every lane of a butterfly ends with the same value.
__device__ __forceinline__ float Max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double Max(double a, double b) { return fmax(a, b); }
// A product that is never contracted into an FMA with a following subtraction (as on the CPU).
__device__ __forceinline__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

// Butterfly reductions: a + b == b + a bitwise, so every lane ends with the same value.
template <typename T>
__device__ __forceinline__ T WarpSum(T x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}
template <typename T>
__device__ __forceinline__ T WarpMax(T x) {
  for (int offset = 16; offset > 0; offset >>= 1) x = Max(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

// Whole-block reductions (every thread must call them); warps combined in order 0..7, result in
// every thread. The trailing barrier lets the caller reuse `s` at once.
template <typename T>
__device__ __forceinline__ T BlockSum(T x, T* s) {
  x = WarpSum(x);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = x;
  __syncthreads();
  T total = s[0];
  for (int w = 1; w < kWarps; ++w) total += s[w];
  __syncthreads();
  return total;
}
template <typename T>
__device__ __forceinline__ T BlockMax(T x, T* s) {
  x = WarpMax(x);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = x;
  __syncthreads();
  T total = s[0];
  for (int w = 1; w < kWarps; ++w) total = Max(total, s[w]);
  __syncthreads();
  return total;
}

// The threads that share a row: a warp (kWarpRows) or the whole block.
template <bool kWarpRows>
struct RowGroup {
  static constexpr int kSize = kWarpRows ? 32 : kThreads;
  int64_t first;   // this group's first row
  int64_t stride;  // rows between this group's consecutive rows
  int rank;        // this thread's index in the group
  __device__ RowGroup() {
    if (kWarpRows) {
      first = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
      stride = static_cast<int64_t>(gridDim.x) * kWarps;
      rank = threadIdx.x & 31;
    } else {
      first = blockIdx.x;
      stride = gridDim.x;
      rank = threadIdx.x;
    }
  }
  template <typename T>
  __device__ T Sum(T x, T* s) const {
    return kWarpRows ? WarpSum(x) : BlockSum(x, s);
  }
  template <typename T>
  __device__ T MaxOf(T x, T* s) const {
    return kWarpRows ? WarpMax(x) : BlockMax(x, s);
  }
};

// max_i row[i] and sum_i exp(row[i] - max), identical in every thread of the group.
template <typename T, bool kWarpRows>
__device__ __forceinline__ void RowMaxSum(const RowGroup<kWarpRows>& group, const T* __restrict__ row,
                                          int64_t v, T* s_reduce, T* row_max, T* row_sum) {
  T mx = -static_cast<T>(INFINITY);
  for (int64_t i = group.rank; i < v; i += group.kSize) mx = Max(mx, row[i]);
  mx = group.MaxOf(mx, s_reduce);
  T sum = T(0);
  for (int64_t i = group.rank; i < v; i += group.kSize) sum += Exp(row[i] - mx);
  *row_max = mx;
  *row_sum = group.Sum(sum, s_reduce);
}

// ---- Forward. ----

// Stage 1: partials[2b] = sum over this block's rows of mask_r * CE_r, partials[2b + 1] = sum of
// mask_r (double). Rows with a nonzero mask and a target outside [0, v) are flagged and skipped.
template <typename T, bool kWarpRows>
__global__ void __launch_bounds__(kThreads)
    ForwardRowsKernel(const T* __restrict__ x, const int32_t* __restrict__ t, const T* __restrict__ m,
                      int64_t rows, int64_t v, double* __restrict__ partials, unsigned long long* flag) {
  __shared__ T s_reduce[kWarps];
  __shared__ double s_term[kWarps], s_mask[kWarps];
  const RowGroup<kWarpRows> group;
  double term = 0, mask_sum = 0;                                // the same in every thread of the group
  for (int64_t r = group.first; r < rows; r += group.stride) {  // branches are uniform in the group
    const T mr = m[r];
    mask_sum += static_cast<double>(mr);
    if (mr == T(0)) continue;
    const int32_t tr = t[r];
    if (tr < 0 || tr >= v) {
      if (group.rank == 0) atomicMin(flag, static_cast<unsigned long long>(r));
      continue;
    }
    const T* row = x + r * v;
    T mx, sum;
    RowMaxSum(group, row, v, s_reduce, &mx, &sum);
    term += static_cast<double>(mr) *
            (static_cast<double>(mx) + log(static_cast<double>(sum)) - static_cast<double>(row[tr]));
  }
  if (kWarpRows) {
    if ((threadIdx.x & 31) == 0) {
      s_term[threadIdx.x >> 5] = term;
      s_mask[threadIdx.x >> 5] = mask_sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kWarps; ++w) {
        term += s_term[w];
        mask_sum += s_mask[w];
      }
    }
  }
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = term;
    partials[2 * blockIdx.x + 1] = mask_sum;
  }
}

// Stage 2 (one block): loss = sum of terms / sum of masks over `count` pairs, 0 for a zero mask sum.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    FinalizeLossKernel(const double* __restrict__ partials, int64_t count, T* __restrict__ loss) {
  __shared__ double s_reduce[kWarps];
  double term = 0, mask_sum = 0;
  for (int64_t i = threadIdx.x; i < count; i += kThreads) {
    term += partials[2 * i];
    mask_sum += partials[2 * i + 1];
  }
  term = BlockSum(term, s_reduce);
  mask_sum = BlockSum(mask_sum, s_reduce);
  if (threadIdx.x == 0) loss[0] = static_cast<T>(mask_sum == 0 ? 0.0 : term / mask_sum);
}

// ---- Backward. ----

// One block: scale = g / sum(mask) (0 when the sum is 0), and the target check.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ScaleKernel(const int32_t* __restrict__ t, const T* __restrict__ m, const T* __restrict__ g, int64_t rows,
                int64_t v, double* __restrict__ scale, unsigned long long* flag) {
  __shared__ double s_reduce[kWarps];
  double mask_sum = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kThreads) {
    const T mr = m[r];
    mask_sum += static_cast<double>(mr);
    if (mr != T(0) && (t[r] < 0 || t[r] >= v)) atomicMin(flag, static_cast<unsigned long long>(r));
  }
  mask_sum = BlockSum(mask_sum, s_reduce);
  if (threadIdx.x == 0) *scale = mask_sum == 0 ? 0.0 : static_cast<double>(g[0]) / mask_sum;
}

template <typename T, bool kWarpRows>
__global__ void __launch_bounds__(kThreads)
    BackwardRowsKernel(const T* __restrict__ x, const int32_t* __restrict__ t, const T* __restrict__ m,
                       const double* __restrict__ scale_ptr, int64_t rows, int64_t v, T* __restrict__ dx) {
  __shared__ T s_reduce[kWarps];
  const RowGroup<kWarpRows> group;
  const double scale = *scale_ptr;
  for (int64_t r = group.first; r < rows; r += group.stride) {  // branches are uniform in the group
    T* drow = dx + r * v;
    const T mr = m[r];
    const int32_t tr = t[r];
    if (mr == T(0) || scale == 0.0 || tr < 0 || tr >= v) {
      for (int64_t i = group.rank; i < v; i += group.kSize) drow[i] = T(0);
      continue;
    }
    const T* row = x + r * v;
    T mx, sum;
    RowMaxSum(group, row, v, s_reduce, &mx, &sum);
    const double c = scale * static_cast<double>(mr);
    const T c_over_sum = static_cast<T>(c / static_cast<double>(sum));
    const T c_t = static_cast<T>(c);
    for (int64_t i = group.rank; i < v; i += group.kSize) {
      T value = MulRn(Exp(row[i] - mx), c_over_sum);
      if (i == tr) value -= c_t;
      drow[i] = value;
    }
  }
}

// ---- Launch helpers. ----

int64_t RowBlocks(int64_t rows, int64_t v) {
  const int64_t rows_per_block = v <= kWarpRowMaxV ? kWarps : 1;
  return std::max<int64_t>(1, (rows + rows_per_block - 1) / rows_per_block);
}

// Reads the flag back (synchronising the stream) unless the stream is being captured; on a bad row
// also fetches its target and mask for the message.
template <typename T>
cudaError_t FinishTargetCheck(const int32_t* t, const T* m, cudaStream_t stream,
                              const unsigned long long* flag, TargetCheck* check) {
  *check = TargetCheck();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t error = cudaStreamIsCapturing(stream, &capture);
  if (error != cudaSuccess) return error;
  if (capture != cudaStreamCaptureStatusNone) return cudaSuccess;  // checked stays false
  unsigned long long bad = kNoBadRow;
  error = cudaMemcpyAsync(&bad, flag, sizeof(bad), cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return error;
  check->checked = true;
  if (bad == kNoBadRow) return cudaSuccess;
  check->bad_row = static_cast<int64_t>(bad);
  T mask = T(0);
  error = cudaMemcpyAsync(&check->bad_target, t + bad, sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess)
    error = cudaMemcpyAsync(&mask, m + bad, sizeof(T), cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  check->bad_mask = static_cast<double>(mask);
  return error;
}

template <typename T>
const char* Forward(const T* x, const int32_t* t, const T* m, T* loss, int64_t rows, int64_t v,
                    cudaStream_t stream, TargetCheck* check) {
  double* scratch = nullptr;
  LAUNCHER_RETURN_IF_ERROR(ScratchFor(stream, &scratch));
  auto* flag = reinterpret_cast<unsigned long long*>(scratch + kFlagSlot);
  LAUNCHER_RETURN_IF_ERROR(cudaMemsetAsync(flag, 0xFF, sizeof(*flag), stream));  // kNoBadRow
  const int blocks = static_cast<int>(std::min(RowBlocks(rows, v), kMaxPartials));
  if (v <= kWarpRowMaxV) {
    ForwardRowsKernel<T, true><<<blocks, kThreads, 0, stream>>>(x, t, m, rows, v, scratch, flag);
  } else {
    ForwardRowsKernel<T, false><<<blocks, kThreads, 0, stream>>>(x, t, m, rows, v, scratch, flag);
  }
  LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  FinalizeLossKernel<T><<<1, kThreads, 0, stream>>>(scratch, blocks, loss);
  LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  LAUNCHER_RETURN_IF_ERROR(FinishTargetCheck(t, m, stream, flag, check));
  return nullptr;
}

template <typename T>
const char* Backward(const T* x, const int32_t* t, const T* m, const T* g, T* dx, int64_t rows, int64_t v,
                     cudaStream_t stream, TargetCheck* check) {
  double* scratch = nullptr;
  LAUNCHER_RETURN_IF_ERROR(ScratchFor(stream, &scratch));
  auto* flag = reinterpret_cast<unsigned long long*>(scratch + kFlagSlot);
  double* scale = scratch + kScaleSlot;
  LAUNCHER_RETURN_IF_ERROR(cudaMemsetAsync(flag, 0xFF, sizeof(*flag), stream));  // kNoBadRow
  ScaleKernel<T><<<1, kThreads, 0, stream>>>(t, m, g, rows, v, scale, flag);
  LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  if (rows > 0 && v > 0) {
    const int blocks = static_cast<int>(std::min(RowBlocks(rows, v), kMaxGrid));
    if (v <= kWarpRowMaxV) {
      BackwardRowsKernel<T, true><<<blocks, kThreads, 0, stream>>>(x, t, m, scale, rows, v, dx);
    } else {
      BackwardRowsKernel<T, false><<<blocks, kThreads, 0, stream>>>(x, t, m, scale, rows, v, dx);
    }
    LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  }
  LAUNCHER_RETURN_IF_ERROR(FinishTargetCheck(t, m, stream, flag, check));
  return nullptr;
}

}  // namespace

const char* LaunchMaskedCrossEntropyForward(bool f64, const void* logits, const int32_t* targets,
                                            const void* mask, void* loss, int64_t rows, int64_t v,
                                            void* stream, TargetCheck* check) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (f64) {
    return Forward<double>(static_cast<const double*>(logits), targets, static_cast<const double*>(mask),
                           static_cast<double*>(loss), rows, v, s, check);
  }
  return Forward<float>(static_cast<const float*>(logits), targets, static_cast<const float*>(mask),
                        static_cast<float*>(loss), rows, v, s, check);
}

const char* LaunchMaskedCrossEntropyBackward(bool f64, const void* logits, const int32_t* targets,
                                             const void* mask, const void* g, void* dlogits, int64_t rows,
                                             int64_t v, void* stream, TargetCheck* check) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (f64) {
    return Backward<double>(static_cast<const double*>(logits), targets, static_cast<const double*>(mask),
                            static_cast<const double*>(g), static_cast<double*>(dlogits), rows, v, s, check);
  }
  return Backward<float>(static_cast<const float*>(logits), targets, static_cast<const float*>(mask),
                         static_cast<const float*>(g), static_cast<float*>(dlogits), rows, v, s, check);
}

}  // namespace mimetic::ops::cuda
