// Host-only declarations of the CUDA kernels of the elementwise ops (elementwise.h). Implemented by
// a later CUDA issue in elementwise.cu and registered with core::RegisterCudaKernel under each op
// name ("add", "sub", ..., "exp", ..., "cast", "where"); each launcher downcasts `op` to its class
// (BinaryOp, UnaryOp, CastOp, WhereOp) to read the kind and attributes, and runs on ctx.cuda_stream.
// Declarations only, so the CPU build has no CUDA dependency.
#ifndef MIMETIC_OPS_ELEMENTWISE_CUDA_H_
#define MIMETIC_OPS_ELEMENTWISE_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// BinaryOp (every BinaryKind): in = {a, b} broadcast to out[0].
absl::Status LaunchBinary(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                          absl::Span<const core::Tensor> out);
// UnaryOp (every UnaryKind): in = {x}, out = {y} of x's shape.
absl::Status LaunchUnary(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out);
// CastOp: in = {x}, out = {y} in the target dtype.
absl::Status LaunchCast(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                        absl::Span<const core::Tensor> out);
// WhereOp: in = {cond, a, b} broadcast to out[0].
absl::Status LaunchWhere(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_ELEMENTWISE_CUDA_H_
