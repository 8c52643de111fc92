// Host-only declarations of the CUDA matmul kernels (cuBLAS, implemented in matmul_cuda.cc and
// linked as //mimetic/ops:matmul_cuda). Including this header needs no CUDA toolkit.
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

// TF32 tensor cores for f32 GEMMs (cublasSetMathMode CUBLAS_TF32_TENSOR_OP_MATH): about 8x the f32
// throughput on A100/H100 with a 10-bit mantissa on the inputs. Off by default, so f32 results
// stay within the consistency tolerances of the CPU reference; f64 GEMMs never use it.
// Process-wide; takes effect on the next GEMM of every stream.
void SetCudaTf32(bool enabled);
bool CudaTf32();

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_MATMUL_CUDA_H_
