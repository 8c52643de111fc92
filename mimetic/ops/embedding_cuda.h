// Host-only declarations of the CUDA embedding kernels (implemented in a later issue as
// embedding.cu, built with tools/cuda.bzl's cuda_library). Including this header needs no CUDA
// toolkit. The CUDA backend registers them at static initialisation:
//   core::RegisterCudaKernel("embedding", &EmbeddingCuda);
//   core::RegisterCudaKernel("embedding_backward", &EmbeddingBackwardCuda);
#ifndef MIMETIC_OPS_EMBEDDING_CUDA_H_
#define MIMETIC_OPS_EMBEDDING_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

// Gather: in = {table (V, D), ids (...) i32}, out = {(..., D)}. Out-of-range ids are counted on the
// device and reported as InvalidArgument (naming the first bad id and V) after the launch.
absl::Status EmbeddingCuda(const core::Op& op, const core::ExecContext& ctx,
                           absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// Deterministic scatter-add: in = {grad (..., D), ids (...) i32}, out = {(V, D)}. Tokens are
// sorted by id (stable) and each row is summed by one thread block in token order, so there are no
// float atomics and the result has the same bits every run.
absl::Status EmbeddingBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_EMBEDDING_CUDA_H_
