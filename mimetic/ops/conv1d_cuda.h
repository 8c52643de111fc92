// Host-only declarations of the causal depthwise conv1d CUDA kernels. They are implemented in
// conv1d.cu by a later issue and registered at static initialisation with
// core::RegisterCudaKernel(op.name(), fn), so this header (and the CPU build) needs no CUDA headers.
// Each has core::CudaKernelFn's signature and launches on ctx.cuda_stream (a cudaStream_t); f32 and
// f64; outputs pre-allocated, every element to be written.
#ifndef MIMETIC_OPS_CONV1D_CUDA_H_
#define MIMETIC_OPS_CONV1D_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// "causal_conv1d", CausalConv1dOp: (x (B, L, C), weight (C, K), bias (C)) -> (out (B, L, C)).
absl::Status CausalConv1dCuda(const core::Op& op, const core::ExecContext& ctx,
                              absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// "causal_conv1d_backward", CausalConv1dBackwardOp: (x, weight, dout) -> (dx (B, L, C),
// dweight (C, K), dbias (C)). The (B, L) reduction must be deterministic (no float atomics).
absl::Status CausalConv1dBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                      absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_CONV1D_CUDA_H_
