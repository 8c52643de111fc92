// Host-only declarations of the norm family's CUDA kernels. They are implemented in norm.cu by a
// later issue and registered at static initialisation with core::RegisterCudaKernel(op.name(), fn),
// so this header (and the CPU build) needs no CUDA headers. Each has core::CudaKernelFn's signature:
// it downcasts `op` to the class named below to read the attributes, and launches on
// ctx.cuda_stream (a cudaStream_t). Inputs and outputs are as documented on the op classes in
// norm.h (f32 and f64; outputs pre-allocated, every element to be written).
#ifndef MIMETIC_OPS_NORM_CUDA_H_
#define MIMETIC_OPS_NORM_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// "rms_norm", RmsNormOp: (x (..., D), weight (D)) -> (y (..., D)).
absl::Status RmsNormCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out);
// "rms_norm_backward", RmsNormBackwardOp: (x, weight, dout) -> (dx, dweight). dweight must be
// reduced deterministically (per-block partials combined in a fixed order; no float atomics).
absl::Status RmsNormBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                 absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// "layer_norm", LayerNormOp: (x (..., D), weight (D), bias (D)) -> (y (..., D)).
absl::Status LayerNormCuda(const core::Op& op, const core::ExecContext& ctx,
                           absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// "layer_norm_backward", LayerNormBackwardOp: (x, weight, dout) -> (dx, dweight, dbias).
absl::Status LayerNormBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// "gated_rms_norm", GatedRmsNormOp: (y (..., E), z (..., E), weight (E)) -> (out (..., E)).
absl::Status GatedRmsNormCuda(const core::Op& op, const core::ExecContext& ctx,
                              absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// "gated_rms_norm_backward", GatedRmsNormBackwardOp: (y, z, weight, dout) -> (dy, dz, dweight).
absl::Status GatedRmsNormBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                      absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_NORM_CUDA_H_
