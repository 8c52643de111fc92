// Host-only declaration of the CUDA kernel of the fused AdamW update (adamw.h). Implemented in
// adamw_cuda.cc over adamw.cu and registered with core::RegisterCudaKernel under "adamw"; it
// downcasts `op` to AdamWOp to read the hyperparameters and runs on ctx.cuda_stream.
// Declarations only, so the CPU build has no CUDA dependency.
#ifndef MIMETIC_OPS_ADAMW_CUDA_H_
#define MIMETIC_OPS_ADAMW_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

// AdamWOp: in = {param, grad, m, v, scalars (4)}, out = {param, m, v}; one kernel over the leaf.
absl::Status AdamWCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                       absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_ADAMW_CUDA_H_
