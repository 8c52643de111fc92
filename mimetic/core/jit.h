// Jit: trace a pure, shape-static function once per input signature, plan its buffers once, and
// replay the recorded primitive calls on later calls without running the C++ code that built
// them and without allocating (the contract of jax.jit).
//
//   Jit step([&](absl::Span<const Tensor> in) -> std::vector<Tensor> {
//     return {ops::Add(ops::MatMul(in[0], in[1]), in[2])};
//   });
//   ASSIGN_OR_RETURN(std::vector<Tensor> out, step({x, w, b}));   // traces, plans, runs
//   ASSIGN_OR_RETURN(out, step({x2, w, b}));                       // same shapes: replays
//
// The signature is every input's shape, dtype and device plus the CPU backend; a new signature
// traces again and the old plans stay. Replay equals eager execution bit for bit (same kernels,
// same order). Reading a traced tensor's value inside the function is an error (data-dependent
// control flow cannot be replayed). Tensors created inside the function from no input (constants)
// are captured by value at trace time.
//
// Buffers: every intermediate gets a slot in a plan built by liveness (a buffer is reused once
// its last reader has run; views share their source's buffer). Each output has two buffers used
// alternately, so a loop `state = step(state)` allocates nothing after the trace; an output is
// reallocated only when the caller still holds both earlier results.
//
// On CUDA (every input of the signature on CUDA, every computing node on CUDA, and the CUDA
// runtime linked with a device, which registers CudaGraphHooks): the plan also owns one staging
// buffer per input the graph reads and one fixed buffer per output, so every pointer a kernel sees
// is fixed. A replay then (a) copies the inputs into the staging buffers, (b) launches one CUDA
// graph of all node kernels, captured from the plan on the first replay, and (c) copies the fixed
// outputs into the ping-pong output buffers, all in order on the runtime's stream (the copies are
// device-to-device and asynchronous). Kernels must therefore be capturable: no allocation, no
// synchronisation and no host reads inside Compute. If capturing fails, the plan says why in
// DebugString() (and once on stderr) and replays kernel by kernel on the same stream. Without the
// hooks, on CPU, with profiling on, or after set_cuda_graphs(false), replay runs node by node.
#ifndef MIMETIC_CORE_JIT_H_
#define MIMETIC_CORE_JIT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

// CUDA graph capture and launch, registered by //mimetic/core:cuda_runtime at static
// initialisation when a device is present (core itself stays CUDA-free). Streams and graphs are
// void* (cudaStream_t, cudaGraphExec_t).
struct CudaGraphHooks {
  // The stream every CUDA op and copy is enqueued on (the one Call uses).
  void* (*stream)() = nullptr;
  // Starts capturing `stream` (thread-local capture mode: unsafe calls on this thread fail it).
  absl::Status (*begin_capture)(void* stream) = nullptr;
  // Ends the capture and instantiates it; returns the executable graph. Always leaves capture
  // mode, also when it fails (an invalidated capture, a kernel that cannot be captured).
  absl::StatusOr<void*> (*end_capture)(void* stream) = nullptr;
  // Enqueues one replay of the graph on `stream`.
  absl::Status (*launch)(void* graph_exec, void* stream) = nullptr;
  // Releases the graph (errors are ignored: this may run at exit).
  void (*destroy)(void* graph_exec) = nullptr;
  // Waits for the work enqueued on `stream`. The profiler waits before and after each CUDA node, so
  // a node's time is its own kernels' and not the queue's (launches are asynchronous).
  absl::Status (*synchronize)(void* stream) = nullptr;
};
void SetCudaGraphHooks(const CudaGraphHooks& hooks);
const CudaGraphHooks& GetCudaGraphHooks();

// Why CUDA can or cannot be used in this process, for messages such as a skipped test's: NotFound
// ("CUDA runtime not linked into this binary") until //mimetic/core:cuda_runtime registers, then
// OK (a device is in use) or FailedPrecondition naming what the runtime found.
void SetCudaBackendStatus(absl::Status status);
absl::Status CudaBackendStatus();

using JitFn = std::function<std::vector<Tensor>(absl::Span<const Tensor> inputs)>;

struct JitPlanStats {
  int64_t num_nodes = 0;        // primitive calls replayed per call
  int64_t num_constants = 0;    // tensors captured by value
  int64_t num_buffers = 0;      // distinct intermediate buffers after reuse
  int64_t planned_bytes = 0;    // intermediates + both output sets (+ CUDA graph staging/outputs)
  int64_t unplanned_bytes = 0;  // what eager execution allocates per call (sum of all outputs)
  bool cuda_graph = false;      // replays launch one captured CUDA graph
};

class Jit {
 public:
  explicit Jit(JitFn fn, std::string name = "jit");
  ~Jit();
  Jit(Jit&&) noexcept;
  Jit& operator=(Jit&&) noexcept;

  absl::StatusOr<std::vector<Tensor>> operator()(absl::Span<const Tensor> inputs);

  // How many times the function has been traced (once per distinct signature).
  int num_traces() const { return num_traces_; }
  // Stats of the plan used by the most recent call.
  const JitPlanStats& last_stats() const;
  // A readable listing of the most recent plan: one line per node.
  std::string DebugString() const;

  // Per-op timing of replays (for "where does the time go"): when on, every replayed node is
  // timed and the totals are kept by op name. Off by default (timing costs a clock read per node).
  // Profiling replays CUDA plans node by node (a graph has no per-op times). by_call keys the totals
  // by the whole call instead (op, input shapes, attributes): which matmul of the step is slow.
  void set_profiling(bool on, bool by_call = false) {
    profiling_ = on;
    profile_.by_call = by_call;
  }
  // "op: calls, total ms, share" lines, most expensive first.
  std::string ProfileReport() const;

  // CUDA plans replay as one CUDA graph (default on); off replays them kernel by kernel.
  void set_cuda_graphs(bool on) { cuda_graphs_ = on; }

  struct Plan;
  struct Profile {
    bool by_call = false;
    std::map<std::string, std::pair<int64_t, double>> entries;  // key -> (calls, seconds)
  };

 private:
  JitFn fn_;
  std::string name_;
  int num_traces_ = 0;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  Plan* last_ = nullptr;
  bool profiling_ = false;
  bool cuda_graphs_ = true;
  Profile profile_;
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_JIT_H_
