// Scratch memory and error returns for CUDA launchers (shared by the .cu files). Two kinds of
// scratch, chosen by lifetime:
//   Scratch            per call, any size, stream-ordered (cudaMallocAsync / cudaFreeAsync): freed
//                      when the launcher returns; inside CUDA graph capture it becomes memory nodes.
//   StreamBuffer       per (device, stream, tag), fixed size, allocated on first use and kept for
//                      the process: for small buffers a captured CUDA graph must keep pointing at
//                      (flags read back after the graph ran, partial sums of fixed bound).
// Launchers that size their workspace on the host take it from core's caching allocator instead
// (ssd_cuda.cc, attention_cuda.cc: a core::Storage passed down as a pointer).
// Include only from .cu files compiled by nvcc (tools/cuda.bzl: list it in cu_hdrs).
//
//   const char* LaunchFoo(..., cudaStream_t stream) {
//     Scratch scratch(stream);
//     LAUNCHER_RETURN_IF_ERROR(scratch.Allocate(bytes));
//     FooKernel<<<grid, block, 0, stream>>>(..., scratch.as<float>());
//     LAUNCHER_RETURN_IF_ERROR(cudaGetLastError());
//     return nullptr;
//   }
#ifndef MIMETIC_OPS_CUDA_CUDA_SCRATCH_CUH_
#define MIMETIC_OPS_CUDA_CUDA_SCRATCH_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>

// Returns the CUDA error's text from a launcher (launchers return nullptr on success) when `expr`
// is not cudaSuccess.
#define LAUNCHER_RETURN_IF_ERROR(expr)                    \
  do {                                                    \
    const cudaError_t mimetic_launcher_error_ = (expr);   \
    if (mimetic_launcher_error_ != cudaSuccess) {         \
      return cudaGetErrorString(mimetic_launcher_error_); \
    }                                                     \
  } while (false)

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

// `bytes` of device memory for (current device, stream, tag), allocated on first use and never
// freed: a captured CUDA graph keeps pointing at it. Uses on one stream are ordered by the stream;
// `tag` tells apart the buffers of different launchers on one stream, and one tag always asks for
// the same size.
inline cudaError_t StreamBuffer(cudaStream_t stream, const char* tag, size_t bytes, void** buffer) {
  static std::mutex* mu = new std::mutex;
  static auto* buffers = new std::map<std::tuple<int, cudaStream_t, const char*>, void*>;
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error != cudaSuccess) return error;
  std::lock_guard<std::mutex> lock(*mu);
  auto it = buffers->find({device, stream, tag});
  if (it != buffers->end()) {
    *buffer = it->second;
    return cudaSuccess;
  }
  // cudaMalloc is not a stream operation; relaxed mode lets it run while a graph is being captured.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  error = cudaMalloc(buffer, bytes);
  cudaThreadExchangeStreamCaptureMode(&mode);
  if (error != cudaSuccess) return error;
  (*buffers)[{device, stream, tag}] = *buffer;
  return cudaSuccess;
}

}  // namespace mimetic::ops::cuda_internal

#endif  // MIMETIC_OPS_CUDA_CUDA_SCRATCH_CUH_
