// CUDA kernels for core's builtin ops "fill" and "accumulate" (see builtin_kernels.h).
#include <cuda_runtime.h>

#include <cstdint>

#include "mimetic/ops/cuda/builtin_kernels.h"

namespace mimetic::ops::kernels {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU several times over; larger tensors loop (grid stride).
constexpr int64_t kMaxBlocks = int64_t{1} << 16;

int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

template <typename T>
__global__ void FillKernel(T* __restrict__ out, T value, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = value;
}

template <typename T>
__global__ void AccumulateKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                 int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = a[i] + b[i];
  }
}

const char* LastError() {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

template <typename T>
const char* Fill(T* out, T value, int64_t n, void* stream) {
  if (n <= 0) return nullptr;
  FillKernel<T><<<Blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, value, n);
  return LastError();
}

template <typename T>
const char* Accumulate(const T* a, const T* b, T* out, int64_t n, void* stream) {
  if (n <= 0) return nullptr;
  AccumulateKernel<T><<<Blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a, b, out, n);
  return LastError();
}

}  // namespace

const char* LaunchFillF32(float* out, float value, int64_t n, void* stream) {
  return Fill(out, value, n, stream);
}
const char* LaunchFillF64(double* out, double value, int64_t n, void* stream) {
  return Fill(out, value, n, stream);
}
const char* LaunchFillI32(int32_t* out, int32_t value, int64_t n, void* stream) {
  return Fill(out, value, n, stream);
}

const char* LaunchAccumulateF32(const float* a, const float* b, float* out, int64_t n, void* stream) {
  return Accumulate(a, b, out, n, stream);
}
const char* LaunchAccumulateF64(const double* a, const double* b, double* out, int64_t n, void* stream) {
  return Accumulate(a, b, out, n, stream);
}
const char* LaunchAccumulateI32(const int32_t* a, const int32_t* b, int32_t* out, int64_t n, void* stream) {
  return Accumulate(a, b, out, n, stream);
}

}  // namespace mimetic::ops::kernels
