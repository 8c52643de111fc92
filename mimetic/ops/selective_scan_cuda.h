// Host-only declarations of the selective-scan CUDA launchers (implemented in a later issue, in
// selective_scan.cu, and registered with core::RegisterCudaKernel under the ops' names). Each
// matches core::CudaKernelFn: it downcasts `op` to read the attributes (SelectiveScanAttrs) and
// enqueues on ctx.cuda_stream. Inputs/outputs are exactly those of the CPU ops (selective_scan.h):
//   forward  in: u, delta, A, Bm, Cm, D, [z], [delta_bias]        out: y, last_state
//   backward in: forward inputs, dy, dlast_state                 out: one cotangent per forward input
// The intended kernels follow spec §1.5: one block per (b, channel tile), state in registers, chunks
// of attrs().chunk_size steps, backward recomputing chunk states from boundary states, with dB/dC
// reduced deterministically (per-tile partials summed in a fixed order, no float atomics).
#ifndef MIMETIC_OPS_SELECTIVE_SCAN_CUDA_H_
#define MIMETIC_OPS_SELECTIVE_SCAN_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/selective_scan.h"

namespace mimetic::ops {

// Registered as "selective_scan"; `op` is a SelectiveScanOp.
absl::Status SelectiveScanForwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                      absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// Registered as "selective_scan_backward"; `op` is a SelectiveScanBackwardOp.
absl::Status SelectiveScanBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                       absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SELECTIVE_SCAN_CUDA_H_
