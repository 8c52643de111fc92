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
#ifndef MIMETIC_CORE_JIT_H_
#define MIMETIC_CORE_JIT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

using JitFn = std::function<std::vector<Tensor>(absl::Span<const Tensor> inputs)>;

struct JitPlanStats {
  int64_t num_nodes = 0;         // primitive calls replayed per call
  int64_t num_constants = 0;     // tensors captured by value
  int64_t num_buffers = 0;       // distinct intermediate buffers after reuse
  int64_t planned_bytes = 0;     // intermediate buffers + both output buffer sets
  int64_t unplanned_bytes = 0;   // what eager execution allocates per call (sum of all outputs)
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
  void set_profiling(bool on) { profiling_ = on; }
  // "op: calls, total ms, share" lines, most expensive first.
  std::string ProfileReport() const;

  struct Plan;

 private:
  JitFn fn_;
  std::string name_;
  int num_traces_ = 0;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  Plan* last_ = nullptr;
  bool profiling_ = false;
  std::map<std::string, std::pair<int64_t, double>> profile_;  // op name -> (calls, seconds)
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_JIT_H_
