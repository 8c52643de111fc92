// CUDA data-movement kernels of the shape ops (shape.h) and of broadcast_to: a strided gather
// over a collapsed plan, a shared-memory tiled transpose, and a row copy with zero fill. All of
// them copy opaque units of 1 to 16 bytes, chosen per call as the widest unit dividing every size,
// stride and address involved (float4-sized moves for the usual contiguous rows). Pure copies:
// every output element is written exactly once, so results are bit-exact and deterministic.
#include <cuda_runtime.h>

#include <cstdint>

#include "mimetic/ops/shape/shape_kernels.h"

namespace mimetic::ops::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;
constexpr int kTile = 32;
constexpr int kTileRowsPerPass = 8;  // block (32, 8): each thread moves 4 elements of a tile
constexpr int64_t kMaxGridYZ = 65535;

int Blocks(int64_t work_items) {
  int64_t blocks = (work_items + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<int>(blocks);
}

const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

uint64_t Address(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// The widest of 16, 8, 4, 2, 1 bytes dividing `bits` (an OR of every byte quantity involved).
int WidestUnit(uint64_t bits) {
  for (int u : {16, 8, 4, 2}) {
    if (bits % static_cast<uint64_t>(u) == 0) return u;
  }
  return 1;
}

// Calls f(U()) with U an opaque type of `unit` bytes.
template <typename F>
const char* DispatchUnit(int unit, F&& f) {
  switch (unit) {
    case 16:
      return f(uint4());
    case 8:
      return f(uint2());
    case 4:
      return f(uint32_t());
    case 2:
      return f(uint16_t());
    case 1:
      return f(uint8_t());
    default:
      return "unsupported copy unit";
  }
}

// ---- gather ----

template <typename Index>
__device__ __forceinline__ Index GatherOffset(const GatherPlan& p, Index idx) {
  Index off = 0;
#pragma unroll
  for (int d = kMaxCopyDims - 1; d >= 1; --d) {
    if (d < p.ndim) {
      const Index dim = static_cast<Index>(p.dims[d]);
      const Index q = idx / dim;
      off += (idx - q * dim) * static_cast<Index>(p.src_strides[d]);
      idx = q;
    }
  }
  return off + idx * static_cast<Index>(p.src_strides[0]);
}

template <typename U, typename Index>
__global__ void GatherKernel(const U* __restrict__ src, U* __restrict__ dst, const GatherPlan plan, Index n) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = src[GatherOffset<Index>(plan, i)];
  }
}

// ---- tiled transpose ----

__device__ __forceinline__ void BatchOffsets(const TransposePlan& p, int64_t b, int64_t* src_off,
                                             int64_t* dst_off) {
  int64_t so = 0, dso = 0;
#pragma unroll
  for (int d = kMaxCopyDims - 1; d >= 0; --d) {
    if (d < p.batch_ndim) {
      const int64_t q = b / p.batch_dims[d];
      const int64_t c = b - q * p.batch_dims[d];
      so += c * p.batch_src_strides[d];
      dso += c * p.batch_dst_strides[d];
      b = q;
    }
  }
  *src_off = so;
  *dst_off = dso;
}

// Block (32, 8); blockIdx.x: a tile of 32 columns; blockIdx.y, blockIdx.z: row tiles and batch
// indices in grid-stride loops (their grid dims are capped at 65535). The +1 column of padding
// makes the column-wise shared-memory reads conflict-free.
template <typename U>
__global__ void __launch_bounds__(kTile* kTileRowsPerPass)
    TransposeTiledKernel(const U* __restrict__ src, U* __restrict__ dst, const TransposePlan p,
                         int64_t batches, int64_t row_tiles) {
  __shared__ U tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int64_t b = blockIdx.z; b < batches; b += gridDim.z) {
    int64_t src_off, dst_off;
    BatchOffsets(p, b, &src_off, &dst_off);
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      const int64_t r0 = rt * kTile;
      // Read along r (unit stride in src): tile[c][r].
      const int64_t r = r0 + tx;
#pragma unroll
      for (int k = ty; k < kTile; k += kTileRowsPerPass) {
        const int64_t c = c0 + k;
        if (r < p.rows && c < p.cols) tile[k][tx] = src[src_off + r + c * p.src_col_stride];
      }
      __syncthreads();
      // Write along c (unit stride in dst).
      const int64_t c = c0 + tx;
#pragma unroll
      for (int k = ty; k < kTile; k += kTileRowsPerPass) {
        const int64_t rr = r0 + k;
        if (rr < p.rows && c < p.cols) dst[dst_off + rr * p.dst_row_stride + c] = tile[tx][k];
      }
      __syncthreads();
    }
  }
}

// ---- row copy with zero fill ----

template <typename U, typename Index>
__global__ void RowCopyKernel(const U* __restrict__ src, Index src_pitch, Index src_width,
                              U* __restrict__ dst, Index dst_pitch, Index dst_width, Index lead, Index n) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Index o = i / dst_width;
    const Index j = i - o * dst_width;
    U v{};
    if (j >= lead && j - lead < src_width) v = src[o * src_pitch + (j - lead)];
    dst[o * dst_pitch + j] = v;
  }
}

}  // namespace

const char* LaunchGather(const void* src, int64_t src_numel, void* dst, const GatherPlan& plan, int elem_size,
                         void* stream) {
  if (plan.ndim < 1 || plan.ndim > kMaxCopyDims) return "gather plan rank out of range";
  if (elem_size <= 0) return "bad element size";
  int64_t n = 1;
  for (int d = 0; d < plan.ndim; ++d) n *= plan.dims[d];
  if (n <= 0) return nullptr;
  // Wider units when the innermost dim is a contiguous run of src whose byte length, the other
  // strides in bytes, and both addresses allow it.
  GatherPlan p = plan;
  const int last = p.ndim - 1;
  int unit = elem_size;
  if (p.src_strides[last] == 1) {
    uint64_t bits = static_cast<uint64_t>(p.dims[last] * elem_size) | Address(src) | Address(dst);
    for (int d = 0; d < last; ++d) bits |= static_cast<uint64_t>(p.src_strides[d] * elem_size);
    const int widest = WidestUnit(bits);
    if (widest > elem_size && widest % elem_size == 0) unit = widest;
  }
  if (unit != elem_size) {
    const int64_t f = unit / elem_size;
    p.dims[last] /= f;
    for (int d = 0; d < last; ++d) p.src_strides[d] /= f;
    n /= f;
  }
  const int64_t src_units = src_numel * elem_size / unit;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  return DispatchUnit(unit, [&](auto tag) -> const char* {
    using U = decltype(tag);
    const U* ps = static_cast<const U*>(src);
    U* pd = static_cast<U*>(dst);
    if (n <= INT32_MAX && src_units <= INT32_MAX) {
      GatherKernel<U, uint32_t><<<Blocks(n), kThreads, 0, s>>>(ps, pd, p, static_cast<uint32_t>(n));
    } else {
      GatherKernel<U, int64_t><<<Blocks(n), kThreads, 0, s>>>(ps, pd, p, n);
    }
    return LastError();
  });
}

const char* LaunchTransposeTiled(const void* src, void* dst, const TransposePlan& plan, int elem_size,
                                 void* stream) {
  if (plan.batch_ndim < 0 || plan.batch_ndim > kMaxCopyDims) return "transpose plan rank out of range";
  int64_t batches = 1;
  for (int d = 0; d < plan.batch_ndim; ++d) batches *= plan.batch_dims[d];
  if (batches <= 0 || plan.rows <= 0 || plan.cols <= 0) return nullptr;
  const int64_t row_tiles = (plan.rows + kTile - 1) / kTile;
  const int64_t col_tiles = (plan.cols + kTile - 1) / kTile;
  if (col_tiles > INT32_MAX) return "transpose too wide";
  const dim3 grid(static_cast<unsigned>(col_tiles),
                  static_cast<unsigned>(row_tiles < kMaxGridYZ ? row_tiles : kMaxGridYZ),
                  static_cast<unsigned>(batches < kMaxGridYZ ? batches : kMaxGridYZ));
  const dim3 block(kTile, kTileRowsPerPass);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (elem_size) {
    case 4:
      TransposeTiledKernel<uint32_t><<<grid, block, 0, s>>>(
          static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), plan, batches, row_tiles);
      break;
    case 8:
      TransposeTiledKernel<unsigned long long><<<grid, block, 0, s>>>(  // NOLINT(runtime/int)
          static_cast<const unsigned long long*>(src), static_cast<unsigned long long*>(dst),  // NOLINT
          plan, batches, row_tiles);
      break;
    default:
      return "unsupported transpose element size";
  }
  return LastError();
}

const char* LaunchRowCopy(const void* src, int64_t src_pitch, int64_t src_width, void* dst, int64_t dst_pitch,
                          int64_t dst_width, int64_t lead, int64_t rows, void* stream) {
  if (rows <= 0 || dst_width <= 0) return nullptr;
  if (src_width < 0 || lead < 0 || src_pitch < 0 || dst_pitch < dst_width) return "bad row copy geometry";
  const int unit = WidestUnit(static_cast<uint64_t>(src_pitch | src_width | dst_pitch | dst_width | lead) |
                              Address(src) | Address(dst));
  const int64_t sp = src_pitch / unit, sw = src_width / unit, dp = dst_pitch / unit, dw = dst_width / unit,
                ld = lead / unit;
  const int64_t n = rows * dw;
  const int64_t dst_extent = (rows - 1) * dp + dw;
  const int64_t src_extent = (rows - 1) * sp + ld + sw;
  const bool small = n <= INT32_MAX && dst_extent <= INT32_MAX && src_extent <= INT32_MAX;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  return DispatchUnit(unit, [&](auto tag) -> const char* {
    using U = decltype(tag);
    const U* ps = static_cast<const U*>(src);
    U* pd = static_cast<U*>(dst);
    if (small) {
      RowCopyKernel<U, uint32_t><<<Blocks(n), kThreads, 0, s>>>(
          ps, static_cast<uint32_t>(sp), static_cast<uint32_t>(sw), pd, static_cast<uint32_t>(dp),
          static_cast<uint32_t>(dw), static_cast<uint32_t>(ld), static_cast<uint32_t>(n));
    } else {
      RowCopyKernel<U, int64_t><<<Blocks(n), kThreads, 0, s>>>(ps, sp, sw, pd, dp, dw, ld, n);
    }
    return LastError();
  });
}

const char* LaunchDeviceCopy(void* dst, const void* src, int64_t bytes, void* stream) {
  if (bytes <= 0) return nullptr;
  const cudaError_t e = cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                        static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace mimetic::ops::cuda_kernels
