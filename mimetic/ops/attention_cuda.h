// CUDA launchers for causal softmax / linear attention (attention.h). Host-only header: no CUDA
// types, so the CPU build compiles without CUDA. Declarations only; the kernels (attention.cu) come
// in a later issue and register themselves at static initialisation with
//   core::RegisterCudaKernel(op.name(), &LaunchCausalAttention...)
// under each op's names ("causal_softmax_attention", "causal_linear_attention", their "_backward",
// "_weights" and "_weights_backward" variants). Each launcher downcasts `op` to the class named
// below to read kind() and scale(), reads the sizes with GetAttentionDims, runs on ctx.cuda_stream
// (a cudaStream_t), and fills every output element. Suggested kernels: flash-style streaming
// softmax over key blocks for the forward (one CTA per (b, h, query block), row max and sum kept in
// registers), the same recomputation in the backward; linear attention as the same tiles without
// the softmax (or cuBLAS strided-batched GEMMs on the (L, L) masked scores at L <= 1k).
#ifndef MIMETIC_OPS_ATTENTION_CUDA_H_
#define MIMETIC_OPS_ATTENTION_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// CausalAttentionOp. in: q, k (B, L, H, Pk), v (B, L, H, Pv). out: (B, L, H, Pv).
absl::Status LaunchCausalAttention(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// CausalAttentionBackwardOp. in: q, k, v, dout (B, L, H, Pv). out: dq, dk (B, L, H, Pk), dv (B, L, H, Pv).
absl::Status LaunchCausalAttentionBackward(const core::Op& op, const core::ExecContext& ctx,
                                           absl::Span<const core::Tensor> in,
                                           absl::Span<const core::Tensor> out);

// CausalAttentionWeightsOp. in: q, k (B, L, H, Pk). out: weights (B, H, L, L), zeros above the diagonal.
absl::Status LaunchCausalAttentionWeights(const core::Op& op, const core::ExecContext& ctx,
                                          absl::Span<const core::Tensor> in,
                                          absl::Span<const core::Tensor> out);

// CausalAttentionWeightsBackwardOp. in: q, k, dweights (B, H, L, L). out: dq, dk (B, L, H, Pk).
absl::Status LaunchCausalAttentionWeightsBackward(const core::Op& op, const core::ExecContext& ctx,
                                                  absl::Span<const core::Tensor> in,
                                                  absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_ATTENTION_CUDA_H_
