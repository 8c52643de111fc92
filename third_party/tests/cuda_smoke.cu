// saxpy on the GPU: the smallest kernel that proves nvcc, cudart and Bazel fit together.
#include <cuda_runtime.h>

#include <string>

#include "mimetic/core/cuda_check.h"
#include "third_party/tests/cuda_smoke.h"

namespace mimetic::third_party_tests {
namespace {

__global__ void SaxpyKernel(int n, float a, const float* x, float* y) {  // x, y: (n,)
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Frees device buffers on every return path.
struct DeviceBuffers {
  float* x = nullptr;
  float* y = nullptr;
  ~DeviceBuffers() {
    cudaFree(x);
    cudaFree(y);
  }
};

}  // namespace

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  return count;
}

absl::Status Saxpy(float a, const std::vector<float>& x, std::vector<float>& y) {
  if (x.size() != y.size()) {
    return absl::InvalidArgumentError("Saxpy: x has " + std::to_string(x.size()) + " elements, y has " +
                                      std::to_string(y.size()));
  }
  const int n = static_cast<int>(x.size());
  if (n == 0) return absl::OkStatus();
  const size_t bytes = x.size() * sizeof(float);
  DeviceBuffers d;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
  CUDA_RETURN_IF_ERROR(cudaMalloc(&d.x, bytes));
  CUDA_RETURN_IF_ERROR(cudaMalloc(&d.y, bytes));
  CUDA_RETURN_IF_ERROR(cudaMemcpy(d.x, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_RETURN_IF_ERROR(cudaMemcpy(d.y, y.data(), bytes, cudaMemcpyHostToDevice));
  constexpr int kThreads = 256;
  SaxpyKernel<<<(n + kThreads - 1) / kThreads, kThreads>>>(n, a, d.x, d.y);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  CUDA_RETURN_IF_ERROR(cudaMemcpy(y.data(), d.y, bytes, cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

}  // namespace mimetic::third_party_tests
