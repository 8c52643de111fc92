// CUDA kernels of the causal depthwise conv1d (launchers declared in conv1d_kernels.h). Semantics
// follow ConvRef / ConvBackwardRef in conv1d.cc.
//
// Work is split into (row run, channel) items over the flattened B*L rows: consecutive threads take
// consecutive channels, so every load and store of a row is coalesced. A thread walks its run of
// rows in time order keeping a sliding window of the K-1 previous inputs (forward; backward also the
// K-1 next output gradients) in registers, reset where a new sequence starts, so each element is
// loaded about once. K = 1..4 are compiled with the window unrolled; other K use a plain loop.
//
// Backward: the run of rows of a thread is a reduction chunk of a size that depends only on the
// shapes. The thread writes dx for its rows and its chunk's partial dweight / dbias sums (rows added
// in time order) into scratch; a second kernel adds the chunks in order. No atomics: same input,
// same bits.
//
// The SiLU-fused op (causal_conv1d_silu) writes the conv and its SiLU from the same registers; its
// backward forms dout SiLU'(conv) in scratch and runs the plain backward on it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/conv1d/conv1d_kernels.h"
#include "mimetic/ops/cuda/cuda_scratch.cuh"

namespace mimetic::ops::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGridBlocks = 1 << 16;  // grid-stride loops cover the rest
constexpr int64_t kForwardRowsPerItem = 16;
// Backward reduction chunks: at least kMinRowsPerChunk rows each, at most kMaxChunks chunks.
constexpr int64_t kMinRowsPerChunk = 32;
constexpr int64_t kMaxChunks = 512;

__host__ __device__ __forceinline__ int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RowsPerChunk(int64_t rows) { return std::max(kMinRowsPerChunk, CeilDiv(rows, kMaxChunks)); }
int64_t NumChunks(int64_t rows) { return rows == 0 ? 0 : CeilDiv(rows, RowsPerChunk(rows)); }
unsigned GridBlocks(int64_t work_items) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(CeilDiv(work_items, kThreads), kMaxGridBlocks)));
}

using ::mimetic::ops::cuda_internal::Scratch;

struct ConvShape {
  int64_t rows;  // B * L
  int64_t l;
  int64_t c;
  int64_t k;
};

// SiLU and its derivative (the reference formulas of elementwise.cc / silu.h).
template <typename T>
__device__ __forceinline__ T Silu(T x) {
  return x / (T(1) + exp(-x));
}
template <typename T>
__device__ __forceinline__ T SiluGrad(T x) {
  const T s = T(1) / (T(1) + exp(-x));
  return s * (T(1) + x * (T(1) - s));
}

// g[i] = dout[i] SiLU'(conv[i]): the conv's cotangent in the SiLU-fused backward.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    SiluCotangentKernel(const T* __restrict__ conv, const T* __restrict__ dout, T* __restrict__ g,
                        int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    g[i] = dout[i] * SiluGrad(conv[i]);
  }
}

// Item = (run of rows_per_item rows, channel); out[r, ch] for the run, and act[r, ch] = SiLU(out[r, ch])
// unless act is null (the SiLU-fused forward: out is the conv, act the activation).
template <typename T, int kK>
__global__ void __launch_bounds__(kThreads)
    ConvForwardKernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                      T* __restrict__ out, T* __restrict__ act, const ConvShape sh, int64_t rows_per_item) {
  const int64_t l = sh.l, c = sh.c;
  const int64_t items = CeilDiv(sh.rows, rows_per_item) * c;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items;
       item += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = item % c;
    const int64_t r0 = (item / c) * rows_per_item;
    const int64_t r1 = r0 + rows_per_item < sh.rows ? r0 + rows_per_item : sh.rows;
    const T b = bias[ch];
    if constexpr (kK > 0) {
      T wr[kK];
      T win[kK];  // win[j]: x at time t - (K-1) + j
#pragma unroll
      for (int j = 0; j < kK; ++j) wr[j] = w[ch * kK + j];
      int64_t t = r0 % l;
#pragma unroll
      for (int j = 0; j < kK - 1; ++j) {
        win[j] = t - (kK - 1) + j >= 0 ? x[(r0 - (kK - 1) + j) * c + ch] : T(0);
      }
      for (int64_t r = r0; r < r1; ++r, ++t) {
        if (t == l) {  // a new sequence: nothing before it
          t = 0;
#pragma unroll
          for (int j = 0; j < kK - 1; ++j) win[j] = T(0);
        }
        win[kK - 1] = x[r * c + ch];
        T acc = b;
#pragma unroll
        for (int j = 0; j < kK; ++j) acc += wr[j] * win[j];
        out[r * c + ch] = acc;
        if (act != nullptr) act[r * c + ch] = Silu(acc);
#pragma unroll
        for (int j = 0; j < kK - 1; ++j) win[j] = win[j + 1];
      }
    } else {
      const int64_t k = sh.k;
      const T* wc = w + ch * k;
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t t = r % l;
        T acc = b;
        for (int64_t j = (k - 1 - t > 0 ? k - 1 - t : 0); j < k; ++j)
          acc += wc[j] * x[(r - (k - 1) + j) * c + ch];
        out[r * c + ch] = acc;
        if (act != nullptr) act[r * c + ch] = Silu(acc);
      }
    }
  }
}

// Item = (chunk, channel): dx for the chunk's rows, and partial[chunk] = (dweight taps (K, C) then
// dbias (C)) summed over the chunk's rows in time order.
template <typename T, int kK>
__global__ void __launch_bounds__(kThreads)
    ConvBackwardKernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dout,
                       T* __restrict__ dx, T* __restrict__ partial, const ConvShape sh,
                       int64_t rows_per_chunk, int64_t chunks) {
  const int64_t l = sh.l, c = sh.c;
  const int64_t items = chunks * c;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items;
       item += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = item % c;
    const int64_t chunk = item / c;
    const int64_t r0 = chunk * rows_per_chunk;
    const int64_t r1 = r0 + rows_per_chunk < sh.rows ? r0 + rows_per_chunk : sh.rows;
    if constexpr (kK > 0) {
      T* p = partial + chunk * (kK + 1) * c + ch;
      T wr[kK];
      T xwin[kK];  // xwin[j]: x at time t - (K-1) + j
      T gwin[kK];  // gwin[m]: dout at time t + m (0 past the sequence end)
      T acc[kK];
      T acc_b = 0;
#pragma unroll
      for (int j = 0; j < kK; ++j) {
        wr[j] = w[ch * kK + j];
        acc[j] = T(0);
      }
      int64_t t = r0 % l;
      bool fresh = true;
      for (int64_t r = r0; r < r1; ++r, ++t) {
        if (t == l) t = 0;
        if (fresh || t == 0) {  // (re)load the windows: first row of the chunk or of a sequence
#pragma unroll
          for (int j = 0; j < kK - 1; ++j) {
            xwin[j] = t - (kK - 1) + j >= 0 ? x[(r - (kK - 1) + j) * c + ch] : T(0);
            gwin[j] = t + j < l ? dout[(r + j) * c + ch] : T(0);
          }
          fresh = false;
        }
        xwin[kK - 1] = x[r * c + ch];
        gwin[kK - 1] = t + (kK - 1) < l ? dout[(r + (kK - 1)) * c + ch] : T(0);
        // dx[t] = sum_j w[j] dout[t + (K-1) - j], j ascending as in the reference.
        T d = 0;
#pragma unroll
        for (int j = 0; j < kK; ++j) d += wr[j] * gwin[kK - 1 - j];
        dx[r * c + ch] = d;
        const T g = gwin[0];
#pragma unroll
        for (int j = 0; j < kK; ++j) acc[j] += g * xwin[j];
        acc_b += g;
#pragma unroll
        for (int j = 0; j < kK - 1; ++j) {
          xwin[j] = xwin[j + 1];
          gwin[j] = gwin[j + 1];
        }
      }
#pragma unroll
      for (int j = 0; j < kK; ++j) p[j * c] = acc[j];
      p[kK * c] = acc_b;
    } else {
      const int64_t k = sh.k;
      T* p = partial + chunk * (k + 1) * c + ch;
      const T* wc = w + ch * k;
      T acc_b = 0;
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t t = r % l;
        const T g = dout[r * c + ch];
        T d = 0;
        for (int64_t j = (t + k - l > 0 ? t + k - l : 0); j < k; ++j)
          d += wc[j] * dout[(r + (k - 1) - j) * c + ch];
        dx[r * c + ch] = d;
        acc_b += g;
      }
      p[k * c] = acc_b;
      for (int64_t j = 0; j < k; ++j) {
        T acc = 0;
        for (int64_t r = r0; r < r1; ++r) {
          if (r % l >= k - 1 - j) acc += dout[r * c + ch] * x[(r - (k - 1) + j) * c + ch];
        }
        p[j * c] = acc;
      }
    }
  }
}

// dw[ch, j] = sum_chunks partial[chunk][j * C + ch]; db[ch] = sum_chunks partial[chunk][K * C + ch];
// chunks added in order (zeros when there are none).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ConvSumChunksKernel(const T* __restrict__ partial, T* __restrict__ dw, T* __restrict__ db, int64_t chunks,
                        int64_t c, int64_t k) {
  const int64_t n = (k + 1) * c;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < n;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T acc = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) acc += partial[chunk * n + o];
    const int64_t j = o / c, ch = o % c;
    if (j < k) {
      dw[ch * k + j] = acc;
    } else {
      db[ch] = acc;
    }
  }
}

template <typename T>
const char* ForwardImpl(const T* x, const T* w, const T* bias, T* out, T* act, int64_t b, int64_t l,
                        int64_t c, int64_t k, void* stream_ptr) {
  const ConvShape sh{b * l, l, c, k};
  if (sh.rows == 0) return nullptr;
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const unsigned blocks = GridBlocks(CeilDiv(sh.rows, kForwardRowsPerItem) * c);
  switch (k) {
    case 1:
      ConvForwardKernel<T, 1><<<blocks, kThreads, 0, stream>>>(x, w, bias, out, act, sh, kForwardRowsPerItem);
      break;
    case 2:
      ConvForwardKernel<T, 2><<<blocks, kThreads, 0, stream>>>(x, w, bias, out, act, sh, kForwardRowsPerItem);
      break;
    case 3:
      ConvForwardKernel<T, 3><<<blocks, kThreads, 0, stream>>>(x, w, bias, out, act, sh, kForwardRowsPerItem);
      break;
    case 4:
      ConvForwardKernel<T, 4><<<blocks, kThreads, 0, stream>>>(x, w, bias, out, act, sh, kForwardRowsPerItem);
      break;
    default:
      ConvForwardKernel<T, 0><<<blocks, kThreads, 0, stream>>>(x, w, bias, out, act, sh, kForwardRowsPerItem);
      break;
  }
  LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  return nullptr;
}

template <typename T>
const char* BackwardImpl(const T* x, const T* w, const T* dout, T* dx, T* dw, T* db, int64_t b, int64_t l,
                         int64_t c, int64_t k, void* stream_ptr) {
  const ConvShape sh{b * l, l, c, k};
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t chunks = NumChunks(sh.rows);
  const int64_t rows_per_chunk = RowsPerChunk(sh.rows);
  Scratch scratch(stream);
  LAUNCHER_RETURN_IF_ERROR(scratch.Allocate(static_cast<size_t>(chunks * (k + 1) * c) * sizeof(T)));
  T* partial = scratch.as<T>();
  if (chunks > 0) {
    const unsigned blocks = GridBlocks(chunks * c);
    switch (k) {
      case 1:
        ConvBackwardKernel<T, 1>
            <<<blocks, kThreads, 0, stream>>>(x, w, dout, dx, partial, sh, rows_per_chunk, chunks);
        break;
      case 2:
        ConvBackwardKernel<T, 2>
            <<<blocks, kThreads, 0, stream>>>(x, w, dout, dx, partial, sh, rows_per_chunk, chunks);
        break;
      case 3:
        ConvBackwardKernel<T, 3>
            <<<blocks, kThreads, 0, stream>>>(x, w, dout, dx, partial, sh, rows_per_chunk, chunks);
        break;
      case 4:
        ConvBackwardKernel<T, 4>
            <<<blocks, kThreads, 0, stream>>>(x, w, dout, dx, partial, sh, rows_per_chunk, chunks);
        break;
      default:
        ConvBackwardKernel<T, 0>
            <<<blocks, kThreads, 0, stream>>>(x, w, dout, dx, partial, sh, rows_per_chunk, chunks);
        break;
    }
    LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  }
  ConvSumChunksKernel<T><<<GridBlocks((k + 1) * c), kThreads, 0, stream>>>(partial, dw, db, chunks, c, k);
  LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  LAUNCHER_RETURN_IF_ERROR(scratch.Release());
  return nullptr;
}

// The SiLU-fused backward: g = dout SiLU'(conv) in scratch, then the plain backward on g.
template <typename T>
const char* SiluBackwardImpl(const T* x, const T* w, const T* conv, const T* dout, T* dx, T* dw, T* db,
                             int64_t b, int64_t l, int64_t c, int64_t k, void* stream_ptr) {
  const int64_t n = b * l * c;
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  Scratch scratch(stream);
  LAUNCHER_RETURN_IF_ERROR(scratch.Allocate(static_cast<size_t>(n) * sizeof(T)));
  T* g = scratch.as<T>();
  if (n > 0) {
    SiluCotangentKernel<T><<<GridBlocks(n), kThreads, 0, stream>>>(conv, dout, g, n);
    LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
  }
  if (const char* err = BackwardImpl(x, w, g, dx, dw, db, b, l, c, k, stream_ptr)) return err;
  LAUNCHER_RETURN_IF_ERROR(scratch.Release());
  return nullptr;
}

}  // namespace

const char* LaunchCausalConv1d(const float* x, const float* w, const float* bias, float* out, int64_t b,
                               int64_t l, int64_t c, int64_t k, void* stream) {
  return ForwardImpl(x, w, bias, out, static_cast<float*>(nullptr), b, l, c, k, stream);
}
const char* LaunchCausalConv1d(const double* x, const double* w, const double* bias, double* out, int64_t b,
                               int64_t l, int64_t c, int64_t k, void* stream) {
  return ForwardImpl(x, w, bias, out, static_cast<double*>(nullptr), b, l, c, k, stream);
}

const char* LaunchCausalConv1dBackward(const float* x, const float* w, const float* dout, float* dx,
                                       float* dw, float* db, int64_t b, int64_t l, int64_t c, int64_t k,
                                       void* stream) {
  return BackwardImpl(x, w, dout, dx, dw, db, b, l, c, k, stream);
}
const char* LaunchCausalConv1dBackward(const double* x, const double* w, const double* dout, double* dx,
                                       double* dw, double* db, int64_t b, int64_t l, int64_t c, int64_t k,
                                       void* stream) {
  return BackwardImpl(x, w, dout, dx, dw, db, b, l, c, k, stream);
}

const char* LaunchCausalConv1dSilu(const float* x, const float* w, const float* bias, float* act, float* conv,
                                   int64_t b, int64_t l, int64_t c, int64_t k, void* stream) {
  return ForwardImpl(x, w, bias, conv, act, b, l, c, k, stream);
}
const char* LaunchCausalConv1dSilu(const double* x, const double* w, const double* bias, double* act,
                                   double* conv, int64_t b, int64_t l, int64_t c, int64_t k, void* stream) {
  return ForwardImpl(x, w, bias, conv, act, b, l, c, k, stream);
}

const char* LaunchCausalConv1dSiluBackward(const float* x, const float* w, const float* conv,
                                           const float* dout, float* dx, float* dw, float* db, int64_t b,
                                           int64_t l, int64_t c, int64_t k, void* stream) {
  return SiluBackwardImpl(x, w, conv, dout, dx, dw, db, b, l, c, k, stream);
}
const char* LaunchCausalConv1dSiluBackward(const double* x, const double* w, const double* conv,
                                           const double* dout, double* dx, double* dw, double* db, int64_t b,
                                           int64_t l, int64_t c, int64_t k, void* stream) {
  return SiluBackwardImpl(x, w, conv, dout, dx, dw, db, b, l, c, k, stream);
}

}  // namespace mimetic::ops::cuda_kernels
