// Host-only declarations of the CUDA matmul kernels (implemented in a later issue as matmul.cu,
// built with tools/cuda.bzl's cuda_library). Including this header needs no CUDA toolkit.
//
// The CUDA backend registers MatMulCuda for both op names at static initialisation:
//   core::RegisterCudaKernel("matmul", &MatMulCuda);
//   core::RegisterCudaKernel("matmul_sum_batch", &MatMulCuda);
#ifndef MIMETIC_OPS_MATMUL_CUDA_H_
#define MIMETIC_OPS_MATMUL_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/matmul.h"

namespace mimetic::ops {

// The core::CudaKernelFn for MatMulOp: downcasts `op` to MatMulOp, builds the GemmPlan with
// MakeGemmPlan(op, a, b, /*flatten=*/true) and calls LaunchGemmPlan on ctx.cuda_stream.
absl::Status MatMulCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                        absl::Span<const core::Tensor> out);

// Runs `plan` with cuBLAS on `stream` (a cudaStream_t): cublasSgemmStridedBatched (or Dgemm)
// for plain batches, sequential beta = 1 GEMMs for plan.accumulate. Row-major operands are passed
// to column-major cuBLAS as the transposed product (C^T = op(B)^T op(A)^T).
// a, b, c: device pointers of dtype `dtype` (f32 or f64).
absl::Status LaunchGemmPlan(const GemmPlan& plan, core::DType dtype, const void* a, const void* b, void* c,
                            void* stream);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_MATMUL_CUDA_H_
