// Jit's recorded graph and replay plan (jit.h), shared by jit.cc (trace, plan, replay) and jit_report.cc (its
// debug and profile text). Internal to the jit library.
#ifndef MIMETIC_CORE_JIT_PLAN_H_
#define MIMETIC_CORE_JIT_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mimetic/core/jit.h"
#include "mimetic/core/op.h"

namespace mimetic::core {

// Where a value comes from in a recorded graph.
struct ValueRef {
  enum Kind : uint8_t { kInput, kNode, kConst };
  Kind kind;
  int index;       // input slot, node index or constant index
  int output = 0;  // output number for kNode
};

struct Node {
  OpPtr op;
  std::vector<ValueRef> inputs;
  std::vector<TensorMeta> outputs;
};

struct Jit::Plan {
  std::vector<Node> nodes;
  std::vector<Tensor> constants;
  std::vector<ValueRef> outputs;
  // For each node output: the buffer slot it is written to (or, for views, aliases). slot >= 0: intermediate
  // buffer; slot < 0: -(k+1) = output buffer k.
  std::vector<std::vector<int>> slot;
  // View outputs whose source is a graph input or a constant: source ref instead of a slot.
  std::vector<std::vector<bool>> view_of_external;
  std::vector<std::shared_ptr<Storage>> buffers;
  std::vector<std::vector<std::shared_ptr<Storage>>> output_buffers;  // [k] = {A, B}
  std::vector<TensorMeta> output_metas;
  JitPlanStats stats;

  // CUDA graph replay (see jit.h). graph_eligible: every input and every computing node is on CUDA and the
  // hooks are registered. staging[i]: fixed copy of input i (null when no node reads it); graph_outputs[k]:
  // fixed buffer of output k (null where output_buffers[k] is empty).
  bool any_cuda = false;  // some computing node runs on CUDA (it then needs the
                          // runtime's stream)
  bool graph_eligible = false;
  std::vector<std::shared_ptr<Storage>> staging;
  std::vector<std::shared_ptr<Storage>> graph_outputs;
  void* graph_exec = nullptr;  // cudaGraphExec_t, captured on the first replay
  bool graph_failed = false;   // capture failed once: replay kernel by kernel from then on
  std::string graph_error;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (graph_exec != nullptr && GetCudaGraphHooks().destroy != nullptr)
      GetCudaGraphHooks().destroy(graph_exec);
  }
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_JIT_PLAN_H_
