// Launchers of the data-movement CUDA kernels (shape.cu) behind transpose, slice, pad, concat,
// split, stop_gradient and (from reduce_cuda.cc) broadcast_to. Plain C++ with builtin types only,
// so the *_cuda.cc files (g++) and shape.cu (nvcc) share it without CUDA or absl headers.
//
//   // Slice [start, end) of axis 1 of x (outer, n, inner) f32: one row copy per outer index.
//   const int64_t row = inner * 4;
//   LaunchRowCopy(x + start * row, n * row, (end - start) * row, y, (end - start) * row,
//                 (end - start) * row, /*lead=*/0, outer, stream);
//
// The kernels copy bytes, so they serve every dtype; they move the widest unit (16, 8, 4 or 1
// bytes) that divides every size, stride and address involved. Every launcher returns nullptr on
// success or a static CUDA error string, runs on `stream` (a cudaStream_t), never synchronises
// and never allocates, so it can be captured in a CUDA graph.
#ifndef MIMETIC_OPS_SHAPE_SHAPE_KERNELS_H_
#define MIMETIC_OPS_SHAPE_SHAPE_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda_kernels {

// dst (contiguous, row-major over dims) [idx] = src[sum_d index_d(idx) * src_strides[d]]; strides
// in elements, 0 along broadcast dims. From ops::internal::MakeLoopPlan.
inline constexpr int kMaxCopyDims = 8;
struct GatherPlan {
  int ndim = 1;
  int64_t dims[kMaxCopyDims] = {};
  int64_t src_strides[kMaxCopyDims] = {};
};
// src_numel: elements addressable from src (bounds the index arithmetic); elem_size: bytes.
const char* LaunchGather(const void* src, int64_t src_numel, void* dst, const GatherPlan& plan, int elem_size,
                         void* stream);

// For each batch index b (offsets from the batch dims' strides) the (rows, cols) block
//   dst[b_dst + r * dst_row_stride + c] = src[b_src + r + c * src_col_stride]
// moved through 32 x 32 shared-memory tiles, so both the reads (along r) and the writes (along c)
// are coalesced. A transpose whose innermost output dim is not the input's innermost dim.
struct TransposePlan {
  int batch_ndim = 0;
  int64_t batch_dims[kMaxCopyDims] = {};
  int64_t batch_src_strides[kMaxCopyDims] = {};
  int64_t batch_dst_strides[kMaxCopyDims] = {};
  int64_t rows = 1, cols = 1;
  int64_t src_col_stride = 1, dst_row_stride = 1;
};
// elem_size: 4 or 8 bytes.
const char* LaunchTransposeTiled(const void* src, void* dst, const TransposePlan& plan, int elem_size,
                                 void* stream);

// For o < rows and j < dst_width (bytes):
//   dst[o * dst_pitch + j] = lead <= j < lead + src_width ? src[o * src_pitch + j - lead] : 0.
// Slice, pad (lead = the leading zeros), one piece of concat or of split.
const char* LaunchRowCopy(const void* src, int64_t src_pitch, int64_t src_width, void* dst, int64_t dst_pitch,
                          int64_t dst_width, int64_t lead, int64_t rows, void* stream);

// A contiguous device-to-device copy of `bytes` (cudaMemcpyAsync).
const char* LaunchDeviceCopy(void* dst, const void* src, int64_t bytes, void* stream);

}  // namespace mimetic::ops::cuda_kernels

#endif  // MIMETIC_OPS_SHAPE_SHAPE_KERNELS_H_
