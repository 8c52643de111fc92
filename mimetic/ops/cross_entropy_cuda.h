// Host-only declarations of the CUDA masked cross-entropy kernels (cross_entropy_cuda.cc over the
// kernels of cross_entropy.cu, linked as //mimetic/ops:cross_entropy_cuda). Including this header
// needs no CUDA toolkit. The CUDA backend registers them at static initialisation:
//   core::RegisterCudaKernel("masked_cross_entropy", &MaskedCrossEntropyCuda);
//   core::RegisterCudaKernel("masked_cross_entropy_backward", &MaskedCrossEntropyBackwardCuda);
#ifndef MIMETIC_OPS_CROSS_ENTROPY_CUDA_H_
#define MIMETIC_OPS_CROSS_ENTROPY_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

// in = {logits (..., V), targets (...) i32, mask (...)}, out = {loss ()}. One warp (V <= 1024) or
// one block per row computes a max-subtracted logsumexp; a fixed grid of blocks sums its rows'
// terms into per-block partials that one block then sums in a fixed order (no atomics), so the loss
// has the same bits every run. Bad targets under a nonzero mask are flagged on the device and
// reported as InvalidArgument after the launch (not while the stream is captured into a graph).
absl::Status MaskedCrossEntropyCuda(const core::Op& op, const core::ExecContext& ctx,
                                    absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// in = {logits, targets, mask, g ()}, out = {dlogits (..., V)}: one block reduces sum(mask) to the
// scale g / sum(mask), then one warp or block per row writes its softmax-minus-onehot.
absl::Status MaskedCrossEntropyBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                            absl::Span<const core::Tensor> in,
                                            absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_CROSS_ENTROPY_CUDA_H_
