// Launchers of the reduction CUDA kernels (reduce.cu). Plain C++ with builtin types only, so
// reduce_cuda.cc (g++) and reduce.cu (nvcc) share it without CUDA or absl headers.
//
//   SumPlan plan = ...;  // kept dims (outer), summed dims, contiguous inner run
//   if (const char* err = LaunchSum(kReduceF32, plan, x, y, /*scale=*/1.0, stream)) ...
//
// Every launcher returns nullptr on success or a static CUDA error string, runs on `stream`
// (a cudaStream_t), never synchronises and never allocates, so it can be captured in a CUDA graph.
// Results are deterministic: each output is reduced by one thread block in an order fixed by the
// shapes alone (strided per-thread partial sums, then warp shuffles and shared memory in a fixed
// tree); there are no atomics.
#ifndef MIMETIC_OPS_REDUCE_REDUCE_KERNELS_H_
#define MIMETIC_OPS_REDUCE_REDUCE_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda_kernels {

// Same values as core::DType kF32 / kF64.
inline constexpr int kReduceF32 = 0;
inline constexpr int kReduceF64 = 1;

// y[out(o) + i] = scale * sum_r x[in(o) + in(r) + i] for o over the kept dims, r over the summed
// dims and i in [0, inner) (the innermost kept run, contiguous in x and y; 1 when the innermost
// dim is summed). Offsets are sums of index * stride over the dims (outermost first; elements).
inline constexpr int kMaxReduceDims = 8;
struct SumPlan {
  int kept_ndim = 0;
  int64_t kept_dims[kMaxReduceDims] = {};
  int64_t kept_x_strides[kMaxReduceDims] = {};
  int64_t kept_y_strides[kMaxReduceDims] = {};
  int summed_ndim = 0;
  int64_t summed_dims[kMaxReduceDims] = {};
  int64_t summed_x_strides[kMaxReduceDims] = {};
  int64_t inner = 1;
};

// The sum (times `scale`) of the plan; f32 or f64. An empty summed range writes 0 * scale.
const char* LaunchSum(int dtype, const SumPlan& plan, const void* x, void* y, double scale, void* stream);

// Over x viewed as (outer, n, inner) with n >= 1, the first maximal element of each line
// (x[o, :, i]), with the reference's NaN rule (a NaN at index 0 wins; later NaNs are skipped):
//   kMaxValues:   y (outer, inner) in x's dtype = the maximum
//   kMaxIndices:  y (outer, inner) i32 = its index
//   kMaxBackward: y (outer, n, inner) = g[o, i] at the index, 0 elsewhere (g: (outer, inner))
inline constexpr int kMaxValues = 0;
inline constexpr int kMaxIndices = 1;
inline constexpr int kMaxBackward = 2;
const char* LaunchMax(int mode, int dtype, const void* x, const void* g, void* y, int64_t outer, int64_t n,
                      int64_t inner, void* stream);

}  // namespace mimetic::ops::cuda_kernels

#endif  // MIMETIC_OPS_REDUCE_REDUCE_KERNELS_H_
