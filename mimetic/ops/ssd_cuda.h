// Host-only declarations of the CUDA SSD kernels (implemented in a later issue as ssd.cu, built with
// tools/cuda.bzl's cuda_library). Including this header needs no CUDA toolkit.
//
// The CUDA backend registers both at static initialisation:
//   core::RegisterCudaKernel("ssd", &SsdCuda);
//   core::RegisterCudaKernel("ssd_backward", &SsdBackwardCuda);
// The intended kernels follow the chunked algorithm of ssd_cpu.cc (and mamba_ssm's Triton
// pipeline, spec §2.4): chunk cumsum of Δ·A, CBᵀ per (b, chunk, group), chunk states, state passing,
// chunk scan (intra-chunk + state-to-output + D skip); the backward recomputes the chunk states.
#ifndef MIMETIC_OPS_SSD_CUDA_H_
#define MIMETIC_OPS_SSD_CUDA_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/ssd.h"

namespace mimetic::ops {

// The core::CudaKernelFn for SsdOp: downcasts `op` to SsdOp for chunk_size, reads the dims with
// GetSsdDims(in, chunk_size) and calls LaunchSsdForward on ctx.cuda_stream.
absl::Status SsdCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                     absl::Span<const core::Tensor> out);

// The core::CudaKernelFn for SsdBackwardOp (inputs x, dt, A, Bm, Cm, D, dt_bias, dy, dlast_state;
// outputs dx, ddt, dA, dB, dC, dD, ddt_bias).
absl::Status SsdBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                             absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out);

// Device pointers of dtype `dtype` (f32 or f64), layouts as in ssd.h:
//   x (B, L, H, P), dt (B, L, H), a/d/dt_bias (H), bm/cm (B, L, G, N) -> y (B, L, H, P), last_state (B, H, P,
//   N).
absl::Status LaunchSsdForward(const SsdDims& dims, core::DType dtype, const void* x, const void* dt,
                              const void* a, const void* bm, const void* cm, const void* d,
                              const void* dt_bias, void* y, void* last_state, void* stream);

// dy (B, L, H, P), dlast_state (B, H, P, N) -> dx, ddt, da, dbm, dcm, dd, ddt_bias (the inputs' layouts).
// dA, dD, ddt_bias and dB/dC (summed over the heads of a group) must be reduced deterministically
// (fixed partition, no floating-point atomics), as on the CPU.
absl::Status LaunchSsdBackward(const SsdDims& dims, core::DType dtype, const void* x, const void* dt,
                               const void* a, const void* bm, const void* cm, const void* d,
                               const void* dt_bias, const void* dy, const void* dlast_state, void* dx,
                               void* ddt, void* da, void* dbm, void* dcm, void* dd, void* ddt_bias,
                               void* stream);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SSD_CUDA_H_
