#include "mimetic/core/autodiff.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/op.h"
#include "mimetic/core/trace.h"

namespace mimetic::core {
namespace {

bool IsFloatType(DType d) { return d == DType::kF32 || d == DType::kF64; }

// Records the calls whose inputs depend on a watched tensor.
class Tape : public Tracer {
 public:
  struct Node {
    OpPtr op;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
  };

  // Only floating tensors carry gradients; integer values (ids, argmax) are never active.
  void Watch(const Tensor& t) {
    if (IsFloatType(t.dtype())) active_.insert(t.id());
  }

  void Record(const OpPtr& op, absl::Span<const Tensor> inputs, absl::Span<const Tensor> outputs) override {
    bool depends = false;
    for (const Tensor& t : inputs) depends = depends || active_.contains(t.id());
    if (!depends) return;
    for (const Tensor& t : outputs) {
      if (IsFloatType(t.dtype())) active_.insert(t.id());
    }
    nodes_.push_back(Node{op, std::vector<Tensor>(inputs.begin(), inputs.end()),
                          std::vector<Tensor>(outputs.begin(), outputs.end())});
  }

  bool IsActive(const Tensor& t) const { return active_.contains(t.id()); }

  // Cotangents of `wrt`, seeded with `seeds` for `outputs`. Runs with the tape itself inactive,
  // so the VJP primitives are seen only by outer tracers.
  absl::StatusOr<std::vector<Tensor>> Backward(absl::Span<const Tensor> outputs, absl::Span<const Tensor> seeds,
                                               absl::Span<const Tensor> wrt) const {
    absl::flat_hash_map<uint64_t, Tensor> cot;
    auto add = [&cot](const Tensor& target, const Tensor& g) {
      auto it = cot.find(target.id());
      if (it == cot.end()) {
        cot.emplace(target.id(), g);
      } else {
        it->second = Accumulate(it->second, g);
      }
    };
    for (size_t i = 0; i < outputs.size(); ++i) add(outputs[i], seeds[i]);
    for (auto node = nodes_.rbegin(); node != nodes_.rend(); ++node) {
      bool any = false;
      for (const Tensor& o : node->outputs) any = any || cot.contains(o.id());
      if (!any) continue;
      std::vector<Tensor> out_grads;
      out_grads.reserve(node->outputs.size());
      for (size_t i = 0; i < node->outputs.size(); ++i) {
        const Tensor& o = node->outputs[i];
        auto it = cot.find(o.id());
        if (it != cot.end()) {
          out_grads.push_back(it->second);
        } else {  // zeros, or nothing where the VJP never reads them
          out_grads.push_back(node->op->VjpReadsOutputGrad(i) ? Fill(o.meta(), 0.0) : Tensor());
        }
      }
      std::vector<Tensor> in_grads = node->op->Vjp(node->inputs, node->outputs, out_grads);
      if (in_grads.size() != node->inputs.size()) {
        return absl::InternalError(absl::StrCat("Vjp of '", node->op->name(), "' returned ", in_grads.size(),
                                                " cotangents for ", node->inputs.size(), " inputs"));
      }
      for (size_t i = 0; i < in_grads.size(); ++i) {
        const Tensor& in = node->inputs[i];
        if (!IsActive(in)) continue;
        const Tensor& g = in_grads[i];
        if (!g.ok()) {
          // An empty Tensor() marks a non-differentiable input (indices): only fine if inactive.
          return absl::Status(g.status().code(), absl::StrCat("gradient of '", node->op->name(), "' input ", i,
                                                              ": ", g.status().message()));
        }
        if (g.meta() != in.meta()) {
          return absl::InternalError(absl::StrCat("Vjp of '", node->op->name(), "' gave a ",
                                                  g.meta().DebugString(), " cotangent for a ",
                                                  in.meta().DebugString(), " input ", i));
        }
        add(in, g);
      }
    }
    std::vector<Tensor> result;
    result.reserve(wrt.size());
    for (const Tensor& w : wrt) {
      auto it = cot.find(w.id());
      result.push_back(it != cot.end() ? it->second : Fill(w.meta(), 0.0));
      RETURN_IF_ERROR(result.back().status());
    }
    return result;
  }

 private:
  absl::flat_hash_set<uint64_t> active_;
  std::vector<Node> nodes_;
};

bool IsFloat(DType d) { return d == DType::kF32 || d == DType::kF64; }

}  // namespace

absl::StatusOr<ValueAndGradResult> ValueAndGradFn::operator()(const ParamTree& params,
                                                              absl::Span<const Tensor> inputs) const {
  Tape tape;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& leaf = params.Leaves()[i];
    if (!IsFloat(leaf.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("ValueAndGrad: parameter '", params.Paths()[i], "' is ",
                                                     leaf.meta().DebugString(), "; expected f32 or f64"));
    }
    tape.Watch(leaf);
  }
  Tensor value;
  {
    TraceScope scope(&tape);
    value = f_(params, inputs);
  }
  RETURN_IF_ERROR(value.status());
  if (value.numel() != 1 || !IsFloat(value.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat("ValueAndGrad: the loss is a ", value.meta().DebugString(),
                                                   " tensor; expected a scalar (one f32/f64 element)"));
  }
  Tensor seed = Fill(value.meta(), 1.0);
  ASSIGN_OR_RETURN(std::vector<Tensor> grads, tape.Backward({value}, {seed}, params.Leaves()));
  ASSIGN_OR_RETURN(ParamTree grad_tree, params.WithLeaves(std::move(grads)));
  return ValueAndGradResult{value, grad_tree};
}

absl::StatusOr<std::vector<Tensor>> Vjp(const std::function<std::vector<Tensor>(absl::Span<const Tensor>)>& f,
                                        absl::Span<const Tensor> wrt, absl::Span<const Tensor> seeds) {
  Tape tape;
  for (const Tensor& w : wrt) {
    RETURN_IF_ERROR(w.status());
    tape.Watch(w);
  }
  std::vector<Tensor> outputs;
  {
    TraceScope scope(&tape);
    outputs = f(wrt);
  }
  if (outputs.size() != seeds.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Vjp: f returned ", outputs.size(), " outputs but ", seeds.size(), " seeds were given"));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    RETURN_IF_ERROR(outputs[i].status());
    if (outputs[i].meta() != seeds[i].meta()) {
      return absl::InvalidArgumentError(absl::StrCat("Vjp: output ", i, " is ", outputs[i].meta().DebugString(),
                                                     " but its seed is ", seeds[i].meta().DebugString()));
    }
  }
  return tape.Backward(outputs, seeds, wrt);
}

}  // namespace mimetic::core
