// Host-only declarations of the CUDA kernels of the reductions (reduce.h). Implemented by a later
// CUDA issue in reduce.cu and registered with core::RegisterCudaKernel under "sum", "mean",
// "sum_to", "broadcast_to", "max", "argmax" and "max_backward"; each launcher downcasts `op` to its
// class (SumOp, SumToOp, BroadcastToOp, MaxOp, MaxBackwardOp) and runs on ctx.cuda_stream.
// Reductions must stay deterministic (fixed-order block partials, no atomics).
#ifndef MIMETIC_OPS_REDUCE_CUDA_H_
#define MIMETIC_OPS_REDUCE_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// SumOp (sum and mean): x viewed as (outer, n, inner) -> (outer, inner).
absl::Status LaunchSum(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                       absl::Span<const core::Tensor> out);
// SumToOp: sums over the broadcast dims of the target shape.
absl::Status LaunchSumTo(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out);
// BroadcastToOp: repeats x along broadcast dims.
absl::Status LaunchBroadcastTo(const core::Op& op, const core::ExecContext& ctx,
                               absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);
// MaxOp (max and argmax, first maximal index).
absl::Status LaunchMax(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                       absl::Span<const core::Tensor> out);
// MaxBackwardOp: in = {x, g}; scatters g to the first maximal element of each line.
absl::Status LaunchMaxBackward(const core::Op& op, const core::ExecContext& ctx,
                               absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_REDUCE_CUDA_H_
