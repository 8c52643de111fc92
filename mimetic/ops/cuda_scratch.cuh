// Stream-ordered scratch memory for CUDA launchers (shared by the .cu files that need it).
// Include only from .cu files compiled by nvcc (tools/cuda.bzl: list it in cu_hdrs).
#ifndef MIMETIC_OPS_CUDA_SCRATCH_CUH_
#define MIMETIC_OPS_CUDA_SCRATCH_CUH_

#include <cuda_runtime.h>

#include <cstddef>

namespace mimetic::ops::cuda_internal {

// Stream-ordered scratch memory. cudaMallocAsync/cudaFreeAsync keep the launchers legal during
// CUDA graph capture (they become memory nodes of the graph). Devices without memory-pool support
// fall back to cudaMalloc, then synchronise the stream before cudaFree.
class Scratch {
 public:
  explicit Scratch(cudaStream_t stream) : stream_(stream) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { Release(); }

  cudaError_t Allocate(size_t bytes) {
    if (bytes == 0) return cudaSuccess;
    cudaError_t err = cudaMallocAsync(&ptr_, bytes, stream_);
    if (err == cudaErrorNotSupported) {
      (void)cudaGetLastError();  // clear it, so the launch checks do not report it
      async_ = false;
      err = cudaMalloc(&ptr_, bytes);
    }
    if (err != cudaSuccess) ptr_ = nullptr;
    return err;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  cudaError_t Release() {
    if (ptr_ == nullptr) return cudaSuccess;
    void* p = ptr_;
    ptr_ = nullptr;
    if (async_) return cudaFreeAsync(p, stream_);
    const cudaError_t sync = cudaStreamSynchronize(stream_);
    const cudaError_t freed = cudaFree(p);
    return sync != cudaSuccess ? sync : freed;
  }

 private:
  cudaStream_t stream_;
  void* ptr_ = nullptr;
  bool async_ = true;
};

}  // namespace mimetic::ops::cuda_internal

#endif  // MIMETIC_OPS_CUDA_SCRATCH_CUH_
