// The thread-local stack of active tracers. The dispatcher (op.h) reports every primitive call to
// each tracer on the stack: ValueAndGrad's tape and Jit's graph builder are tracers.
//
//   MyTracer tracer;
//   {
//     TraceScope scope(&tracer);   // pushed here, popped at the end of the block
//     Tensor y = ops::Exp(x);      // tracer.Record(exp_op, {x}, {y})
//   }
#ifndef MIMETIC_CORE_TRACE_H_
#define MIMETIC_CORE_TRACE_H_

#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

class Op;

class Tracer {
 public:
  virtual ~Tracer() = default;
  // Called after `op` computed `outputs` from `inputs` (all OK tensors).
  virtual void Record(const std::shared_ptr<const Op>& op, absl::Span<const Tensor> inputs,
                      absl::Span<const Tensor> outputs) = 0;
  // True when reading `tensor` on the host would make the trace wrong (Jit: a traced value).
  virtual bool ForbidsHostRead(const Tensor& tensor) const { return false; }
};

// Innermost last.
const std::vector<Tracer*>& ActiveTracers();

// Pushes a tracer for the lifetime of the scope. Scopes nest strictly.
class TraceScope {
 public:
  explicit TraceScope(Tracer* tracer);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Tracer* tracer_;
};

// Temporarily hides every active tracer (for work that must not be recorded, such as a tape's
// own bookkeeping); restores them when destroyed.
class PauseTracing {
 public:
  PauseTracing();
  ~PauseTracing();
  PauseTracing(const PauseTracing&) = delete;
  PauseTracing& operator=(const PauseTracing&) = delete;

 private:
  std::vector<Tracer*> saved_;
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_TRACE_H_
