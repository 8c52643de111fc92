#include "mimetic/core/cuda_runtime.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/cuda_check.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/op.h"
#include "mimetic/core/status.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {
namespace {

std::string ErrorText(cudaError_t error) {
  return absl::StrCat(cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

// ---- Device probe: once per process, consistent whoever asks first. ----

struct Probe {
  absl::Status status;  // OK when a device is usable
  int count = 0;
};

const Probe& GetProbe() {
  static const Probe* probe = [] {
    auto* p = new Probe();
    const char* disable = std::getenv("MIMETIC_DISABLE_CUDA");
    if (disable != nullptr && std::strcmp(disable, "1") == 0) {
      p->status = absl::FailedPreconditionError("CUDA disabled by MIMETIC_DISABLE_CUDA=1");
      return p;
    }
    const cudaError_t error = cudaGetDeviceCount(&p->count);
    if (error != cudaSuccess) {
      cudaGetLastError();  // not sticky, but leave nothing behind
      p->count = 0;
      p->status = absl::FailedPreconditionError(
          absl::StrCat("no usable CUDA device: cudaGetDeviceCount: ", ErrorText(error)));
    } else if (p->count == 0) {
      p->status = absl::FailedPreconditionError("no usable CUDA device: cudaGetDeviceCount found 0 devices");
    }
    return p;
  }();
  return *probe;
}

// ---- The process-wide stream. ----

cudaStream_t Stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    const cudaError_t error = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (error != cudaSuccess) {
      // A device was found but no context can be made (exclusive mode, out of memory): nothing
      // CUDA can work, and tensors already claim to be on CUDA.
      internal::CudaCheckFailure(error, "cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)", __FILE__,
                                 __LINE__);
    }
    return s;
  }();
  return stream;
}

// ---- Caching allocator. ----

constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr size_t kSmallRound = 512;

constexpr size_t kLargeStep = size_t{32} << 20;

// Bucket of a request: multiples of 512 bytes up to 1 MiB, then quarters of each power of two but
// at most 32 MiB apart, so a block wastes under 25% of its size and never more than 32 MiB. A
// training loop asks for the same sizes every step, so exact buckets are reused from the cache.
size_t BucketSize(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= kSmallLimit) return (bytes + kSmallRound - 1) / kSmallRound * kSmallRound;
  const int k = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));  // 2^k < bytes <= 2^(k+1)
  const size_t step = std::min(size_t{1} << (k - 2), kLargeStep);
  return (bytes + step - 1) / step * step;
}

struct DevicePool {
  std::map<size_t, std::vector<void*>> free_blocks;  // bucket size -> cached blocks
  CudaAllocatorStats stats;
  int64_t total_memory = -1;  // cudaDeviceProp::totalGlobalMem, read on first allocation
  std::string name;
};

struct Block {
  size_t size;
  int device;
};

struct Allocator {
  std::mutex mu;
  std::vector<DevicePool> pools;  // indexed by device
  std::unordered_map<void*, Block> live;
  // While a Jit graph is being captured, blocks freed by kernels (scratch) stay owned by the graph:
  // its replays keep writing to those addresses, so they must not return to the cache until the
  // graph is destroyed.
  bool capturing = false;
  std::vector<std::pair<void*, Block>> captured;
  std::unordered_map<void*, std::vector<std::pair<void*, Block>>> graph_owned;  // graph exec -> blocks
};

// Leaked on purpose: tensors freed during static destruction still find it.
Allocator& GetAllocator() {
  static auto* allocator = [] {
    auto* a = new Allocator();
    a->pools.resize(std::max(GetProbe().count, 1));
    return a;
  }();
  return *allocator;
}

// cudaFrees every cached block of `device`; the caller holds the lock. cudaFree synchronises the
// device, so no enqueued kernel still uses a block when it goes.
void ReleaseCachedLocked(Allocator& a, int device) {
  DevicePool& pool = a.pools[device];
  if (pool.free_blocks.empty()) return;  // never touch (and so never create) another device's context
  int current = -1;
  cudaGetDevice(&current);
  if (current != device) cudaSetDevice(device);
  for (auto& [size, blocks] : pool.free_blocks) {
    for (void* p : blocks) {
      cudaFree(p);
      pool.stats.bytes_cached -= static_cast<int64_t>(size);
    }
  }
  pool.free_blocks.clear();
  cudaGetLastError();
  if (current != device && current >= 0) cudaSetDevice(current);
}

std::string OutOfMemory(size_t bytes, int device, const DevicePool& pool, const std::string& why) {
  return absl::StrFormat(
      "CUDA out of memory: cannot allocate %d bytes (%.2f GiB) on cuda:%d (%s, %d bytes in total): %d bytes "
      "in "
      "use by tensors, %d bytes cached; %s",
      bytes, static_cast<double>(bytes) / (1 << 30), device, pool.name, pool.total_memory,
      pool.stats.bytes_in_use, pool.stats.bytes_cached, why);
}

absl::StatusOr<void*> AllocateImpl(size_t bytes) {
  const Probe& probe = GetProbe();
  if (!probe.status.ok()) return probe.status;
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  Allocator& a = GetAllocator();
  std::lock_guard<std::mutex> lock(a.mu);
  if (device < 0 || device >= static_cast<int>(a.pools.size())) {
    return absl::InternalError(absl::StrCat("current CUDA device ", device, " out of range"));
  }
  DevicePool& pool = a.pools[device];
  if (pool.total_memory < 0) {
    cudaDeviceProp prop;
    CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
    pool.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
    pool.name = prop.name;
  }
  if (bytes > static_cast<size_t>(pool.total_memory)) {
    return absl::ResourceExhaustedError(
        OutOfMemory(bytes, device, pool, "the request exceeds the device's memory"));
  }
  const size_t size = BucketSize(bytes);
  void* ptr = nullptr;
  auto it = pool.free_blocks.find(size);
  if (it != pool.free_blocks.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
    pool.stats.bytes_cached -= static_cast<int64_t>(size);
    ++pool.stats.num_cache_hits;
  } else {
    cudaError_t error = cudaMalloc(&ptr, size);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      ReleaseCachedLocked(a, device);
      error = cudaMalloc(&ptr, size);
    }
    if (error != cudaSuccess) {
      cudaGetLastError();
      const std::string why =
          absl::StrCat("cudaMalloc(", size, ") after emptying the cache: ", ErrorText(error));
      if (error == cudaErrorMemoryAllocation)
        return absl::ResourceExhaustedError(OutOfMemory(bytes, device, pool, why));
      return absl::InternalError(absl::StrCat("allocating ", bytes, " bytes on cuda:", device, ": ", why));
    }
    ++pool.stats.num_cuda_mallocs;
  }
  a.live.emplace(ptr, Block{size, device});
  ++pool.stats.num_allocs;
  pool.stats.bytes_in_use += static_cast<int64_t>(size);
  pool.stats.peak_bytes_in_use = std::max(pool.stats.peak_bytes_in_use, pool.stats.bytes_in_use);
  return ptr;
}

void FreeImpl(void* ptr) {
  if (ptr == nullptr) return;
  Allocator& a = GetAllocator();
  std::lock_guard<std::mutex> lock(a.mu);
  auto it = a.live.find(ptr);
  MIMETIC_CHECK(it != a.live.end())
      << "CudaFree of a pointer the allocator did not hand out (or freed twice)";
  const Block block = it->second;
  a.live.erase(it);
  if (a.capturing) {
    a.captured.emplace_back(ptr, block);  // still in use by the graph being captured
    return;
  }
  DevicePool& pool = a.pools[block.device];
  pool.free_blocks[block.size].push_back(ptr);
  pool.stats.bytes_in_use -= static_cast<int64_t>(block.size);
  pool.stats.bytes_cached += static_cast<int64_t>(block.size);
}

// ---- Hooks for core. ----

const char* CopyName(Device dst, Device src) {
  if (src == Device::kCpu) return "host to device";
  return dst == Device::kCpu ? "device to host" : "device to device";
}

// Device-to-device copies are only enqueued (stream order is enough); copies from or to the host
// wait for the stream, so the host buffer may be read or reused as soon as this returns.
absl::Status CopyHook(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (dst_device == Device::kCpu && src_device == Device::kCpu) {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  const cudaMemcpyKind kind = src_device == Device::kCpu   ? cudaMemcpyHostToDevice
                              : dst_device == Device::kCpu ? cudaMemcpyDeviceToHost
                                                           : cudaMemcpyDeviceToDevice;
  cudaStream_t stream = Stream();
  cudaError_t error = cudaMemcpyAsync(dst, src, bytes, kind, stream);
  if (error == cudaSuccess && kind != cudaMemcpyDeviceToDevice) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return absl::InternalError(
        absl::StrCat("copying ", bytes, " bytes ", CopyName(dst_device, src_device), ": ", ErrorText(error),
                     " (an error from an earlier kernel on the stream surfaces here)"));
  }
  return absl::OkStatus();
}

void* StreamHook() { return Stream(); }

// Returns blocks a destroyed (or failed) graph owned to the cache.
void ReturnBlocksLocked(Allocator& a, std::vector<std::pair<void*, Block>>& blocks) {
  for (auto& [ptr, block] : blocks) {
    DevicePool& pool = a.pools[block.device];
    pool.free_blocks[block.size].push_back(ptr);
    pool.stats.bytes_in_use -= static_cast<int64_t>(block.size);
    pool.stats.bytes_cached += static_cast<int64_t>(block.size);
  }
  blocks.clear();
}

absl::Status BeginCapture(void* stream) {
  {
    Allocator& a = GetAllocator();
    std::lock_guard<std::mutex> lock(a.mu);
    a.capturing = true;
  }
  // Relaxed mode: a kernel's scratch allocation may still reach cudaMalloc on a cache miss.
  cudaError_t error = cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeRelaxed);
  if (error != cudaSuccess) {
    cudaGetLastError();
    Allocator& a = GetAllocator();
    std::lock_guard<std::mutex> lock(a.mu);
    a.capturing = false;
    return absl::InternalError(absl::StrCat("cudaStreamBeginCapture: ", ErrorText(error)));
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> EndCapture(void* stream) {
  cudaGraph_t graph = nullptr;
  cudaError_t error = cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph);
  std::vector<std::pair<void*, Block>> owned;
  {
    Allocator& a = GetAllocator();
    std::lock_guard<std::mutex> lock(a.mu);
    a.capturing = false;
    owned.swap(a.captured);
  }
  auto give_back = [&owned] {
    Allocator& a = GetAllocator();
    std::lock_guard<std::mutex> lock(a.mu);
    ReturnBlocksLocked(a, owned);
  };
  if (error != cudaSuccess) {
    cudaGetLastError();
    if (graph != nullptr) cudaGraphDestroy(graph);
    give_back();
    return absl::InternalError(absl::StrCat("cudaStreamEndCapture: ", ErrorText(error)));
  }
  cudaGraphExec_t exec = nullptr;
  error = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (error != cudaSuccess) {
    cudaGetLastError();
    give_back();
    return absl::InternalError(absl::StrCat("cudaGraphInstantiate: ", ErrorText(error)));
  }
  {
    Allocator& a = GetAllocator();
    std::lock_guard<std::mutex> lock(a.mu);
    a.graph_owned[static_cast<void*>(exec)] = std::move(owned);
  }
  return static_cast<void*>(exec);
}

absl::Status LaunchGraph(void* graph_exec, void* stream) {
  CUDA_RETURN_IF_ERROR(
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph_exec), static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

absl::Status SynchronizeStream(void* stream) {
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

void DestroyGraph(void* graph_exec) {
  cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph_exec));
  cudaGetLastError();  // may run at exit, after the runtime began unloading
  Allocator& a = GetAllocator();
  std::lock_guard<std::mutex> lock(a.mu);
  auto it = a.graph_owned.find(graph_exec);
  if (it != a.graph_owned.end()) {
    ReturnBlocksLocked(a, it->second);
    a.graph_owned.erase(it);
  }
}

// Static initialisation: install the hooks when a device is present.
const bool g_registered = [] {
  const Probe& probe = GetProbe();
  SetCudaBackendStatus(probe.status);
  if (!probe.status.ok()) return false;
  CudaMemoryHooks memory;
  memory.allocate = &AllocateImpl;
  memory.free = &FreeImpl;
  memory.copy = &CopyHook;
  SetCudaMemoryHooks(memory);
  SetCudaStreamProvider(&StreamHook);
  CudaGraphHooks graph;
  graph.stream = &StreamHook;
  graph.begin_capture = &BeginCapture;
  graph.end_capture = &EndCapture;
  graph.launch = &LaunchGraph;
  graph.destroy = &DestroyGraph;
  graph.synchronize = &SynchronizeStream;
  SetCudaGraphHooks(graph);
  return true;
}();

int ResolveDevice(int device) {
  if (device >= 0) return device;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    current = 0;
  }
  return current;
}

}  // namespace

std::string CudaDeviceInfo::DebugString() const {
  return absl::StrFormat("cuda:%d %s (sm_%d%d, %d SMs, %.1f GiB, %d device%s)", index, name, compute_major,
                         compute_minor, sm_count, static_cast<double>(total_memory) / (1 << 30), count,
                         count == 1 ? "" : "s");
}

std::string CudaAllocatorStats::DebugString() const {
  return absl::StrFormat("%d bytes in use (peak %d), %d cached; %d allocations, %d cudaMalloc, %d cache hits",
                         bytes_in_use, peak_bytes_in_use, bytes_cached, num_allocs, num_cuda_mallocs,
                         num_cache_hits);
}

absl::StatusOr<CudaDeviceInfo> CudaDevice() {
  const Probe& probe = GetProbe();
  RETURN_IF_ERROR(probe.status);
  CudaDeviceInfo info;
  info.count = probe.count;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&info.index));
  cudaDeviceProp prop;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, info.index));
  info.name = prop.name;
  info.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  info.sm_count = prop.multiProcessorCount;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  info.free_memory = static_cast<int64_t>(free_bytes);
  return info;
}

bool CudaAvailable() { return GetProbe().status.ok(); }

void* CurrentStream() { return CudaAvailable() ? static_cast<void*>(Stream()) : nullptr; }

absl::Status Synchronize() {
  RETURN_IF_ERROR(GetProbe().status);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
  return absl::OkStatus();
}

absl::StatusOr<void*> CudaAllocate(size_t bytes) { return AllocateImpl(bytes); }

void CudaFree(void* ptr) { FreeImpl(ptr); }

CudaAllocatorStats CudaMemoryStats(int device) {
  if (!CudaAvailable()) return {};
  Allocator& a = GetAllocator();
  device = ResolveDevice(device);
  std::lock_guard<std::mutex> lock(a.mu);
  if (device < 0 || device >= static_cast<int>(a.pools.size())) return {};
  return a.pools[device].stats;
}

void ResetPeakCudaMemory(int device) {
  if (!CudaAvailable()) return;
  Allocator& a = GetAllocator();
  device = ResolveDevice(device);
  std::lock_guard<std::mutex> lock(a.mu);
  if (device < 0 || device >= static_cast<int>(a.pools.size())) return;
  a.pools[device].stats.peak_bytes_in_use = a.pools[device].stats.bytes_in_use;
}

void EmptyCache() {
  if (!CudaAvailable()) return;
  cudaStreamSynchronize(Stream());
  cudaGetLastError();
  Allocator& a = GetAllocator();
  std::lock_guard<std::mutex> lock(a.mu);
  for (int d = 0; d < static_cast<int>(a.pools.size()); ++d) ReleaseCachedLocked(a, d);
}

// ---- CudaTimer ----

CudaTimer::CudaTimer() = default;

CudaTimer::~CudaTimer() {
  if (start_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stop_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}

namespace {

absl::Status RecordEvent(void** event) {
  RETURN_IF_ERROR(GetProbe().status);
  if (*event == nullptr) {
    cudaEvent_t e = nullptr;
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
    *event = e;
  }
  CUDA_RETURN_IF_ERROR(cudaEventRecord(static_cast<cudaEvent_t>(*event), Stream()));
  return absl::OkStatus();
}

}  // namespace

void CudaTimer::Start() {
  error_ = RecordEvent(&start_);
  started_ = error_.ok();
  stopped_ = false;
}

void CudaTimer::Stop() {
  if (!error_.ok()) return;
  error_ = RecordEvent(&stop_);
  stopped_ = error_.ok();
}

absl::StatusOr<double> CudaTimer::ElapsedMilliseconds() {
  RETURN_IF_ERROR(error_);
  if (!started_ || !stopped_) {
    return absl::FailedPreconditionError(
        "CudaTimer: call Start() and then Stop() before ElapsedMilliseconds()");
  }
  CUDA_RETURN_IF_ERROR(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)));
  float ms = 0;
  CUDA_RETURN_IF_ERROR(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)));
  return static_cast<double>(ms);
}

}  // namespace mimetic::core
