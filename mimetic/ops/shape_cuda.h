// Host-only declarations of the CUDA kernels of the shape ops (shape.h). Implemented by a later
// CUDA issue in shape.cu and registered with core::RegisterCudaKernel under "transpose", "slice",
// "pad", "concat", "split" and "stop_gradient" ("reshape" is a view and needs no kernel); each
// launcher downcasts `op` to its class to read the attributes and runs on ctx.cuda_stream.
#ifndef MIMETIC_OPS_SHAPE_CUDA_H_
#define MIMETIC_OPS_SHAPE_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// TransposeOp: general permutation; tiled for swaps of the last two axes.
absl::Status LaunchTranspose(const core::Op& op, const core::ExecContext& ctx,
                             absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// SliceOp, PadOp, ConcatOp, SplitOp, StopGradientOp: strided copies (cudaMemcpy2DAsync-shaped).
absl::Status LaunchSlice(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out);
absl::Status LaunchPad(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                       absl::Span<const core::Tensor> out);
absl::Status LaunchConcat(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                          absl::Span<const core::Tensor> out);
absl::Status LaunchSplit(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out);
absl::Status LaunchCopy(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                        absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_SHAPE_CUDA_H_
