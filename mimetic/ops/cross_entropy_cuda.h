// Host-only declarations of the CUDA masked cross-entropy kernels (implemented in a later issue as
// cross_entropy.cu, built with tools/cuda.bzl's cuda_library). Including this header needs no CUDA
// toolkit. The CUDA backend registers them at static initialisation:
//   core::RegisterCudaKernel("masked_cross_entropy", &MaskedCrossEntropyCuda);
//   core::RegisterCudaKernel("masked_cross_entropy_backward", &MaskedCrossEntropyBackwardCuda);
#ifndef MIMETIC_OPS_CROSS_ENTROPY_CUDA_H_
#define MIMETIC_OPS_CROSS_ENTROPY_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

// in = {logits (..., V), targets (...) i32, mask (...)}, out = {loss ()}. One block per row computes
// a max-subtracted logsumexp; per-row losses land in a scratch buffer summed in a fixed order (no
// atomics), so the loss has the same bits every run. Bad targets under a nonzero mask are counted
// on the device and reported as InvalidArgument after the launch.
absl::Status MaskedCrossEntropyCuda(const core::Op& op, const core::ExecContext& ctx,
                                    absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// in = {logits, targets, mask, g ()}, out = {dlogits (..., V)}: one block per row.
absl::Status MaskedCrossEntropyBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                            absl::Span<const core::Tensor> in,
                                            absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_CROSS_ENTROPY_CUDA_H_
