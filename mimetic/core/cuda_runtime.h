// The CUDA runtime behind mimetic's CUDA tensors: device query, one stream, a caching allocator,
// event timers and the hooks that let the CUDA-free core (Tensor, Call, Jit) use them.
//
// Linking //mimetic/core:cuda_runtime (alwayslink) is all a binary does to get CUDA: at static
// initialisation, when cudaGetDeviceCount finds a device (and MIMETIC_DISABLE_CUDA is not 1), it
// installs core::SetCudaMemoryHooks (allocate, free, copy), core::SetCudaStreamProvider and
// core::SetCudaGraphHooks (Jit's graph replay), and records why CUDA is or is not usable in
// core::CudaBackendStatus(). Kernels come from the op libraries (//mimetic/ops:cuda_backend).
//
//   if (!CudaAvailable()) return CudaDevice().status();   // names what cudaGetDeviceCount said
//   ASSIGN_OR_RETURN(Tensor x_gpu, x.ToDevice(Device::kCuda));
//   CudaTimer timer;
//   timer.Start();
//   Tensor y = ops::Exp(x_gpu);                            // enqueued on CurrentStream()
//   timer.Stop();
//   ASSIGN_OR_RETURN(double ms, timer.ElapsedMilliseconds());
//
// Streams: one non-blocking stream per process, created on first use on the device current at that
// time (device 0 unless the program selected another first). Every kernel, every device-to-device
// copy and every graph launch is enqueued on it, so all device work is ordered; host<->device
// copies are enqueued on it and then synchronised. One stream is what makes the caching allocator
// safe without cross-stream bookkeeping: a block freed on the host may be handed out again at
// once, because whatever reads it later is enqueued after whatever still used it. Host threads
// share the stream; a Jit capturing a CUDA graph must not race with another thread enqueuing work.
//
// Memory: plain cudaMalloc (never managed memory), cached per device in size buckets (multiples
// of 512 bytes up to 1 MiB, then four buckets per power of two, at most 32 MiB apart; a request
// takes a cached block of exactly its bucket, never a larger one), so a training loop stops calling
// cudaMalloc after its first steps. When cudaMalloc fails the cache is emptied and the call
// retried once; then the error is ResourceExhausted naming the requested size and the bytes in use.
//
// This header has no CUDA types (streams and events are void*), so plain C++ may include it.
#ifndef MIMETIC_CORE_CUDA_RUNTIME_H_
#define MIMETIC_CORE_CUDA_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mimetic::core {

struct CudaDeviceInfo {
  int index = 0;             // the device mimetic uses (the current device)
  int count = 0;             // visible devices
  std::string name;          // "NVIDIA H100 80GB HBM3"
  int64_t total_memory = 0;  // bytes
  int64_t free_memory = 0;   // bytes, at the time of the query
  int sm_count = 0;          // streaming multiprocessors
  int compute_major = 0;     // compute capability, e.g. 9.0
  int compute_minor = 0;
  std::string DebugString() const;  // "cuda:0 NVIDIA H100 (sm_90, 132 SMs, 79.1 GiB, 1 device)"
};

// The current device, or FailedPrecondition naming what the runtime said, e.g.
// "no usable CUDA device: cudaGetDeviceCount: cudaErrorNoDevice (no CUDA-capable device is detected)".
absl::StatusOr<CudaDeviceInfo> CudaDevice();

// True when the hooks are installed: the runtime found a device at start-up and CUDA is not
// disabled (MIMETIC_DISABLE_CUDA=1 keeps a CUDA build on the CPU).
bool CudaAvailable();

// The process-wide cudaStream_t (as void*); created on first use. nullptr without a device.
void* CurrentStream();

// Waits for all work enqueued on CurrentStream(); returns the first asynchronous kernel error.
absl::Status Synchronize();

// Device memory straight from the caching allocator (what CUDA tensors' storage uses). `bytes`
// may be 0. Errors: FailedPrecondition without a device; ResourceExhausted when the device is out
// of memory even after emptying the cache.
absl::StatusOr<void*> CudaAllocate(size_t bytes);
// Returns a block from CudaAllocate to the cache (no cudaFree). nullptr is ignored.
void CudaFree(void* ptr);

struct CudaAllocatorStats {
  int64_t bytes_in_use = 0;       // blocks handed out and not yet freed (bucket sizes)
  int64_t peak_bytes_in_use = 0;  // maximum of bytes_in_use since start (or ResetPeak)
  int64_t bytes_cached = 0;       // freed blocks kept for reuse
  int64_t num_allocs = 0;         // CudaAllocate calls that succeeded
  int64_t num_cuda_mallocs = 0;   // of those, how many called cudaMalloc (the rest hit the cache)
  int64_t num_cache_hits = 0;
  std::string DebugString() const;
};
// Stats of device `device` (-1: the current device).
CudaAllocatorStats CudaMemoryStats(int device = -1);
// Sets the peak of `device` (-1: current) to the bytes in use now.
void ResetPeakCudaMemory(int device = -1);
// Synchronises the stream and cudaFrees every cached block of every device (blocks in use stay).
void EmptyCache();

// Wall time of device work between Start and Stop, measured with CUDA events on CurrentStream().
//   CudaTimer t; t.Start(); ...enqueue work...; t.Stop(); double ms = t.ElapsedMilliseconds().value();
class CudaTimer {
 public:
  CudaTimer();
  ~CudaTimer();
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  // Record an event on the stream (errors surface in ElapsedMilliseconds).
  void Start();
  void Stop();
  // Waits for the stop event; milliseconds between the two events. FailedPrecondition when Start
  // and Stop were not both called, or without a device.
  absl::StatusOr<double> ElapsedMilliseconds();

 private:
  void* start_ = nullptr;  // cudaEvent_t
  void* stop_ = nullptr;
  bool started_ = false;
  bool stopped_ = false;
  absl::Status error_;
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_CUDA_RUNTIME_H_
