// Launchers of the CUDA kernels for core's two builtin ops (core/builtin_ops.h): "fill" and
// "accumulate". Plain C++ (no CUDA or project headers) so builtin_cuda.cu includes only this file.
// Each returns nullptr on success or a static CUDA error string; `stream` is a cudaStream_t.
// Element counts are int64 (grid-stride loops), and n == 0 launches nothing.
#ifndef MIMETIC_OPS_CUDA_BUILTIN_KERNELS_H_
#define MIMETIC_OPS_CUDA_BUILTIN_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::kernels {

// out[i] = value for i < n. The value is converted to the element type on the host, exactly as
// FillOp::ComputeReference converts it (static_cast from double).
const char* LaunchFillF32(float* out, float value, int64_t n, void* stream);
const char* LaunchFillF64(double* out, double value, int64_t n, void* stream);
const char* LaunchFillI32(int32_t* out, int32_t value, int64_t n, void* stream);

// out[i] = a[i] + b[i] for i < n (one IEEE add per element: bit-identical to the CPU).
const char* LaunchAccumulateF32(const float* a, const float* b, float* out, int64_t n, void* stream);
const char* LaunchAccumulateF64(const double* a, const double* b, double* out, int64_t n, void* stream);
const char* LaunchAccumulateI32(const int32_t* a, const int32_t* b, int32_t* out, int64_t n, void* stream);

}  // namespace mimetic::ops::kernels

#endif  // MIMETIC_OPS_CUDA_BUILTIN_KERNELS_H_
