// Launcher of the fused AdamW CUDA kernel (adamw.cu). Plain C++ with builtin types only, so
// adamw_cuda.cc (g++) and adamw.cu (nvcc) share it without CUDA or absl headers.
//
//   if (const char* err = LaunchAdamW(kAdamWF32, p, g, m, v, scalars, p_out, m_out, v_out, n,
//                                     0.9, 0.999, 1e-8, 0.1, stream)) ...
//
// Returns nullptr on success or a static CUDA error string; runs on `stream` (a cudaStream_t),
// never synchronises and never allocates, so it can be captured in a CUDA graph. The per-step
// scalars [lr, 1 - beta1^t, 1 - beta2^t, grad_scale] are read from device memory by the kernel,
// so one captured graph serves every step.
#ifndef MIMETIC_OPS_ADAMW_ADAMW_KERNELS_H_
#define MIMETIC_OPS_ADAMW_ADAMW_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda_kernels {

// Same values as core::DType kF32 / kF64.
inline constexpr int kAdamWF32 = 0;
inline constexpr int kAdamWF64 = 1;

// param, grad, m, v, outputs: n elements of `dtype`; scalars: 4 of `dtype` (device memory).
const char* LaunchAdamW(int dtype, const void* param, const void* grad, const void* m, const void* v,
                        const void* scalars, void* param_out, void* m_out, void* v_out, int64_t n,
                        double beta1, double beta2, double eps, double weight_decay, void* stream);

}  // namespace mimetic::ops::cuda_kernels

#endif  // MIMETIC_OPS_ADAMW_ADAMW_KERNELS_H_
