// Host-only declarations of the CUDA embedding kernels (embedding_cuda.cc over the kernels of
// embedding.cu, linked as //mimetic/ops:embedding_cuda). Including this header needs no CUDA
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
// device and reported as InvalidArgument (naming the first bad id and V) after the launch; not
// while the stream is being captured into a CUDA graph (no host synchronisation is possible then).
absl::Status EmbeddingCuda(const core::Op& op, const core::ExecContext& ctx,
                           absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// Deterministic scatter-add: in = {grad (..., D), ids (...) i32}, out = {(V, D)}. Sort-free: each
// thread block owns a range of table rows and a column tile, scans the ids in token order and sums
// its rows' gradients in token order (embedding.cu), so there are no float atomics and the result
// has the reference's bits, every run. Out-of-range ids are reported like EmbeddingCuda's.
absl::Status EmbeddingBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_EMBEDDING_CUDA_H_
