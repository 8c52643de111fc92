#include "mimetic/core/jit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/jit_plan.h"
#include "mimetic/core/op.h"
#include "mimetic/core/trace.h"

namespace mimetic::core {
namespace {

// Records every primitive call into a graph over the function's inputs.
class GraphBuilder : public Tracer {
 public:
  explicit GraphBuilder(absl::Span<const Tensor> inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      refs_.emplace(inputs[i].id(), ValueRef{ValueRef::kInput, static_cast<int>(i)});
    }
  }

  void Record(const OpPtr& op, absl::Span<const Tensor> inputs, absl::Span<const Tensor> outputs) override {
    Node node{op, {}, {}};
    for (const Tensor& t : inputs) node.inputs.push_back(RefOf(t));
    const int index = static_cast<int>(nodes_.size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      node.outputs.push_back(outputs[j].meta());
      refs_[outputs[j].id()] = ValueRef{ValueRef::kNode, index, static_cast<int>(j)};
    }
    nodes_.push_back(std::move(node));
  }

  bool ForbidsHostRead(const Tensor& t) const override {
    auto it = refs_.find(t.id());
    return it != refs_.end() && it->second.kind != ValueRef::kConst;
  }

  ValueRef RefOf(const Tensor& t) {
    auto it = refs_.find(t.id());
    if (it != refs_.end()) return it->second;
    ValueRef ref{ValueRef::kConst, static_cast<int>(constants_.size())};
    constants_.push_back(t);
    refs_.emplace(t.id(), ref);
    return ref;
  }

  std::vector<Node>& nodes() { return nodes_; }
  std::vector<Tensor>& constants() { return constants_; }

 private:
  absl::flat_hash_map<uint64_t, ValueRef> refs_;
  std::vector<Node> nodes_;
  std::vector<Tensor> constants_;
};

std::string Signature(absl::Span<const Tensor> inputs) {
  std::string sig = BackendName(CpuBackend());
  for (const Tensor& t : inputs) absl::StrAppend(&sig, "|", t.meta().DebugString());
  return sig;
}

}  // namespace

Jit::Jit(JitFn fn, std::string name) : fn_(std::move(fn)), name_(std::move(name)) {}
Jit::~Jit() = default;
Jit::Jit(Jit&&) noexcept = default;
Jit& Jit::operator=(Jit&&) noexcept = default;

const JitPlanStats& Jit::last_stats() const {
  static const JitPlanStats kNone;
  return last_ == nullptr ? kNone : last_->stats;
}

namespace {

// Resolves a view chain to the value that owns storage.
ValueRef RootOf(const std::vector<Node>& nodes, ValueRef ref) {
  while (ref.kind == ValueRef::kNode && nodes[ref.index].op->IsView()) ref = nodes[ref.index].inputs[0];
  return ref;
}

int64_t Key(const ValueRef& r) { return (static_cast<int64_t>(r.index) << 16) | r.output; }

CudaGraphHooks g_cuda_graph_hooks;

absl::Status* BackendStatusSlot() {
  static auto* status = new absl::Status(
      absl::NotFoundError("CUDA runtime not linked into this binary (//mimetic/core:cuda_runtime)"));
  return status;
}

bool HasGraphHooks() {
  const CudaGraphHooks& h = g_cuda_graph_hooks;
  return h.stream != nullptr && h.begin_capture != nullptr && h.end_capture != nullptr &&
         h.launch != nullptr && h.destroy != nullptr && GetCudaMemoryHooks().copy != nullptr;
}

// Runs every node of `plan` in order, reading graph inputs from `inputs` and writing outputs into
// the plan's buffers and `out_storage`; values[i] receives node i's outputs. CUDA nodes run on
// `stream`. `profile` (may be null) accumulates wall time per op name (or per call); CUDA nodes are
// then synchronised, so their time includes their kernels.
absl::Status RunNodes(const Jit::Plan& plan, absl::Span<const Tensor> inputs,
                      const std::vector<std::shared_ptr<Storage>>& out_storage, void* stream,
                      const std::string& name, Jit::Profile* profile,
                      std::vector<std::vector<Tensor>>& values) {
  values.assign(plan.nodes.size(), {});
  auto value_of = [&](const ValueRef& r) -> const Tensor& {
    switch (r.kind) {
      case ValueRef::kInput:
        return inputs[r.index];
      case ValueRef::kConst:
        return plan.constants[r.index];
      case ValueRef::kNode:
        break;
    }
    return values[r.index][r.output];
  };
  ExecContext ctx;
  ctx.backend = CpuBackend();
  std::vector<Tensor> in;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = plan.nodes[i];
    in.clear();
    for (const ValueRef& r : node.inputs) in.push_back(value_of(r));
    std::vector<Tensor>& out = values[i];
    out.reserve(node.outputs.size());
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      std::shared_ptr<Storage> storage;
      if (node.op->IsView() && plan.view_of_external[i][j]) {
        storage = in[0].storage();
      } else {
        const int slot = plan.slot[i][j];
        storage = slot >= 0 ? plan.buffers[slot] : out_storage[-slot - 1];
      }
      out.push_back(Tensor::Wrap(std::move(storage), node.outputs[j]));
    }
    if (node.op->IsView()) continue;
    const Device device = node.outputs.empty() ? Device::kCpu : node.outputs[0].device;
    ExecContext node_ctx = ctx;
    if (device == Device::kCuda) {
      node_ctx.backend = Backend::kCuda;
      node_ctx.cuda_stream = stream;
    }
    // Profiling a CUDA node: drain the stream first and wait for the node's kernels after, so that
    // asynchronous launches do not bill earlier nodes' work to whichever node next blocks.
    const bool sync =
        profile != nullptr && device == Device::kCuda && g_cuda_graph_hooks.synchronize != nullptr;
    if (sync) RETURN_IF_ERROR(g_cuda_graph_hooks.synchronize(stream));
    const auto t0 =
        profile != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    absl::Status status = node.op->Compute(node_ctx, in, out);
    if (sync && status.ok()) status = g_cuda_graph_hooks.synchronize(stream);
    if (profile != nullptr) {
      std::string key = node.op->name();
      if (profile->by_call) {
        std::vector<TensorMeta> metas;
        for (const Tensor& t : in) metas.push_back(t.meta());
        key = DescribeCall(*node.op, metas);
      }
      auto& entry = profile->entries[key];
      ++entry.first;
      entry.second += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (!status.ok()) {
      std::vector<TensorMeta> metas;
      for (const Tensor& t : in) metas.push_back(t.meta());
      return absl::Status(status.code(), absl::StrCat(name, " replay: ", DescribeCall(*node.op, metas), ": ",
                                                      status.message()));
    }
  }
  return absl::OkStatus();
}

// Decides whether `plan` can replay as a CUDA graph and allocates its fixed buffers.
absl::Status PrepareCudaGraph(Jit::Plan& plan, absl::Span<const Tensor> inputs) {
  for (const Node& node : plan.nodes) {
    if (!node.op->IsView() && !node.outputs.empty() && node.outputs[0].device == Device::kCuda)
      plan.any_cuda = true;
  }
  if (!HasGraphHooks()) return absl::OkStatus();
  bool any_kernel = false;
  for (const Tensor& t : inputs) {
    if (t.device() != Device::kCuda) return absl::OkStatus();
  }
  for (const Node& node : plan.nodes) {
    if (node.op->IsView()) continue;
    if (node.outputs.empty()) return absl::OkStatus();
    for (const TensorMeta& m : node.outputs) {
      if (m.device != Device::kCuda) return absl::OkStatus();
    }
    any_kernel = true;
  }
  if (!any_kernel) return absl::OkStatus();
  plan.staging.assign(inputs.size(), nullptr);
  for (const Node& node : plan.nodes) {
    for (const ValueRef& r : node.inputs) {
      if (r.kind != ValueRef::kInput || plan.staging[r.index] != nullptr) continue;
      ASSIGN_OR_RETURN(plan.staging[r.index], Storage::Allocate(inputs[r.index].bytes(), Device::kCuda));
      plan.stats.planned_bytes += inputs[r.index].bytes();
    }
  }
  plan.graph_outputs.assign(plan.output_buffers.size(), nullptr);
  for (size_t k = 0; k < plan.output_buffers.size(); ++k) {
    if (plan.output_buffers[k].empty()) continue;
    const size_t bytes = plan.output_buffers[k][0]->bytes();
    ASSIGN_OR_RETURN(plan.graph_outputs[k], Storage::Allocate(bytes, Device::kCuda));
    plan.stats.planned_bytes += bytes;
  }
  plan.graph_eligible = true;
  return absl::OkStatus();
}

// Captures every node of `plan` into a CUDA graph (nothing runs during capture). Returns a node's
// error when a kernel failed while the capture itself was sound; a failed capture instead marks
// the plan graph_failed (the caller then replays kernel by kernel, which reports real errors).
absl::Status CaptureCudaGraph(Jit::Plan& plan, absl::Span<const Tensor> inputs, void* stream,
                              const std::string& name) {
  const CudaGraphHooks& hooks = g_cuda_graph_hooks;
  std::vector<Tensor> staged(inputs.begin(), inputs.end());
  for (size_t i = 0; i < staged.size(); ++i) {
    if (plan.staging[i] != nullptr) staged[i] = Tensor::Wrap(plan.staging[i], inputs[i].meta());
  }
  auto fail = [&](const absl::Status& why) {
    plan.graph_failed = true;
    plan.graph_error = why.ToString();
    std::fprintf(stderr, "%s: CUDA graph capture failed (%s); replaying kernel by kernel\n", name.c_str(),
                 plan.graph_error.c_str());
  };
  absl::Status begin = hooks.begin_capture(stream);
  if (!begin.ok()) {
    fail(begin);
    return absl::OkStatus();
  }
  std::vector<std::vector<Tensor>> values;
  const absl::Status run = RunNodes(plan, staged, plan.graph_outputs, stream, name, nullptr, values);
  values.clear();
  absl::StatusOr<void*> exec = hooks.end_capture(stream);
  if (!exec.ok()) {
    fail(run.ok() ? exec.status()
                  : absl::Status(exec.status().code(), absl::StrCat(exec.status().message(),
                                                                    "; while capturing: ", run.message())));
    return absl::OkStatus();
  }
  if (!run.ok()) {
    hooks.destroy(*exec);
    return run;
  }
  plan.graph_exec = *exec;
  plan.stats.cuda_graph = true;
  return absl::OkStatus();
}

}  // namespace

void SetCudaGraphHooks(const CudaGraphHooks& hooks) { g_cuda_graph_hooks = hooks; }
const CudaGraphHooks& GetCudaGraphHooks() { return g_cuda_graph_hooks; }
void SetCudaBackendStatus(absl::Status status) { *BackendStatusSlot() = std::move(status); }
absl::Status CudaBackendStatus() { return *BackendStatusSlot(); }

namespace {

// ---- The steps of Jit::operator(): trace, plan buffers, pick output buffers, replay. ----

absl::Status CheckInputs(const std::string& name, absl::Span<const Tensor> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].ok()) {
      return absl::Status(inputs[i].status().code(),
                          absl::StrCat(name, ": input ", i, " is an error: ", inputs[i].status().message()));
    }
  }
  return absl::OkStatus();
}

// Runs `fn` eagerly once on fresh identities of `inputs`, recording every primitive call into a new
// plan's nodes, constants and outputs. `eager` receives the results of that run.
absl::StatusOr<std::unique_ptr<Jit::Plan>> Trace(const JitFn& fn, const std::string& name,
                                                 absl::Span<const Tensor> inputs,
                                                 std::vector<Tensor>* eager) {
  // Each slot gets its own identity (same storage, fresh id): the caller may pass one tensor in
  // two slots now (e.g. zero moments shared by m and v) and different tensors later.
  std::vector<Tensor> slots;
  slots.reserve(inputs.size());
  for (const Tensor& t : inputs) slots.push_back(Tensor::Wrap(t.storage(), t.meta()));
  GraphBuilder builder(slots);
  {
    TraceScope scope(&builder);
    *eager = fn(slots);
  }
  for (size_t i = 0; i < eager->size(); ++i) {
    if (!(*eager)[i].ok()) {
      return absl::Status((*eager)[i].status().code(), absl::StrCat(name, ": tracing failed at output ", i,
                                                                    ": ", (*eager)[i].status().message()));
    }
  }
  auto plan = std::make_unique<Jit::Plan>();
  for (const Tensor& t : *eager) plan->outputs.push_back(builder.RefOf(t));
  plan->nodes = std::move(builder.nodes());
  plan->constants = std::move(builder.constants());
  return plan;
}

// Gives every node output a buffer: graph outputs get two (used alternately), views alias their
// source, and intermediates share buffers by liveness (a buffer is free once its last reader ran).
absl::Status PlanBuffers(Jit::Plan& plan, absl::Span<const Tensor> eager) {
  const std::vector<Node>& nodes = plan.nodes;
  const int n = static_cast<int>(nodes.size());
  constexpr int kForever = std::numeric_limits<int>::max();
  absl::flat_hash_map<int64_t, int> last_use;   // root node output -> last reading node
  absl::flat_hash_map<int64_t, int> output_of;  // root node output -> graph output index
  for (int i = 0; i < n; ++i) {
    for (const ValueRef& in : nodes[i].inputs) {
      ValueRef root = RootOf(nodes, in);
      if (root.kind == ValueRef::kNode) last_use[Key(root)] = std::max(last_use[Key(root)], i);
    }
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    ValueRef root = RootOf(nodes, plan.outputs[k]);
    if (root.kind != ValueRef::kNode) continue;
    last_use[Key(root)] = kForever;
    // A value returned twice (or through a view) shares the first output's buffers.
    output_of.emplace(Key(root), static_cast<int>(k));
  }
  std::vector<std::pair<size_t, int>> free_list;  // (capacity, slot)
  std::vector<std::vector<int>> release_at(n);
  plan.slot.resize(n);
  plan.view_of_external.resize(n);
  plan.output_metas.resize(plan.outputs.size());
  plan.output_buffers.resize(plan.outputs.size());
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes[i];
    plan.slot[i].assign(node.outputs.size(), 0);
    plan.view_of_external[i].assign(node.outputs.size(), false);
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      plan.stats.unplanned_bytes += node.op->IsView() ? 0 : node.outputs[j].bytes();
      if (node.op->IsView()) {
        ValueRef root = RootOf(nodes, node.inputs[0]);
        if (root.kind != ValueRef::kNode) {
          plan.view_of_external[i][j] = true;
        } else {
          plan.slot[i][j] = plan.slot[root.index][root.output];
        }
        continue;
      }
      const int64_t key = Key(ValueRef{ValueRef::kNode, i, static_cast<int>(j)});
      auto out_it = output_of.find(key);
      if (out_it != output_of.end()) {
        const int k = out_it->second;
        plan.slot[i][j] = -(k + 1);
        for (int copy = 0; copy < 2; ++copy) {
          ASSIGN_OR_RETURN(std::shared_ptr<Storage> s,
                           Storage::Allocate(node.outputs[j].bytes(), node.outputs[j].device));
          plan.stats.planned_bytes += node.outputs[j].bytes();
          plan.output_buffers[k].push_back(std::move(s));
        }
        continue;
      }
      const size_t need = node.outputs[j].bytes();
      auto best = free_list.end();
      for (auto it = free_list.begin(); it != free_list.end(); ++it) {
        if (it->first >= need && (best == free_list.end() || it->first < best->first)) best = it;
      }
      int slot;
      if (best != free_list.end()) {
        slot = best->second;
        free_list.erase(best);
      } else {
        slot = static_cast<int>(plan.buffers.size());
        ASSIGN_OR_RETURN(std::shared_ptr<Storage> s, Storage::Allocate(need, node.outputs[j].device));
        plan.stats.planned_bytes += need;
        plan.buffers.push_back(std::move(s));
      }
      plan.slot[i][j] = slot;
      auto lu = last_use.find(key);
      // A value nobody reads is released right after its node runs.
      const int release = lu == last_use.end() ? i : lu->second;
      if (release != kForever) release_at[release].push_back(slot);
    }
    // Release after this node's outputs are placed, so outputs never alias its inputs.
    for (int slot : release_at[i]) free_list.emplace_back(plan.buffers[slot]->bytes(), slot);
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) plan.output_metas[k] = eager[k].meta();
  plan.stats.num_nodes = n;
  plan.stats.num_constants = static_cast<int64_t>(plan.constants.size());
  plan.stats.num_buffers = static_cast<int64_t>(plan.buffers.size());
  return absl::OkStatus();
}

// For each output, a buffer of its pair that the caller no longer holds (a third when it holds both).
absl::StatusOr<std::vector<std::shared_ptr<Storage>>> PickOutputBuffers(Jit::Plan& plan) {
  std::vector<std::shared_ptr<Storage>> out_storage(plan.output_buffers.size());
  for (size_t k = 0; k < plan.output_buffers.size(); ++k) {
    auto& pair = plan.output_buffers[k];
    if (pair.empty()) continue;
    if (pair[0].use_count() == 1) {
      out_storage[k] = pair[0];
    } else if (pair[1].use_count() == 1) {
      std::swap(pair[0], pair[1]);
      out_storage[k] = pair[0];
    } else {
      ASSIGN_OR_RETURN(pair[1], Storage::Allocate(pair[1]->bytes(), pair[1]->device()));
      std::swap(pair[0], pair[1]);
      out_storage[k] = pair[0];
    }
  }
  return out_storage;
}

// CUDA graph replay: inputs -> staging, the graph, fixed outputs -> this call's output buffers.
// Sets `replayed` false (and returns no error) when capturing failed, so the caller replays node
// by node.
absl::StatusOr<std::vector<Tensor>> ReplayCudaGraph(Jit::Plan& plan, absl::Span<const Tensor> inputs,
                                                    const std::vector<std::shared_ptr<Storage>>& out_storage,
                                                    const std::string& name, bool* replayed) {
  *replayed = false;
  const CudaGraphHooks& hooks = g_cuda_graph_hooks;
  const CudaMemoryHooks& memory = GetCudaMemoryHooks();
  void* stream = hooks.stream();
  for (size_t i = 0; i < plan.staging.size(); ++i) {
    if (plan.staging[i] == nullptr || inputs[i].bytes() == 0) continue;
    RETURN_IF_ERROR(memory.copy(plan.staging[i]->data(), Device::kCuda, inputs[i].storage()->data(),
                                Device::kCuda, inputs[i].bytes()));
  }
  if (plan.graph_exec == nullptr) RETURN_IF_ERROR(CaptureCudaGraph(plan, inputs, stream, name));
  if (plan.graph_exec != nullptr) {
    absl::Status launched = hooks.launch(plan.graph_exec, stream);
    if (!launched.ok()) {
      return absl::Status(launched.code(),
                          absl::StrCat(name, " replay: CUDA graph launch: ", launched.message()));
    }
    for (size_t k = 0; k < plan.graph_outputs.size(); ++k) {
      if (plan.graph_outputs[k] == nullptr || plan.graph_outputs[k]->bytes() == 0) continue;
      RETURN_IF_ERROR(memory.copy(out_storage[k]->data(), Device::kCuda, plan.graph_outputs[k]->data(),
                                  Device::kCuda, plan.graph_outputs[k]->bytes()));
    }
    std::vector<Tensor> result;
    result.reserve(plan.outputs.size());
    for (const ValueRef& r : plan.outputs) {
      if (r.kind == ValueRef::kInput) {
        result.push_back(inputs[r.index]);
      } else if (r.kind == ValueRef::kConst) {
        result.push_back(plan.constants[r.index]);
      } else if (plan.view_of_external[r.index][r.output]) {
        // A view of an input or constant: wrap the caller's storage, never the staging buffer.
        const ValueRef root = RootOf(plan.nodes, r);
        const Tensor& source =
            root.kind == ValueRef::kInput ? inputs[root.index] : plan.constants[root.index];
        result.push_back(Tensor::Wrap(source.storage(), plan.nodes[r.index].outputs[r.output]));
      } else {
        const int slot = plan.slot[r.index][r.output];
        MIMETIC_CHECK(slot < 0) << "graph output without an output buffer";
        result.push_back(Tensor::Wrap(out_storage[-slot - 1], plan.nodes[r.index].outputs[r.output]));
      }
    }
    *replayed = true;
    return result;
  }
  return std::vector<Tensor>();
}

// Node-by-node replay on the host or, for CUDA plans, on the runtime's stream.
absl::StatusOr<std::vector<Tensor>> ReplayNodes(const Jit::Plan& plan, absl::Span<const Tensor> inputs,
                                                const std::vector<std::shared_ptr<Storage>>& out_storage,
                                                const std::string& name, Jit::Profile* profile) {
  const CudaGraphHooks& hooks = g_cuda_graph_hooks;
  // Only CUDA plans ask for the stream: a CPU plan in a CUDA build never creates a CUDA context.
  void* stream = plan.any_cuda && hooks.stream != nullptr ? hooks.stream() : nullptr;
  std::vector<std::vector<Tensor>> values;
  RETURN_IF_ERROR(RunNodes(plan, inputs, out_storage, stream, name, profile, values));
  std::vector<Tensor> result;
  result.reserve(plan.outputs.size());
  for (const ValueRef& r : plan.outputs) {
    switch (r.kind) {
      case ValueRef::kInput:
        result.push_back(inputs[r.index]);
        break;
      case ValueRef::kConst:
        result.push_back(plan.constants[r.index]);
        break;
      case ValueRef::kNode:
        result.push_back(values[r.index][r.output]);
        break;
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Jit::operator()(absl::Span<const Tensor> inputs) {
  RETURN_IF_ERROR(CheckInputs(name_, inputs));
  const std::string sig = Signature(inputs);
  auto found = plans_.find(sig);
  if (found == plans_.end()) {
    std::vector<Tensor> eager;
    ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Trace(fn_, name_, inputs, &eager));
    ++num_traces_;
    RETURN_IF_ERROR(PlanBuffers(*plan, eager));
    RETURN_IF_ERROR(PrepareCudaGraph(*plan, inputs));
    last_ = plan.get();
    plans_.emplace(sig, std::move(plan));
    // The first call returns the eager results: replay is tested to equal them bit for bit.
    return eager;
  }
  Plan& plan = *found->second;
  last_ = &plan;
  ASSIGN_OR_RETURN(std::vector<std::shared_ptr<Storage>> out_storage, PickOutputBuffers(plan));
  if (plan.graph_eligible && !plan.graph_failed && cuda_graphs_ && !profiling_) {
    bool replayed = false;
    ASSIGN_OR_RETURN(std::vector<Tensor> result,
                     ReplayCudaGraph(plan, inputs, out_storage, name_, &replayed));
    if (replayed) return result;
    // Capture failed (plan.graph_failed): fall through to kernel-by-kernel replay.
  }
  return ReplayNodes(plan, inputs, out_storage, name_, profiling_ ? &profile_ : nullptr);
}

}  // namespace mimetic::core
